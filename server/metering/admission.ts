// Admission of one API call (REST or MCP): the organization's fixed one-minute window shared by
// every process, the optional raw-export bucket, monthly usage and the overage debit, in one
// round trip to Postgres (the api_admit function of sql/0001_foundation.sql). What each call of a
// batch learns from that round trip is computed in ./admission-rules.ts.
import type { Knex } from 'knex';
import type { Histogram } from 'prom-client';
import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { fastUlid } from '../ids.js';
import {
  effectiveRateLimit,
  judgeBatch,
  rateHeaders,
  type Admission,
  type BatchRow,
  type RateInfo,
} from './admission-rules.js';

export { effectiveRateLimit, rateHeaders, type Admission, type RateInfo };

export interface AdmitOptions {
  billable: boolean;
  bucket?: 'raw_export';
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
    const outcomes = judgeBatch(
      row,
      batch.map((item) => item.now),
      {
        limit: effectiveRateLimit(this.deps.config, batch[0].principal.org),
        bucketLimit: this.deps.config.rawExportRateLimitPerMin,
        billable: opts.billable,
      },
    );
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.kind === 'admitted') item.resolve(outcome.admission);
      else if (outcome.kind === 'rate_limited') {
        item.reject(withHeaders(ApiError.rateLimited(outcome.retryAfter, this.deps.helpUrl()), outcome.info));
      } else item.reject(withHeaders(ApiError.insufficientFunds(), outcome.info));
    });
  }
}

function withHeaders(err: ApiError, info: RateInfo): ApiError {
  Object.assign(err.headers, rateHeaders(info));
  return err;
}
