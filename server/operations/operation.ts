// An operation is one endpoint of the service described once: path, ability, metering, schemas
// and the handler that calls the resource's service. The REST router, the MCP tools and the
// OpenAPI document are all generated from the same list (server/all-operations.ts), and every
// adapter runs an operation through executeOperation (./execute.ts).
import type { Ability } from '../auth/abilities.js';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { Logger } from '../logger.js';
import type { Admission, AdmitOptions } from '../metering/admission.js';
import type { JsonSchema } from '../schemas/validation.js';

/** The version in the API's paths and documents. */
export const API_VERSION = 'v1';

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Whether a request of this method may carry a body that is read (and so answer 400, 413, 415). */
export function readsBody(method: string): boolean {
  return method === 'POST' || method === 'PATCH' || method === 'PUT' || method === 'DELETE';
}

/** A response header an operation sets itself (beyond those every response carries). */
interface ResponseHeader {
  description: string;
  schema: JsonSchema;
}

/**
 * The kind of caller an adapter runs operations for. The runner and the operations read its
 * properties, never its name, so a new adapter (the web dashboard) adds a Via of its own and no
 * operation changes.
 */
export interface Via {
  /** For logs and metrics: rest, mcp, ... */
  readonly name: string;
  /** Whether a large result may be streamed to the caller (REST) or must be one plain value (tools). */
  readonly streams: boolean;
  /** An ability the token needs on top of every operation's own (mcp.access for tools). */
  readonly ability?: Ability;
  /**
   * Admits the call before its ability and input are checked: rate window and metering. Throws a
   * refusal (429, 402) that carries the rate-limit headers.
   */
  admit(app: AppContext, principal: Principal, opts: AdmitOptions): Promise<Admission>;
}

/** API calls (REST and tool calls) share the organization's rate window and are metered. */
const admitApiCall: Via['admit'] = (app, principal, opts) => app.admitter.admit(principal, opts);

export const VIA_REST: Via = { name: 'rest', streams: true, admit: admitApiCall };
export const VIA_MCP: Via = { name: 'mcp', streams: false, ability: 'mcp.access', admit: admitApiCall };

export interface Call {
  app: AppContext;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** The request's Accept header ('' when absent); lets export endpoints answer text/csv. */
  accept: string;
  /** The request's If-None-Match header ('' when absent), for answers with an ETag (304). */
  ifNoneMatch: string;
  /** The request's Last-Event-ID header ('' when absent), for a resumed event stream. */
  lastEventId: string;
  via: Via;
  /** The admission of this call: rate window and the month's billable calls so far. */
  admission: Admission;
}

export interface OperationInput<P = Record<string, unknown>, Q = Record<string, unknown>, B = Record<string, unknown>> {
  params: P;
  query: Q;
  body: B;
}

export interface OperationResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to application/json. */
  contentType?: string;
}

// `any` defaults let lists of differently-typed operations share one array type; each
// operation's own handler is typed through defineOperation.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Operation<P = any, Q = any, B = any> {
  /** operationId in OpenAPI, e.g. tokens.create. */
  id: string;
  method: HttpMethod;
  /** OpenAPI path template, e.g. /v1/tokens/{token_id}. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** Ability the token must hold; null: any valid token on an API-enabled plan. */
  ability: Ability | null;
  /** Whether an admitted call counts toward monthly usage (and overage billing). */
  billable: boolean;
  /** An extra rate-limit bucket on top of the organization's window. */
  bucket?: 'raw_export';
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  response: {
    status: number;
    description: string;
    schema?: JsonSchema;
    /** Accept: text/csv gets the same as a CSV file (with Content-Disposition). */
    csv?: boolean;
    /** Headers the handler sets on its success response, by name; each may be absent. */
    headers?: Record<string, ResponseHeader>;
    /**
     * Media types of a body that is not JSON (an image), each with its schema; replaces
     * application/json. The handler returns a Buffer or string and sets contentType.
     */
    media?: Record<string, JsonSchema>;
  };
  /**
   * A GET without query parameters whose answer is always one JSON object (or an error): the API
   * listener answers it before Koa (server/http/fast-reads.ts). Not for streams, files or 304s.
   */
  jsonRead?: true;
  /** Further answers without a body beside the success, e.g. 304 Not Modified with its headers. */
  alternatives?: { status: number; description: string; headers: Record<string, ResponseHeader> }[];
  /** Extra error statuses worth documenting beyond the ones every endpoint can answer. */
  errors?: number[];
  handler(call: Call, input: OperationInput<P, Q, B>): Promise<OperationResult>;
}

export function defineOperation<P = Record<string, never>, Q = Record<string, never>, B = Record<string, never>>(
  op: Operation<P, Q, B>,
): Operation<P, Q, B> {
  return op;
}
