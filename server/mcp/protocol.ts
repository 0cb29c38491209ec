// JSON-RPC 2.0 as MCP uses it: message classification, protocol-version negotiation and dispatch
// of one HTTP body (a single message or, for protocol versions before 2025-06-18, a batch).
// Nothing here knows about HTTP, tokens or tools; route.ts adapts it to Koa and tools.ts
// supplies the methods.

/**
 * The protocol versions this server speaks, newest first: the stateless revision 2026-07-28 plus
 * every version the installed official TypeScript SDK (@modelcontextprotocol/sdk) supports; a
 * test keeps the lists in step.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  '2026-07-28',
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
/** The newest version that has the initialize handshake: what initialize offers an unknown version. */
const LATEST_HANDSHAKE_VERSION = '2025-11-25';
/** What a request without an MCP-Protocol-Version header is taken to speak (Streamable HTTP spec). */
export const DEFAULT_HEADER_PROTOCOL_VERSION = '2025-03-26';
/**
 * From this revision on MCP is stateless (SEP-2575): no initialize handshake; every request
 * carries its protocol version, client info and capabilities in params._meta, and the
 * MCP-Protocol-Version header must equal that version. server/discover replaces initialize for
 * discovery, and ping is gone.
 */
const STATELESS_SINCE = '2026-07-28';
const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** JSON-RPC batching was removed from MCP in this revision; earlier revisions may send batches. */
const BATCHLESS_SINCE = '2025-06-18';
/** Largest batch accepted from a pre-2025-06-18 client. */
export const MAX_BATCH = 50;

export const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
/**
 * 2026-07-28: the request's protocol version is not one this server speaks (HTTP 400). The
 * revision's schema renumbered it from the draft's -32004 into the range reserved for MCP.
 */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/**
 * 2026-07-28 (Streamable HTTP, Server Validation): a mirror header (MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name) is missing, malformed or differs from the body (HTTP 400).
 */
const HEADER_MISMATCH = -32020;
/** 2026-07-28: every result says what it is; this server never asks for input (no MRTR). */
export const RESULT_TYPE_COMPLETE = 'complete';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/**
 * 2026-07-28 caching hints (CacheableResult) of server/discover and tools/list: both are the same
 * for every caller and change only with a new release of the service, so any cache may share them
 * ("public") for five minutes, which is how long a release takes to reach every client.
 */
export const LIST_TTL_MS = 300_000;
export const LIST_CACHE_SCOPE = 'public';

export type JsonRpcId = string | number;

interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcError };

type Message =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown> | undefined }
  | { kind: 'notification'; method: string }
  /** A response to a server-to-client request; this server sends none, so it is acknowledged. */
  | { kind: 'response' }
  | { kind: 'invalid'; id: JsonRpcId | null; error: JsonRpcError };

export function isSupportedVersion(v: string): boolean {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/**
 * Lifecycle rule of initialize: answer with the client's version when supported, else with our
 * latest that still has initialize (a client that knows no version of ours speaks the handshake).
 */
export function negotiateVersion(requested: string): string {
  return isSupportedVersion(requested) ? requested : LATEST_HANDSHAKE_VERSION;
}

export function isStateless(version: string): boolean {
  return version >= STATELESS_SINCE;
}

/** The Streamable HTTP headers that mirror a 2026-07-28 request's body (standard request headers). */
export interface MirrorHeaders {
  /** MCP-Protocol-Version ('' when absent). */
  version: string;
  /** Mcp-Method ('' when absent). */
  method: string;
  /** Mcp-Name ('' when absent). */
  name: string;
}

/** Methods whose Mcp-Name header mirrors params.name, or params.uri. */
const NAMED_BY = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
]);

/**
 * A header value as the revision encodes it: plain visible ASCII (and inner spaces), or
 * `=?base64?<UTF-8 in Base64>?=`. Null when it is malformed.
 */
function decodeHeaderValue(value: string): string | null {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (m) {
    if (m[1].length % 4 !== 0) return null;
    const bytes = Buffer.from(m[1], 'base64');
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
      return text.decode(bytes);
    } catch {
      return null;
    }
  }
  return /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/.test(value) ? value : null;
}

