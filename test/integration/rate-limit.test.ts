import { expect } from 'chai';
import { authenticate } from '../../server/auth/principal.js';
import { ApiError } from '../../server/errors.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('rate limiting', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.close());
  afterEach(() => svc.clock.reset());

  it('admits exactly the limit in one window and answers limit + 1 with 429 and every header and body field', async () => {
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    svc.clock.set('2026-11-22T10:15:20.000Z');
    for (let i = 1; i <= 60; i++) {
      const res = await svc.get('/v1/organization', token);
      expect(res.status, `call ${i}`).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('60');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(60 - i));
      expect(res.headers.get('x-ratelimit-reset')).to.equal(String(Date.parse('2026-11-22T10:16:00Z') / 1000));
    }
    const res = await svc.get('/v1/organization', token);
    expect(res.status).to.equal(429);
    expect(res.headers.get('retry-after')).to.equal('40');
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
    const doc = `${svc.url}/docs/rate-limits`;
    expect(res.headers.get('link')).to.equal(`<${doc}>; rel="help"; type="text/html"`);
    expect(res.body).to.deep.equal({
      message: 'Too many requests. Retry after the rate-limit window resets.',
      code: 'rate_limited',
      retry_after: 40,
      documentation: doc,
    });
    const page = await svc.get('/docs/rate-limits');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
  });

  it('starts a new window at the next minute', async () => {
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    svc.clock.set('2026-11-22T10:20:59.000Z');
    for (let i = 0; i < 60; i++) await svc.get('/v1/organization', token);
    expect((await svc.get('/v1/organization', token)).status).to.equal(429);
    svc.clock.set('2026-11-22T10:21:00.000Z');
    const res = await svc.get('/v1/organization', token);
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('59');
  });

  it('uses the plan limit when it is above the platform ceiling and shares one window across tokens', async () => {
    const { org, token } = await svc.createOrg({ plan: 'professional_monthly' });
    const second = await svc.createToken(org);
    svc.clock.set('2026-11-22T11:00:01.000Z');
    for (let i = 0; i < 60; i++) expect((await svc.get('/v1/organization', token)).status).to.equal(200);
    for (let i = 0; i < 60; i++) expect((await svc.get('/v1/organization', second)).status).to.equal(200);
    const res = await svc.get('/v1/organization', second);
    expect(res.status).to.equal(429);
    expect(res.headers.get('x-ratelimit-limit')).to.equal('120');
  });

  it('counts non-billable endpoints in the window too', async () => {
    const { token } = await svc.createOrg({ plan: 'starter_monthly' });
    svc.clock.set('2026-11-22T12:00:00.000Z');
    for (let i = 0; i < 60; i++) expect((await svc.get('/v1/status', token)).status).to.equal(200);
    expect((await svc.get('/v1/tokens', token)).status).to.equal(429);
  });

  it('has a raw-export bucket of 6 per minute on top of the organization window', async () => {
    const { token } = await svc.createOrg({ plan: 'enterprise_monthly' });
    const { principal } = await authenticate(svc.app.db, `Bearer ${token}`, svc.clock.now());
    svc.clock.set('2026-11-22T13:00:10.000Z');
    for (let i = 0; i < 6; i++) await svc.app.admitter.admit(principal, { billable: true, bucket: 'raw_export' });
    let refused: unknown;
    try {
      await svc.app.admitter.admit(principal, { billable: true, bucket: 'raw_export' });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(ApiError);
    const err = refused as ApiError;
    expect(err.status).to.equal(429);
    expect(err.headers['Retry-After']).to.equal('50');
    expect(err.headers['X-RateLimit-Limit']).to.equal('6');
    // The organization's own window still has room.
    expect((await svc.get('/v1/organization', token)).status).to.equal(200);
  });
});
