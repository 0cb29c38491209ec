import { expect } from 'chai';
import fc from 'fast-check';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

// Random bodies built from the real keys with random values: never a 5xx, and a 4xx writes nothing.
describe('QR codes and bulk import under random input', () => {
  let svc: TestService;
  let org: TestOrg;
  let domain: string;
  let code: string;

  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 1_000_000 } });
    org = await svc.createOrg({ plan: 'enterprise_monthly' });
    domain = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    code = (
      await svc.post('/v1/qr-codes', org.token, {
        slug: 'fuzz-base',
        destination: 'https://x.com',
        domain_ulid: domain,
      })
    ).body.data.ulid;
  });
  after(() => svc.close());

  const keys = [
    'slug',
    'destination',
    'domain_ulid',
    'name',
    'brand_ulid',
    'style_ulid',
    'type',
    'status',
    'redirect_cap',
    'password',
    'routing',
    'schedule',
    'date_begin',
    'expire_at',
    'utm_params',
    'prelander_enabled',
    'prelander_seconds',
    'prelander_message',
  ];
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(
      'https://example.com',
      'x\u0000y',
      '2026-06-30T23:59:60Z',
      '0000-01-01T00:00:00Z',
      'Europe/Berlin',
      'mon',
      '24:00',
      'redirect',
      'paused',
    ),
    fc.string({ unit: 'grapheme', maxLength: 70 }),
  );
  const body = fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 8 })), value, { maxKeys: 6 });
  const count = async () => Number((await svc.app.db('qr_codes').count<{ c: string }[]>('* as c'))[0].c);
  const snapshot = async () => JSON.stringify(await svc.app.db('qr_codes').orderBy('id').select('*'));

  it('POST /v1/qr-codes', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (b, withBase) => {
        const sent = withBase
          ? {
              slug: `f${Math.random().toString(36).slice(2, 10)}`,
              destination: 'https://x.com',
              domain_ulid: domain,
              ...b,
            }
          : b;
        const before = await count();
        const res = await svc.post('/v1/qr-codes', org.token, sent);
        seen.add(res.status);
        expect(res.status, res.text).to.be.lessThan(500);
        if (res.status >= 400) expect(await count()).to.equal(before);
      }),
      { numRuns: 150 },
    );
    // The run reached both sides of validation.
    expect([...seen].sort()).to.include.members([201, 422]);
  });

  it('PATCH /v1/qr-codes/{code_ulid}', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const before = await snapshot();
        const res = await svc.patch(`/v1/qr-codes/${code}`, org.token, b);
        expect(res.status, res.text).to.be.lessThan(500);
        if (res.status >= 400) expect(await snapshot()).to.equal(before);
      }),
      { numRuns: 150 },
    );
  });

  it('POST /v1/qr-codes/bulk', async () => {
    const rows = fc.array(fc.oneof(body, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(rows, fc.option(fc.jsonValue({ maxDepth: 2 })), async (r, defaults) => {
        const sent: Record<string, unknown> = { rows: r };
        if (defaults !== null) sent.defaults = defaults;
        const res = await svc.post('/v1/qr-codes/bulk', org.token, sent);
        expect(res.status, res.text).to.be.lessThan(500);
      }),
      { numRuns: 150 },
    );
  });
});
