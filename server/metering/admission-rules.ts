// The arithmetic of admission, apart from the group commit and its round trip (./admission.ts):
// the limit that applies, the rate-limit headers, and what each call of a batch learns from the
// batch's row of api_admit_batch (sql/0001_foundation.sql). Pure, so a unit test covers it whole.
import type { OrgRecord } from '../auth/principal.js';
import type { Config } from '../config.js';

export interface RateInfo {
  limit: number;
  remaining: number;
  resetAt: Date;
}

/** What an admitted call learns: its window, and the organization's billable calls this month. */
export interface Admission extends RateInfo {
  callsUsedMonth: number;
}

/** The organization's calls per minute: its plan's limit, never below the platform's. */
export function effectiveRateLimit(
  config: Pick<Config, 'platformRateLimitPerMin'>,
  org: Pick<OrgRecord, 'plan'>,
): number {
  return Math.max(config.platformRateLimitPerMin, org.plan?.rateLimitPerMin ?? 0);
}

export function rateHeaders(info: RateInfo): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(info.limit),
    'X-RateLimit-Remaining': String(info.remaining),
    // Whole seconds, rounded up: a client waiting until then finds the window reset.
    'X-RateLimit-Reset': String(Math.ceil(info.resetAt.getTime() / 1000)),
  };
}

/** api_admit_batch's answer for a batch of calls, in arrival order. */
export interface BatchRow {
  /** Calls counted in the window before this batch. */
  hits_before: number;
  /** How many of the batch's first calls fit the window, the extra bucket and the funds. */
  window_admitted: number;
  bucket_admitted: number;
  funded: number;
  reset_at: Date;
  calls_month: number;
}

export interface BatchLimits {
  /** effectiveRateLimit of the organization. */
  limit: number;
  /** The extra bucket's limit (raw exports), shown to the calls it refuses. */
  bucketLimit: number;
  billable: boolean;
}

export type CallOutcome =
  | { kind: 'admitted'; admission: Admission }
  | { kind: 'rate_limited'; retryAfter: number; info: RateInfo }
  | { kind: 'insufficient_funds'; info: RateInfo };

/**
 * What each call of a batch learns, in arrival order (`calls` holds each call's time): refused by
 * the window first, then by the extra bucket, then (billable calls) for want of funds.
 */
export function judgeBatch(row: BatchRow, calls: readonly Date[], limits: BatchLimits): CallOutcome[] {
  return calls.map((now, i): CallOutcome => {
    const info: RateInfo = {
      limit: limits.limit,
      remaining: Math.max(0, limits.limit - (row.hits_before + i + 1)),
      resetAt: row.reset_at,
    };
    // Whole seconds until the window resets, at least one (a Retry-After of 0 invites a busy loop).
    const retryAfter = Math.max(1, Math.ceil((row.reset_at.getTime() - now.getTime()) / 1000));
    if (i >= row.window_admitted) return { kind: 'rate_limited', retryAfter, info };
    if (i >= row.bucket_admitted) {
      return {
        kind: 'rate_limited',
        retryAfter,
        info: { limit: limits.bucketLimit, remaining: 0, resetAt: row.reset_at },
      };
    }
    if (limits.billable && i >= row.funded) return { kind: 'insufficient_funds', info };
    return { kind: 'admitted', admission: { ...info, callsUsedMonth: row.calls_month } };
  });
}
