// POST /mcp: MCP's Streamable HTTP transport without sessions, answered as JSON. The token is
// authenticated once per HTTP request (app.principals); 401, 403 (api_access, mcp.access) and 429 are thrown as
// ApiError and rendered by the API's errorHandler, so they are byte for byte REST's answers.
// Only tools/call is admitted against the rate window and metered; initialize, ping and
// tools/list are free.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { mcpOnlyOperations, operations } from '../all-operations.js';
import { readJsonBody } from '../http-common/body.js';
import type { RequestState } from '../http-common/middleware.js';
import { rateHeaders } from '../metering/admission.js';
import { assertApiAccess } from '../operations/execute.js';
import { API_VERSION } from '../operations/operation.js';
import { bearerChallenge, MCP_RESOURCE_PATH, resourceUri } from '../oauth/metadata.js';
import {
  classify,
  DEFAULT_HEADER_PROTOCOL_VERSION,
  dispatch,
  errorResponse,
  INVALID_PARAMS,
  isStateless,
  isSupportedVersion,
  METHOD_NOT_FOUND,
  negotiateVersion,
  statelessRefusal,
  PARSE_ERROR,
  RpcError,
  SUPPORTED_PROTOCOL_VERSIONS,
  LIST_CACHE_SCOPE,
  LIST_TTL_MS,
  META_SERVER_INFO,
  RESULT_TYPE_COMPLETE,
  type JsonRpcId,
  type MethodHandler,
} from './protocol.js';
import { LISTEN_METHOD, openListenStream, readFilter } from './subscriptions.js';
import type { Tool } from './catalog.js';
import { buildTools, callTool, describeTool } from './tools.js';

const MCP_PATH = MCP_RESOURCE_PATH;
const SERVER_INFO = { name: 'qr-service', title: 'QR code service', version: API_VERSION };

const INSTRUCTIONS =
  'Tools manage the dynamic QR codes, brands, domains and styles of the token’s organization and read ' +
  'its analytics. Each tool answers with the JSON of the matching REST endpoint. codes_delete, ' +
  'codes_bulk_update_status and codes_bulk_create above 10 rows first return a preview with a ' +
  'confirmation_id; repeat the call with the same arguments plus confirm: true and that ' +
  'confirmation_id within 300 seconds to execute.';

/**
 * Whether a request carrying this Origin may call: only a configured origin (MCP_ALLOWED_ORIGINS,
 * none by default). The Host header proves nothing: after DNS rebinding a hostile page's Origin
 * and Host name the same attacker host.
 */
function originAllowed(origin: string, allowed: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && allowed.includes(parsed.origin);
}

/** Whether an Accept header lets us answer application/json (absent means anything). */
function acceptsJson(accept: string): boolean {
  return acceptsType(accept, ['application/json', 'application/*', '*/*']);
}

function acceptsType(accept: string, ranges: string[]): boolean {
  if (!accept.trim()) return true;
  return accept
    .split(',')
    .map((part) => part.split(';'))
    .some(([type, ...params]) => {
      const t = type.trim().toLowerCase();
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      if (q && Number(q.slice(2)) === 0) return false;
      return ranges.includes(t);
    });
}

/** Whether an Accept header lets us answer an event stream (absent means anything). */
function acceptsEventStream(accept: string): boolean {
  return acceptsType(accept, ['text/event-stream', 'text/*', '*/*']);
}

/** A single subscriptions/listen request (2026-07-28), or null. */
function listenRequest(body: unknown): { id: JsonRpcId; params: Record<string, unknown> } | null {
  const msg = classify(body);
  if (msg.kind !== 'request' || msg.method !== LISTEN_METHOD) return null;
  return { id: msg.id, params: msg.params ?? {} };
}

/**
 * The caller of /mcp: an API token, or an OAuth access token bound to this resource. A 401 tells
 * the client where to sign in (RFC 9728 section 5.1: resource_metadata, plus the scopes).
 */
