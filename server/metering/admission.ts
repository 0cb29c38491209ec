// Admission of one API call (REST or MCP): the organization's fixed one-minute window shared by
// every process, the optional raw-export bucket, monthly usage and the overage debit, in one
// round trip to Postgres (the api_admit function of sql/0001_foundation.sql).
import type { Knex } from 'knex';
import type { Histogram } from 'prom-client';
import type { OrgRecord, Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { fastUlid } from '../ids.js';

export interface RateInfo {
  limit: number;
  remaining: number;
  resetAt: Date;
}

/** What an admitted call learns: its window, and the organization's billable calls this month. */
export interface Admission extends RateInfo {
  callsUsedMonth: number;
}

export interface AdmitOptions {
  billable: boolean;
  bucket?: 'raw_export';
}

export function effectiveRateLimit(config: Config, org: OrgRecord): number {
  return Math.max(config.platformRateLimitPerMin, org.plan?.rateLimitPerMin ?? 0);
}

/** What the admitter needs, and nothing more. */
export interface AdmitterDeps {
  db: Knex;
  config: Config;
  clock: { now(): Date };
  /** Batch sizes of the group commit. */
  batchSizes: Histogram<never>;
  /** The rate-limit help page linked from 429 answers (it names the API's bound port). */
  helpUrl(): string;
}

export function rateHeaders(info: RateInfo): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(info.limit),
    'X-RateLimit-Remaining': String(info.remaining),
    'X-RateLimit-Reset': String(Math.ceil(info.resetAt.getTime() / 1000)),
  };
}

interface BatchRow {
  hits_before: number;
  window_admitted: number;
  bucket_admitted: number;
  funded: number;
  reset_at: Date;
  calls_month: number;
}

interface Pending {
  principal: Principal;
  now: Date;
  resolve(info: Admission): void;
  reject(err: unknown): void;
}

/** Largest batch sent in one round trip. */
const MAX_BATCH = 256;

/**
 * Group commit for admission. Calls of one organization (and one kind: billable or not, extra
 * bucket or not) that arrive while a round trip for the same key is in flight wait for it and
 * go together in the next one. The result of a batch equals admitting its calls one by one in
 * arrival order (see api_admit_batch), so counts stay exact; Postgres serializes batches from
 * every process. Under no concurrency a call costs one round trip as before.
 */
export class Admitter {
  private readonly queues = new Map<string, Pending[]>();
  private readonly busy = new Set<string>();

  constructor(private readonly deps: AdmitterDeps) {}

  /** Admits a call or throws 429 / 402; either way the rate-limit headers travel with the answer. */
  admit(p: Principal, opts: AdmitOptions): Promise<Admission> {
    const key = `${p.org.id}:${opts.billable ? 1 : 0}:${opts.bucket ?? ''}`;
    return new Promise<Admission>((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = []));
      queue.push({ principal: p, now: this.deps.clock.now(), resolve, reject });
      if (!this.busy.has(key)) void this.drain(key, opts);
    });
  }

  private async drain(key: string, opts: AdmitOptions): Promise<void> {
    this.busy.add(key);
    try {
      for (;;) {
        const queue = this.queues.get(key);
        if (!queue?.length) {
          this.queues.delete(key);
          return;
        }
        const batch = queue.splice(0, MAX_BATCH);
        this.deps.batchSizes.observe(batch.length);
        try {
          this.settle(batch, opts, await this.roundTrip(batch, opts));
        } catch (err) {
          for (const item of batch) item.reject(err);
        }
      }
    } finally {
      this.busy.delete(key);
    }
  }

  private async roundTrip(batch: Pending[], opts: AdmitOptions): Promise<BatchRow> {
    const p = batch[0].principal;
    // The batch is judged at the time of its newest call.
    const now = batch[batch.length - 1].now;
    const tokens = [...new Set(batch.map((b) => b.principal.token.id).filter((id): id is number => id !== null))];
    const { rows } = await this.deps.db.raw<{ rows: BatchRow[] }>(
      'select * from api_admit_batch(?, ?::bigint[], ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        p.org.id,
        tokens,
        now,
        batch.length,
        effectiveRateLimit(this.deps.config, p.org),
        opts.bucket ?? null,
        opts.bucket ? this.deps.config.rawExportRateLimitPerMin : null,
        opts.billable,
        p.org.plan?.callsIncludedMonth ?? null,
        fastUlid(now.getTime()),
      ],
    );
    return rows[0];
  }

  private settle(batch: Pending[], opts: AdmitOptions, row: BatchRow): void {
    const limit = effectiveRateLimit(this.deps.config, batch[0].principal.org);
    batch.forEach((item, i) => {
      const info: RateInfo = {
        limit,
        remaining: Math.max(0, limit - (row.hits_before + i + 1)),
        resetAt: row.reset_at,
      };
      const retryAfter = Math.max(1, Math.ceil((row.reset_at.getTime() - item.now.getTime()) / 1000));
      if (i >= row.window_admitted) {
        item.reject(withHeaders(ApiError.rateLimited(retryAfter, this.deps.helpUrl()), info));
      } else if (i >= row.bucket_admitted) {
        const bucketInfo = { limit: this.deps.config.rawExportRateLimitPerMin, remaining: 0, resetAt: row.reset_at };
        item.reject(withHeaders(ApiError.rateLimited(retryAfter, this.deps.helpUrl()), bucketInfo));
      } else if (opts.billable && i >= row.funded) {
        item.reject(withHeaders(ApiError.insufficientFunds(), info));
      } else {
        item.resolve({ ...info, callsUsedMonth: row.calls_month });
      }
    });
  }
}

function withHeaders(err: ApiError, info: RateInfo): ApiError {
  Object.assign(err.headers, rateHeaders(info));
  return err;
}