/**
 * The stateless revision's per-request checks (SEP-2575, Streamable HTTP "Server Validation") on
 * one parsed HTTP body, given its mirror headers: a request whose params._meta names a protocol
 * version must name a supported one (-32022 with the supported versions); the MCP-Protocol-Version,
 * Mcp-Method and (for tools/call, prompts/get, resources/read) Mcp-Name headers must be present and
 * equal the body's values (-32020 HeaderMismatch); _meta must carry the client's info and
 * capabilities (-32602). A request sent with a stateless header must carry that _meta. Answers
 * the refusal (HTTP 400), or null when the request may proceed.
 */
export function statelessRefusal(body: unknown, headers: MirrorHeaders): Dispatched | null {
  const msg = classify(body);
  if (msg.kind !== 'request') return null;
  const meta = msg.params?._meta;
  const metaVersion = isPlainObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  if (metaVersion === undefined && !isStateless(headers.version)) return null;
  const refuse = (code: number, message: string, data?: unknown) => ({
    status: 400,
    body: errorResponse(msg.id, code, message, data),
  });
  if (typeof metaVersion !== 'string') {
    return refuse(INVALID_PARAMS, `params._meta must carry ${META_PROTOCOL_VERSION} (MCP ${STATELESS_SINCE}).`);
  }
  if (!isSupportedVersion(metaVersion) || !isStateless(metaVersion)) {
    // UnsupportedProtocolVersionError's data: every version this server speaks (the older ones
    // through initialize), as the revision's schema names them.
    return refuse(UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      requested: metaVersion,
    });
  }
  if (headers.version !== metaVersion) {
    return refuse(
      HEADER_MISMATCH,
      `The MCP-Protocol-Version header (${headers.version || 'absent'}) must equal params._meta's ${META_PROTOCOL_VERSION} (${metaVersion}).`,
    );
  }
  if (headers.method !== msg.method) {
    return refuse(
      HEADER_MISMATCH,
      `The Mcp-Method header (${headers.method ? JSON.stringify(headers.method) : 'absent'}) must equal the request's method (${JSON.stringify(msg.method)}).`,
    );
  }
  const nameKey = NAMED_BY.get(msg.method);
  const bodyName = nameKey ? msg.params?.[nameKey] : undefined;
  if (typeof bodyName === 'string') {
    if (!headers.name) return refuse(HEADER_MISMATCH, `The Mcp-Name header must carry params.${nameKey}.`);
    const decoded = decodeHeaderValue(headers.name);
    if (decoded === null) return refuse(HEADER_MISMATCH, 'The Mcp-Name header is malformed.');
    if (decoded !== bodyName) {
      return refuse(HEADER_MISMATCH, `The Mcp-Name header must equal params.${nameKey} (${JSON.stringify(bodyName)}).`);
    }
  }
  const m = meta as Record<string, unknown>;
  const missing = [META_CLIENT_INFO, META_CLIENT_CAPABILITIES].filter((k) => !isPlainObject(m[k]));
  if (missing.length) return refuse(INVALID_PARAMS, `params._meta must carry ${missing.join(' and ')}.`);
  return null;
}