async function authenticateMcp(app: AppContext, header: string): Promise<Principal> {
  try {
    return await app.principals.authenticate(header, app.clock.now(), resourceUri(app));
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'unauthenticated') throw err;
    const problem = header ? { code: 'invalid_token', description: err.message } : undefined;
    throw new ApiError(err.code, err.message, err.extra, { 'WWW-Authenticate': bearerChallenge(app, problem) });
  }
}

/** A transport-level refusal: JSON-RPC error body without an id, as the Streamable HTTP spec shows. */
function refuse(ctx: Koa.Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = errorResponse(null, -32000, message);
}

export function mountMcp(router: Router, app: AppContext): void {
  const ops = [...operations, ...mcpOnlyOperations];
  const { tools, missing } = buildTools(ops);
  if (missing.length) app.log.warn({ missing }, 'MCP tools without an operation are not registered');
  const byName = new Map<string, Tool>(tools.map((t) => [t.def.name, t]));
  const toolList = tools.map(describeTool);

  const capabilities = { tools: { listChanged: false } };
  const methods = (principal: Principal, ctx: Koa.Context, version: string): Record<string, MethodHandler> => {
    const state = ctx.state as RequestState;
    const log = app.log.child({ request_id: state.requestId });
    const stateless = isStateless(version);
    const cacheHints = stateless ? { ttlMs: LIST_TTL_MS, cacheScope: LIST_CACHE_SCOPE } : {};
    const handlers: Record<string, MethodHandler> = {
      initialize: async (params) => {
        if (typeof params.protocolVersion !== 'string')
          throw new RpcError(INVALID_PARAMS, 'params.protocolVersion must be a string.');
        return {
          protocolVersion: negotiateVersion(params.protocolVersion),
          capabilities,
          serverInfo: SERVER_INFO,
          instructions: INSTRUCTIONS,
        };
      },
      // 2026-07-28: discovery without a handshake; answered to every era, since it changes nothing.
      'server/discover': async () => ({
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities,
        serverInfo: SERVER_INFO,
        instructions: INSTRUCTIONS,
        ...cacheHints,
      }),
      ...(stateless ? {} : { ping: async () => ({}) }),
      // Every tool fits one page, so a cursor is never handed out and any sent is ignored. The list
      // is the same for every caller (a call checks the abilities), hence public.
      'tools/list': async () => ({ tools: toolList, ...cacheHints }),
      'tools/call': async (params, { inBatch }) => {
        if (typeof params.name !== 'string')
          throw new RpcError(INVALID_PARAMS, 'params.name must be the name of a tool.');
        const tool = byName.get(params.name);
        if (!tool) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${params.name}.`);
        const args = params.arguments ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new RpcError(INVALID_PARAMS, 'params.arguments must be an object.');
        }
        return callTool(app, principal, tool, args as Record<string, unknown>, {
          requestId: state.requestId,
          log,
          inBatch,
          onRate: (info) => ctx.set(rateHeaders(info)),
        });
      },
    };
    if (!stateless) return handlers;
    // 2026-07-28: every result carries resultType, and names the server in its _meta.
    return Object.fromEntries(
      Object.entries(handlers).map(([name, handler]): [string, MethodHandler] => [
        name,
        async (params, c) => {
          const result = (await handler(params, c)) as Record<string, unknown>;
          const meta = (result._meta ?? {}) as Record<string, unknown>;
          return { ...result, resultType: RESULT_TYPE_COMPLETE, _meta: { ...meta, [META_SERVER_INFO]: SERVER_INFO } };
        },
      ]),
    );
  };

  // POST /mcp
  router.post(MCP_PATH, async (ctx) => {
    const state = ctx.state as RequestState;
    state.route = MCP_PATH;
    // Present is what counts: an empty Origin (or `null`, a sandboxed page) is refused like any other.
    const origin = ctx.headers.origin;
    if (origin !== undefined && !originAllowed(origin, app.config.mcpAllowedOrigins)) {
      return refuse(
        ctx,
        403,
        `Forbidden: the Origin ${JSON.stringify(origin)} may not call this endpoint; allowed origins are set by MCP_ALLOWED_ORIGINS.`,
      );
    }
    const headerVersion = ctx.get('MCP-Protocol-Version');
    if (headerVersion && !isSupportedVersion(headerVersion)) {
      return refuse(
        ctx,
        400,
        `Bad Request: unsupported MCP-Protocol-Version ${headerVersion}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`,
      );
    }
    if (!acceptsJson(ctx.get('Accept'))) {
      return refuse(ctx, 406, 'Not Acceptable: this endpoint answers application/json.');
    }

    const principal = await authenticateMcp(app, ctx.get('Authorization'));
    state.orgUlid = principal.org.ulid;
    assertApiAccess(principal);

    let body: unknown;
    try {
      body = await readJsonBody(ctx, app.config.bodyLimitBytes);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'invalid_json') {
        ctx.status = 400;
        ctx.body = errorResponse(null, PARSE_ERROR, `Parse error: ${err.message}`);
        return;
      }
      throw err;
    }
    if (body === undefined) {
      ctx.status = 400;
      ctx.body = errorResponse(null, PARSE_ERROR, 'Parse error: the request body is empty.');
      return;
    }
    // tools/call checks mcp.access after rate admission, like every ability; the free methods
    // (and legacy batches) check it here.
    const singleToolCall =
      typeof body === 'object' &&
      body !== null &&
      !Array.isArray(body) &&
      (body as { method?: unknown }).method === 'tools/call';
    if (!singleToolCall && !principal.abilities.has('mcp.access')) throw ApiError.forbidden('mcp.access');

    const version = headerVersion || DEFAULT_HEADER_PROTOCOL_VERSION;
    const refusal = statelessRefusal(body, {
      version: headerVersion,
      method: ctx.get('Mcp-Method'),
      name: ctx.get('Mcp-Name'),
    });
    const listen = refusal || !isStateless(version) ? null : listenRequest(body);
    if (listen) {
      try {
        // The filter is checked first: a malformed request is -32602 whatever it accepts.
        const filter = readFilter(listen.params);
        if (!acceptsEventStream(ctx.get('Accept'))) {
          return refuse(ctx, 406, 'Not Acceptable: subscriptions/listen answers text/event-stream.');
        }
        const stream = openListenStream(app, principal.org.id, listen.id, filter, { [META_SERVER_INFO]: SERVER_INFO });
        ctx.status = 200;
        // Connection: close, so that a stream ended at shutdown does not leave a keep-alive
        // connection holding the stopping listener open.
        ctx.set({ 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'close' });
        ctx.type = 'text/event-stream';
        ctx.body = stream;
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = errorResponse(listen.id, err.code, err.message, err.data);
      }
      return;
    }
    const answer = refusal ?? (await dispatch(body, version, methods(principal, ctx, version)));
    // The stateless revision answers an unknown method with HTTP 404 as well.
    if (isStateless(version) && !Array.isArray(answer.body) && answer.body && 'error' in answer.body) {
      if (answer.body.error.code === METHOD_NOT_FOUND) answer.status = 404;
    }
    if (answer.body === undefined) {
      // Null first, then the status: Koa turns a null body into 204 otherwise.
      ctx.body = null;
      ctx.status = answer.status;
      return;
    }
    ctx.status = answer.status;
    ctx.type = 'application/json';
    ctx.body = answer.body;
  });

  // GET /mcp and DELETE /mcp: no server-initiated stream and no sessions to end.
  const notAllowed = async (ctx: Koa.Context) => {
    (ctx.state as RequestState).route = MCP_PATH;
    throw ApiError.methodNotAllowed(['POST']);
  };
  router.get(MCP_PATH, notAllowed);
  router.delete(MCP_PATH, notAllowed);
}
