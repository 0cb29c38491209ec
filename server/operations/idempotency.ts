// Idempotency keys, the way Stripe has them: the first answer to a POST or PATCH sent with a key is
// kept for 24 hours per organization and key (sql/0010_idempotency_keys.sql). A retry of the same
// request gets that answer again, marked `Idempotent-Replayed: true`, and is not metered; the same
// key with another request is 422 idempotency_key_reused; a retry while the first call still runs
// waits for it up to IDEMPOTENCY_WAIT_MS and is then 409 idempotency_key_in_progress.
//
// The key is claimed with one atomic statement before the call is admitted, so concurrent retries,
// in this process or another, never execute twice. Only a call whose handler ran keeps its answer
// (errors included); a call refused before (rate limit, funds, ability, invalid input) or one that
// failed unexpectedly (500) releases the key, so a retry runs afresh.
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { IdempotencyStore, IdempotentCall, IdempotentResponse } from '../context.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { canonicalHash } from '../schemas/canonical-json.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A running call older than this is taken to have died with its process; a retry takes the key over. */
const IDEMPOTENCY_LEASE_MS = 5 * 60_000;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY = /^[\x21-\x7e]{1,255}$/;

interface KeyRow {
  fingerprint: string;
  state: 'running' | 'done';
  locked_until: Date | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_content_type: string | null;
  response_body: string | null;
  expires_at: Date;
}

/** Whether calls of this method take an idempotency key (others ignore one). */
export function takesIdempotencyKey(method: string): boolean {
  return method === 'POST' || method === 'PATCH';
}

/**
 * The Idempotency-Key a request sent: undefined only when the header is absent. An empty header is
 * a key like any other, and is refused by checkIdempotencyKey rather than taken for no key.
 */
export function idempotencyKeyHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['idempotency-key'];
  return Array.isArray(value) ? value.join(', ') : value;
}

function checkIdempotencyKey(key: string): void {
  if (!KEY.test(key)) {
    throw ApiError.field('idempotency_key', 'An idempotency key is 1 to 255 visible ASCII characters (no spaces).');
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface IdempotencyDeps {
  db: Knex;
  clock: { now(): Date };
  /** How long a retry waits for a running first call before answering 409. */
  waitMs: number;
}

/** The idempotency keys of one process: the store in Postgres and the calls running here. */
export class IdempotencyKeys implements IdempotencyStore {
  /** Calls running in this process, so that local retries wake as soon as they finish. */
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: IdempotencyDeps) {}

  async run(call: IdempotentCall): Promise<IdempotentResponse> {
    checkIdempotencyKey(call.key);
    const fingerprint = canonicalHash({ operation: call.operation, input: call.input });
    const deadline = Date.now() + this.deps.waitMs;
    let pause = 10;
    for (;;) {
      const row = await this.claim(call, fingerprint);
      if (!row) return this.execute(call);
      if (row.fingerprint !== fingerprint) throw ApiError.idempotencyKeyReused();
      if (row.state === 'done') {
        await call.admitReplay();
        return replay(row);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw ApiError.idempotencyKeyInProgress();
      const local = this.running.get(localKey(call));
      await Promise.race([local?.catch(() => undefined), sleep(Math.min(pause, left))]);
      pause = Math.min(pause * 2, 250);
    }
  }

  /** Deletes keys past their 24 hours; returns how many. */
  async prune(now = this.deps.clock.now()): Promise<number> {
    return this.deps.db('idempotency_keys').where('expires_at', '<=', now).delete();
  }

  /**
   * Takes the key for this call (a new key, an expired one, or a running one whose process died),
   * or returns the row that holds it.
   */
  private async claim(call: IdempotentCall, fingerprint: string): Promise<KeyRow | null> {
    const now = this.deps.clock.now();
    const { rows } = await this.deps.db.raw<{ rows: { claimed: boolean }[] }>(
      `insert into idempotency_keys as k (org_id, key, operation, fingerprint, state, locked_until, created_at, expires_at)
       values (?, ?, ?, ?, 'running', ?, ?, ?)
       on conflict (org_id, key) do update
         set operation = excluded.operation, fingerprint = excluded.fingerprint, state = 'running',
             locked_until = excluded.locked_until, response_status = null, response_headers = null,
             response_content_type = null, response_body = null,
             created_at = excluded.created_at, expires_at = excluded.expires_at
         where k.expires_at <= excluded.created_at
            or (k.state = 'running' and k.locked_until <= excluded.created_at and k.fingerprint = excluded.fingerprint)
       returning true as claimed`,
      [
        call.orgId,
        call.key,
        call.operation,
        fingerprint,
        new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
        now,
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      ],
    );
    if (rows.length) return null;
    const row = await this.deps
      .db('idempotency_keys')
      .where({ org_id: call.orgId, key: call.key })
      .first<KeyRow | undefined>();
    // Released between the insert and the read: claim again.
    return row ?? this.claim(call, fingerprint);
  }

  private async execute(call: IdempotentCall): Promise<IdempotentResponse> {
    let started = false;
    const running = call.execute(() => {
      started = true;
    });
    const id = localKey(call);
    this.running.set(id, running);
    try {
      const result = await running;
      await this.store(call, result);
      return result;
    } catch (err) {
      if (started && err instanceof ApiError) {
        await this.store(call, { status: err.status, body: err.body(), headers: err.headers });
      } else {
        await this.release(call);
      }
      throw err;
    } finally {
      this.running.delete(id);
    }
  }

  private async store(call: IdempotentCall, result: IdempotentResponse): Promise<void> {
    // A streamed body cannot be kept (POST and PATCH answers never stream).
    if (result.body instanceof Readable) return this.release(call);
    const now = this.deps.clock.now();
    await this.deps
      .db('idempotency_keys')
      .where({ org_id: call.orgId, key: call.key, state: 'running' })
      .update({
        state: 'done',
        locked_until: null,
        response_status: result.status,
        response_headers: JSON.stringify(result.headers ?? {}),
        response_content_type: result.contentType ?? null,
        response_body: result.body === undefined ? null : JSON.stringify(result.body),
        expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      });
  }

  private async release(call: IdempotentCall): Promise<void> {
    await this.deps.db('idempotency_keys').where({ org_id: call.orgId, key: call.key, state: 'running' }).delete();
  }
}

function localKey(call: IdempotentCall): string {
  return `${call.orgId}\n${call.key}`;
}

/** The stored answer; a stored error is thrown again as the same ApiError. */
function replay(row: KeyRow): IdempotentResponse {
  const headers = { ...(row.response_headers ?? {}), [REPLAYED_HEADER]: 'true' };
  const body: unknown = row.response_body === null ? undefined : JSON.parse(row.response_body);
  const status = row.response_status ?? 200;
  if (status >= 400) {
    const { message, code, ...extra } = body as { message: string; code: ErrorCode };
    throw new ApiError(code, message, extra, headers);
  }
  return { status, body, headers, ...(row.response_content_type ? { contentType: row.response_content_type } : {}) };
}
