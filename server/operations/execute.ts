// Runs one operation for an authenticated principal. Every adapter (REST routes, MCP tools/call)
// goes through here, so the order of checks, admission and validation is written once:
// (401 done by the caller) -> 403 api_access -> 429 / 402 -> 403 ability -> 422 -> handler.
import type { Ability } from '../auth/abilities.js';
import { hasApiAccess, type Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RateInfo } from '../metering/admission.js';
import { assertStorable } from '../schemas/storable.js';
import type { Operation, OperationInput, OperationResult, Via } from './operation.js';

export interface RawInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Undefined when no body was sent. */
  body: unknown;
}

export interface ExecuteMeta {
  requestId: string;
  log: Logger;
  accept: string;
  /** The kind of caller: what it must hold on top, how it is admitted, whether results stream. */
  via: Via;
  /** Called once the call is admitted, so later refusals (403, 422) still carry the rate headers. */
  onRate?: (info: RateInfo) => void;
}

export function assertApiAccess(p: Principal): void {
  if (!hasApiAccess(p.org)) throw ApiError.apiAccessDisabled();
}

export function missingAbility(p: Principal, op: Operation, extra?: Ability): Ability | null {
  if (extra && !p.abilities.has(extra)) return extra;
  if (op.ability && !p.abilities.has(op.ability)) return op.ability;
  return null;
}

/** Compiles every schema of the operations once, at start. */
export function compileOperationSchemas(app: AppContext, ops: readonly Operation[]): void {
  for (const op of ops) {
    if (op.params) app.validators.compile(op.params, 'query');
    if (op.query) app.validators.compile(op.query, 'query');
    if (op.body) app.validators.compile(op.body, 'body');
  }
}

export function validateInput(app: AppContext, op: Operation, raw: RawInput): OperationInput {
  const params = op.params ? app.validators.check<Record<string, unknown>>(op.params, 'query', { ...raw.params }) : {};
  const query = op.query ? app.validators.check<Record<string, unknown>>(op.query, 'query', { ...raw.query }) : {};
  let body: Record<string, unknown> = {};
  if (op.body) {
    const value = raw.body === undefined ? {} : raw.body;
    body = app.validators.check<Record<string, unknown>>(op.body, 'body', value);
    // Strings Postgres cannot store (NUL, lone surrogates) and over-deep objects: 422, not 500.
    assertStorable(body);
  } else if (raw.body !== undefined) {
    throw ApiError.validation({ _: ['This endpoint takes no request body.'] });
  }
  return { params, query, body };
}

export async function executeOperation(
  app: AppContext,
  principal: Principal,
  op: Operation,
  raw: RawInput | (() => Promise<RawInput>),
  meta: ExecuteMeta,
): Promise<OperationResult> {
  assertApiAccess(principal);
  const missing = missingAbility(principal, op, meta.via.ability);
  // A refused admission throws an ApiError that carries the rate-limit headers itself.
  const info = await meta.via.admit(app, principal, { billable: op.billable && !missing, bucket: op.bucket });
  meta.onRate?.(info);
  if (missing) throw ApiError.forbidden(missing);
  const input = validateInput(app, op, typeof raw === 'function' ? await raw() : raw);
  return op.handler(
    { app, principal, requestId: meta.requestId, log: meta.log, accept: meta.accept, via: meta.via, admission: info },
    input,
  );
}
