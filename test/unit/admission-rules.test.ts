// The arithmetic of admission: the limit that applies, the rate-limit headers and what each call
// of a batch learns from api_admit_batch's answer. The batching and the SQL are covered by
// test/integration/rate-limit.test.ts and metering.test.ts against Postgres.
import { expect } from 'chai';
import { effectiveRateLimit, judgeBatch, rateHeaders, type BatchRow } from '../../server/metering/admission-rules.js';
import type { PlanRecord } from '../../server/auth/principal.js';

const plan = (rateLimitPerMin: number): PlanRecord => ({
  id: 1,
  code: 'pro',
  name: 'Pro',
  apiAccess: true,
  rateLimitPerMin,
  callsIncludedMonth: null,
  features: [],
});

const RESET = new Date('2026-03-01T12:01:00.000Z');
const at = (iso: string) => new Date(iso);

/** A batch row where everything fits: override what the test is about. */
const row = (over: Partial<BatchRow> = {}): BatchRow => ({
  hits_before: 0,
  window_admitted: 99,
  bucket_admitted: 99,
  funded: 99,
  reset_at: RESET,
  calls_month: 1234,
  ...over,
});

const limits = { limit: 10, bucketLimit: 2, billable: true };
const calls = (n: number, iso = '2026-03-01T12:00:30.000Z') => Array.from({ length: n }, () => at(iso));

describe('admission arithmetic', () => {
  describe('the limit that applies', () => {
    it("is the plan's limit when it is above the platform's", () => {
      expect(effectiveRateLimit({ platformRateLimitPerMin: 60 }, { plan: plan(600) })).to.equal(600);
    });
    it("is the platform's when the plan's is lower, or there is no plan", () => {
      expect(effectiveRateLimit({ platformRateLimitPerMin: 60 }, { plan: plan(30) })).to.equal(60);
      expect(effectiveRateLimit({ platformRateLimitPerMin: 60 }, { plan: null })).to.equal(60);
    });
  });

  it('sends the limit, what remains and the reset time in whole seconds, rounded up', () => {
    expect(rateHeaders({ limit: 60, remaining: 7, resetAt: at('2026-03-01T12:01:00.001Z') })).to.deep.equal({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '7',
      'X-RateLimit-Reset': String(Date.parse('2026-03-01T12:01:01Z') / 1000),
    });
    expect(rateHeaders({ limit: 1, remaining: 0, resetAt: RESET })['X-RateLimit-Reset']).to.equal(
      String(RESET.getTime() / 1000),
    );
  });

  it('counts down what remains call by call within a batch, from the hits before it', () => {
    const out = judgeBatch(row({ hits_before: 6, calls_month: 42 }), calls(3), limits);
    expect(out).to.deep.equal(
      [3, 2, 1].map((remaining) => ({
        kind: 'admitted',
        admission: { limit: 10, remaining, resetAt: RESET, callsUsedMonth: 42 },
      })),
    );
  });

  it('refuses the calls past the window with 429, none remaining, and the seconds until the reset', () => {
    const out = judgeBatch(row({ hits_before: 8, window_admitted: 2 }), calls(4), limits);
    expect(out.map((o) => o.kind)).to.deep.equal(['admitted', 'admitted', 'rate_limited', 'rate_limited']);
    expect(out[2]).to.deep.equal({
      kind: 'rate_limited',
      retryAfter: 30,
      info: { limit: 10, remaining: 0, resetAt: RESET },
    });
    expect(out[3]).to.deep.equal(out[2]); // never a negative remainder
  });

  it('rounds Retry-After up to whole seconds, and says at least one second when the reset is now or past', () => {
    const refused = (iso: string) => judgeBatch(row({ window_admitted: 0 }), [at(iso)], limits)[0];
    expect(refused('2026-03-01T12:00:58.500Z')).to.include({ retryAfter: 2 });
    expect(refused('2026-03-01T12:00:59.999Z')).to.include({ retryAfter: 1 });
    expect(refused('2026-03-01T12:01:00.000Z')).to.include({ retryAfter: 1 });
    expect(refused('2026-03-01T12:01:05.000Z')).to.include({ retryAfter: 1 });
  });

  it("judges each call's Retry-After from its own arrival time", () => {
    const out = judgeBatch(
      row({ window_admitted: 0 }),
      [at('2026-03-01T12:00:10Z'), at('2026-03-01T12:00:40Z')],
      limits,
    );
    expect(out.map((o) => (o.kind === 'rate_limited' ? o.retryAfter : null))).to.deep.equal([50, 20]);
  });

  it("refuses the calls past the extra bucket with 429 and the bucket's limit, none remaining", () => {
    const out = judgeBatch(row({ hits_before: 0, bucket_admitted: 1 }), calls(2), limits);
    expect(out[0].kind).to.equal('admitted');
    expect(out[1]).to.deep.equal({
      kind: 'rate_limited',
      retryAfter: 30,
      info: { limit: 2, remaining: 0, resetAt: RESET },
    });
  });

  it('reports the window rather than the bucket when a call is past both', () => {
    const [out] = judgeBatch(row({ window_admitted: 0, bucket_admitted: 0, funded: 0 }), calls(1), limits);
    expect(out).to.deep.include({ kind: 'rate_limited', info: { limit: 10, remaining: 9, resetAt: RESET } });
  });

  it('refuses billable calls past the funded ones with insufficient funds, and the window they used', () => {
    const out = judgeBatch(row({ hits_before: 1, funded: 1 }), calls(2), limits);
    expect(out[0].kind).to.equal('admitted');
    expect(out[1]).to.deep.equal({ kind: 'insufficient_funds', info: { limit: 10, remaining: 7, resetAt: RESET } });
  });

  it('reports the bucket rather than the funds when a call is past both', () => {
    const [out] = judgeBatch(row({ bucket_admitted: 0, funded: 0 }), calls(1), limits);
    expect(out.kind).to.equal('rate_limited');
  });

  it('admits calls that are not billable whatever the funds', () => {
    const out = judgeBatch(row({ funded: 0 }), calls(2), { ...limits, billable: false });
    expect(out.map((o) => o.kind)).to.deep.equal(['admitted', 'admitted']);
  });
});
