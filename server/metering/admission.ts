// Admission of one API call (REST or MCP): the organization's fixed one-minute window shared by
// every process, the optional raw-export bucket, monthly usage and the overage debit, in one
// round trip to Postgres (the api_admit function of sql/0001_foundation.sql).
import { ulid } from 'ulid';
import type { Principal } from '../auth/principal.js';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';

export interface RateInfo {
  limit: number;
  remaining: number;
  resetAt: Date;
}

export interface AdmitOptions {
  billable: boolean;
  bucket?: 'raw_export';
}

export function effectiveRateLimit(app: AppContext, p: Principal): number {
  return Math.max(app.config.platformRateLimitPerMin, p.plan?.rateLimitPerMin ?? 0);
}

export function rateLimitHelpUrl(app: AppContext): string {
  return app.config.rateLimitHelpUrl || `${apiBaseUrl(app.config, app.apiPort())}/docs/rate-limits`;
}

export function rateHeaders(info: RateInfo): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(info.limit),
    'X-RateLimit-Remaining': String(info.remaining),
    'X-RateLimit-Reset': String(Math.ceil(info.resetAt.getTime() / 1000)),
  };
}

interface AdmitRow {
  outcome: 'admitted' | 'rate_limited' | 'insufficient_funds';
  rate_limit: number;
  remaining: number;
  reset_at: Date;
}

/** Admits a call or throws 429 / 402; either way the rate-limit headers travel with the answer. */
export async function admit(app: AppContext, p: Principal, opts: AdmitOptions): Promise<RateInfo> {
  const now = app.clock.now();
  const limit = effectiveRateLimit(app, p);
  const { rows } = await app.db.raw<{ rows: AdmitRow[] }>('select * from api_admit(?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    p.org.id,
    p.token.id,
    now,
    limit,
    opts.bucket ?? null,
    opts.bucket ? app.config.rawExportRateLimitPerMin : null,
    opts.billable,
    p.plan?.callsIncludedMonth ?? null,
    ulid(now.getTime()),
  ]);
  const row = rows[0];
  const info: RateInfo = { limit: row.rate_limit, remaining: row.remaining, resetAt: row.reset_at };
  const headers = rateHeaders(info);
  if (row.outcome === 'rate_limited') {
    const retryAfter = Math.max(1, Math.ceil((row.reset_at.getTime() - now.getTime()) / 1000));
    const err = ApiError.rateLimited(retryAfter, rateLimitHelpUrl(app));
    Object.assign(err.headers, headers);
    throw err;
  }
  if (row.outcome === 'insufficient_funds') {
    const err = ApiError.insufficientFunds();
    Object.assign(err.headers, headers);
    throw err;
  }
  return info;
}