/** Whether a client speaking `version` may send JSON-RPC batches (ISO dates compare as strings). */
function batchesAllowed(version: string): boolean {
  return version < BATCHLESS_SINCE;
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcError = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

function resultResponse(id: JsonRpcId, result: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validId(v: unknown): v is JsonRpcId {
  return (typeof v === 'string' && v.length <= 256) || (typeof v === 'number' && Number.isFinite(v));
}

/** Classifies one element of the HTTP body. */
export function classify(value: unknown): Message {
  if (!isPlainObject(value)) {
    return {
      kind: 'invalid',
      id: null,
      error: { code: INVALID_REQUEST, message: 'A JSON-RPC message must be an object.' },
    };
  }
  const hasId = 'id' in value;
  const id = hasId && validId(value.id) ? value.id : null;
  const invalid = (message: string): Message => ({ kind: 'invalid', id, error: { code: INVALID_REQUEST, message } });
  if (value.jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0".');
  if (!('method' in value) && ('result' in value || 'error' in value)) {
    return hasId ? { kind: 'response' } : invalid('A response needs an id.');
  }
  if (typeof value.method !== 'string' || value.method === '') return invalid('method must be a non-empty string.');
  if (hasId && !validId(value.id)) return invalid('id must be a string or a number (never null).');
  if ('params' in value && value.params !== undefined && !isPlainObject(value.params)) {
    // MCP only uses by-name params; by-position (an array) or a scalar is malformed here.
    if (!hasId) return { kind: 'notification', method: value.method };
    return { kind: 'invalid', id, error: { code: INVALID_PARAMS, message: 'params must be an object.' } };
  }
  if (!hasId) return { kind: 'notification', method: value.method };
  return {
    kind: 'request',
    id: value.id as JsonRpcId,
    method: value.method,
    params: value.params as Record<string, unknown> | undefined,
  };
}

/** Thrown by a method to answer with a JSON-RPC error instead of a result. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Methods answer a request with a result or throw RpcError; any other throw is the caller's. */
export type MethodHandler = (params: Record<string, unknown>, ctx: { inBatch: boolean }) => Promise<unknown>;

export interface Dispatched {
  /** HTTP status: 202 when nothing needs an answer, 400 for a body that is not JSON-RPC, else 200. */
  status: number;
  body?: JsonRpcResponse | JsonRpcResponse[];
}

/**
 * Answers one parsed HTTP body. `version` is the protocol version the request speaks (its
 * MCP-Protocol-Version header or the transport default); it decides whether batches are allowed.
 */
export async function dispatch(
  body: unknown,
  version: string,
  methods: Record<string, MethodHandler>,
): Promise<Dispatched> {
  if (Array.isArray(body)) {
    if (!batchesAllowed(version)) {
      return {
        status: 400,
        body: errorResponse(
          null,
          INVALID_REQUEST,
          `JSON-RPC batches are not part of MCP ${version}; send one message per POST.`,
        ),
      };
    }
    if (body.length === 0)
      return { status: 400, body: errorResponse(null, INVALID_REQUEST, 'An empty batch is not a request.') };
    if (body.length > MAX_BATCH) {
      return {
        status: 400,
        body: errorResponse(null, INVALID_REQUEST, `A batch holds at most ${MAX_BATCH} messages.`),
      };
    }
    const out: JsonRpcResponse[] = [];
    // In order, one at a time: tool calls share the organization's rate window.
    for (const item of body) {
      const msg = classify(item);
      if (msg.kind === 'request' && msg.method === 'initialize') {
        out.push(errorResponse(msg.id, INVALID_REQUEST, 'initialize must not be part of a batch.'));
        continue;
      }
      const answer = await answerOne(msg, methods, true);
      if (answer) out.push(answer);
    }
    return out.length ? { status: 200, body: out } : { status: 202 };
  }
  const msg = classify(body);
  if (msg.kind === 'invalid' && msg.error.code === INVALID_REQUEST)
    return { status: 400, body: errorResponse(msg.id, msg.error.code, msg.error.message) };
  const answer = await answerOne(msg, methods, false);
  return answer ? { status: 200, body: answer } : { status: 202 };
}

async function answerOne(
  msg: Message,
  methods: Record<string, MethodHandler>,
  inBatch: boolean,
): Promise<JsonRpcResponse | null> {
  switch (msg.kind) {
    case 'invalid':
      return errorResponse(msg.id, msg.error.code, msg.error.message);
    case 'notification':
    case 'response':
      // notifications/initialized, notifications/cancelled and client responses need no answer.
      // A request-method sent as a notification is not executed: nobody could read its result.
      return null;
    case 'request': {
      const method = Object.hasOwn(methods, msg.method) ? methods[msg.method] : undefined;
      if (!method) return errorResponse(msg.id, METHOD_NOT_FOUND, `Method not found: ${msg.method}.`);
      try {
        return resultResponse(msg.id, await method(msg.params ?? {}, { inBatch }));
      } catch (err) {
        if (err instanceof RpcError) return errorResponse(msg.id, err.code, err.message, err.data);
        throw err;
      }
    }
  }
}
