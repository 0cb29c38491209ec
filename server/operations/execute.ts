// Runs one operation for an authenticated principal. Every adapter (REST routes, MCP tools/call)
// goes through here, so the order of checks, admission and validation is written once:
// (401 done by the caller) -> 403 api_access -> 429 / 402 -> 403 ability -> 422 -> handler.
// A POST or PATCH sent with an idempotency key first claims the key (./idempotency.ts): a retry
// of a finished call is admitted without metering and answered with the stored response.
import type { Ability } from '../auth/abilities.js';
import { hasApiAccess, type Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Admission, RateInfo } from '../metering/admission.js';
import { takesIdempotencyKey } from './idempotency.js';
import { assertStorable } from '../schemas/storable.js';
import type { Operation, OperationInput, OperationResult, Via } from './operation.js';
import type { Validators } from '../schemas/validation.js';

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
  /** The request's If-None-Match header, where the adapter has one. */
  ifNoneMatch?: string;
  /** The request's Last-Event-ID header, where the adapter has one (event streams). */
  lastEventId?: string;
  /** The kind of caller: what it must hold on top, how it is admitted, whether results stream. */
  via: Via;
  /** Called once the call is admitted, so later refusals (403, 422) still carry the rate headers. */
  onRate?: (info: RateInfo) => void;
  /** The caller's idempotency key (REST Idempotency-Key, MCP idempotency_key); POST and PATCH only. */
  idempotencyKey?: string;
}

export function assertApiAccess(p: Principal): void {
  if (!hasApiAccess(p.org)) throw ApiError.apiAccessDisabled();
}

function missingAbility(p: Principal, op: Operation, extra?: Ability): Ability | null {
  if (extra && !p.abilities.has(extra)) return extra;
  if (op.ability && !p.abilities.has(op.ability)) return op.ability;
  return null;
}

/** Compiles every schema of the operations once, at start (a schema compiled before is kept). */
export function compileOperationSchemas(validators: Validators, ops: readonly Operation[]): void {
  for (const op of ops) {
    if (op.params) validators.compile(op.params, 'query');
    if (op.query) validators.compile(op.query, 'query');
    if (op.body) validators.compile(op.body, 'body');
  }
}

function validateInput(app: AppContext, op: Operation, raw: RawInput): OperationInput {
  const params = op.params ? app.validators.check<Record<string, unknown>>(op.params, 'query', { ...raw.params }) : {};
  const query = op.query ? app.validators.check<Record<string, unknown>>(op.query, 'query', { ...raw.query }) : {};
  // An operation without a query schema takes no query parameters; any sent is refused like an
  // unknown one of a schema (additionalProperties: false), so a typo never passes silently.
  const unexpected = op.query ? [] : Object.keys(raw.query);
  if (unexpected.length) {
    throw ApiError.validation(
      Object.fromEntries(unexpected.map((k) => [k, ['This endpoint takes no query parameters.']])),
    );
  }
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
  const call: Call = { app, principal, op, meta, missing: missingAbility(principal, op, meta.via.ability) };
  const key = meta.idempotencyKey;
  // Without the ability the call is refused whatever the key holds, and learns nothing of it.
  if (key === undefined || call.missing || !takesIdempotencyKey(op.method)) {
    return run(call, raw);
  }
  // The request is read before admission here: the key's fingerprint needs it.
  const input = typeof raw === 'function' ? await raw() : raw;
  return app.idempotency.run({
    orgId: principal.org.id,
    key,
    operation: op.id,
    input,
    execute: (handlerStarted) => run(call, input, handlerStarted),
    admitReplay: async () => {
      await admit(call, false);
    },
  });
}

/** One call being executed. (Module functions rather than closures per call: a call is on every request's path.) */
interface Call {
  app: AppContext;
  principal: Principal;
  op: Operation;
  meta: ExecuteMeta;
  /** The ability the caller lacks, refused once admitted (so the refusal carries the rate headers). */
  missing: Ability | null;
}

async function admit(call: Call, billable: boolean): Promise<Admission> {
  // A refused admission throws an ApiError that carries the rate-limit headers itself.
  const info = await call.meta.via.admit(call.app, call.principal, { billable, bucket: call.op.bucket });
  call.meta.onRate?.(info);
  if (call.missing) throw ApiError.forbidden(call.missing);
  return info;
}

async function run(
  call: Call,
  input: RawInput | (() => Promise<RawInput>),
  handlerStarted?: () => void,
): Promise<OperationResult> {
  const { app, principal, op, meta } = call;
  const info = await admit(call, op.billable && !call.missing);
  const valid = validateInput(app, op, typeof input === 'function' ? await input() : input);
  handlerStarted?.();
  return op.handler(
    {
      app,
      principal,
      requestId: meta.requestId,
      log: meta.log,
      accept: meta.accept,
      ifNoneMatch: meta.ifNoneMatch ?? '',
      lastEventId: meta.lastEventId ?? '',
      via: meta.via,
      admission: info,
    },
    valid,
  );
}
