// An operation is one REST endpoint described once: path, ability, metering, schemas and the
// handler that calls the resource's service. The REST router, the MCP tools and the OpenAPI
// document are all generated from the same list.
import type { Ability } from '../auth/abilities.js';
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { Logger } from '../logger.js';
import type { Admission } from '../metering/admission.js';
import type { JsonSchema } from '../schemas/validation.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Call {
  app: AppContext;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** The request's Accept header ('' when absent); lets export endpoints answer text/csv. */
  accept: string;
  via: 'rest' | 'mcp';
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
  response: { status: number; description: string; schema?: JsonSchema; csv?: boolean };
  /** Extra error statuses worth documenting beyond the ones every endpoint can answer. */
  errors?: number[];
  handler(call: Call, input: OperationInput<P, Q, B>): Promise<OperationResult>;
}

export function defineOperation<P = Record<string, never>, Q = Record<string, never>, B = Record<string, never>>(
  op: Operation<P, Q, B>,
): Operation<P, Q, B> {
  return op;
}

/** Koa-router path from an OpenAPI template: /v1/tokens/{token_id} -> /v1/tokens/:token_id */
export function routerPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}
