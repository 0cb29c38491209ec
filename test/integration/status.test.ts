import { expect } from 'chai';
import { startRedirectListener } from '../../server/redirect/listener.js';
import { metricsAllowed } from '../../server/http/api-app.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('GET /v1/status and GET /v1/organization', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.close());

  const expected: Record<string, { rate: number; included: number; name: string }> = {
    starter_monthly: { rate: 60, included: 0, name: 'Starter (monthly)' },
    starter_annual: { rate: 60, included: 0, name: 'Starter (annual)' },
    business_monthly: { rate: 60, included: 10000, name: 'Business (monthly)' },
    business_annual: { rate: 60, included: 10000, name: 'Business (annual)' },
    professional_monthly: { rate: 120, included: 100000, name: 'Professional (monthly)' },
    professional_annual: { rate: 120, included: 100000, name: 'Professional (annual)' },
    enterprise_monthly: { rate: 300, included: -1, name: 'Enterprise (monthly)' },
    enterprise_annual: { rate: 300, included: -1, name: 'Enterprise (annual)' },
  };

  for (const [plan, e] of Object.entries(expected)) {
    it(`reports every status field for an organization on ${plan}`, async () => {
      const { org, token } = await svc.createOrg({ plan, balanceMinor: 1000 });
      const res = await svc.get('/v1/status', token);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        status: 'ok',
        version: 'v1',
        organization: { ulid: org.ulid, name: org.name, slug: org.slug },
        plan: { code: plan, name: e.name },
        api: { rate_limit_per_min: e.rate, calls_included_month: e.included, calls_used_month: 0 },
        token: { name: 'Initial token', abilities: ['*'] },
      });
      expect(res.headers.get('x-ratelimit-limit')).to.equal(String(e.rate));
      expect(res.headers.get('x-request-id')).to.match(/^[0-9A-Z]{26}$/);
    });
  }

  it('answers 403 api_access_disabled for an organization without a plan', async () => {
    const { token } = await svc.createOrg({ plan: null });
    for (const path of ['/v1/status', '/v1/organization', '/v1/wallet', '/v1/tokens']) {
      const res = await svc.get(path, token);
      expect(res.status, path).to.equal(403);
      expect(res.body.code).to.equal('api_access_disabled');
    }
  });

  it('returns the organization in a data envelope without billing identifiers', async () => {
    const { org, token } = await svc.createOrg({ plan: 'professional_monthly', currency: 'JPY' });
    const res = await svc.get('/v1/organization', token);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      data: {
        ulid: org.ulid,
        name: org.name,
        slug: org.slug,
        locale: 'en',
        currency: 'JPY',
        plan: { code: 'professional_monthly', name: 'Professional (monthly)' },
        pixel_consent: 'required',
        created_at: org.createdAt.toISOString(),
        updated_at: org.updatedAt.toISOString(),
      },
    });
  });

  it('serves health, readiness and metrics', async () => {
    expect((await svc.get('/healthz')).body).to.deep.equal({ status: 'ok' });
    const ready = await svc.get('/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({
      status: 'ok',
      postgres: 'ok',
      clickhouse: 'ok',
      listeners: {},
      scan_backlog: { status: 'empty', spill_files: 0, spill_bytes: 0, quarantined_batches: 0 },
    });
    const metrics = await svc.get('/metrics');
    expect(metrics.text).to.include('http_requests_total{listener="api",method="GET",route="/readyz",status="200"} 1');
    expect(metrics.text).to.include('http_request_duration_seconds_bucket');
  });

  it('is ready only while every listener the process runs accepts, and not once it stops', async () => {
    const s = await startTestService();
    try {
      s.app.readiness.expect('redirect');
      const before = await s.get('/readyz');
      expect(before.status).to.equal(503);
      expect(before.body).to.include({ status: 'unavailable', postgres: 'ok', clickhouse: 'ok' });
      expect(before.body.listeners).to.deep.equal({ redirect: 'not accepting' });
      const rd = await startRedirectListener(s.app, 0, '127.0.0.1');
      const up = await s.get('/readyz');
      expect(up.status).to.equal(200);
      expect(up.body.listeners).to.deep.equal({ redirect: 'accepting' });
      s.app.readiness.stop();
      expect((await s.get('/readyz')).status).to.equal(503);
      await rd.close();
    } finally {
      await s.close();
    }
  });

  it('serves /metrics only with the configured bearer token when METRICS_TOKEN is set', async () => {
    const guarded = await startTestService({ env: { METRICS_TOKEN: 'scrape-me-0123456789' } });
    try {
      const none = await guarded.get('/metrics');
      expect([none.status, none.body.code]).to.deep.equal([403, 'forbidden']);
      expect((await guarded.get('/metrics', undefined, { Authorization: 'Bearer wrong' })).status).to.equal(403);
      const ok = await guarded.get('/metrics', undefined, { Authorization: 'Bearer scrape-me-0123456789' });
      expect(ok.status).to.equal(200);
      expect(ok.text).to.include('http_requests_total');
    } finally {
      await guarded.close();
    }
  });
});

describe('who may read /metrics (pure)', () => {
  it('without a token: loopback callers only; with one: whoever presents it', () => {
    for (const peer of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(metricsAllowed(null, '', peer), peer).to.equal(true);
    for (const peer of ['10.0.0.1', '::ffff:10.0.0.1', '2001:db8::1', '', undefined])
      expect(metricsAllowed(null, '', peer), String(peer)).to.equal(false);
    expect(metricsAllowed('t0k', 'Bearer t0k', '10.0.0.1')).to.equal(true);
    expect(metricsAllowed('t0k', 'bearer t0k', '10.0.0.1')).to.equal(true);
    expect(metricsAllowed('t0k', 'Bearer t0', '127.0.0.1')).to.equal(false);
    expect(metricsAllowed('t0k', '', '127.0.0.1')).to.equal(false);
  });
});
