// The conformance check every harness request goes through (test/helpers/conformance.ts): Prism's
// validator with the served document, plus the rule that every header is declared. These tests
// show it refuses what it must, and drive the answers that only odd requests get (415, 405-free
// DELETE bodies, unknown query parameters, 429) through it.
import { expect } from 'chai';
import { conformanceProblems, type Exchange } from '../helpers/conformance.js';
import { startTestService, type TestService } from '../helpers/harness.js';

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('OpenAPI conformance of every answer (Prism validator)', () => {
  let svc: TestService;
  let token: string;
  before(async () => {
    svc = await startTestService();
    token = (await svc.createOrg()).token;
  });
  after(() => svc.close());

  /** A real answer, captured as the harness sees it. */
  async function exchange(method: string, path: string, init: RequestInit = {}): Promise<Exchange> {
    const res = await fetch(svc.url + path, {
      method,
      ...init,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...init.headers },
    });
    const text = await res.text();
    return { method, path, status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  it('passes a real answer and refuses it once its status is one the document does not declare', async () => {
    const real = await exchange('GET', `/v1/qr-codes/${ULID}`);
    expect(real.status).to.equal(404);
    expect(await conformanceProblems(real)).to.deep.equal([]);
    const problems = await conformanceProblems({ ...real, status: 418 });
    expect(problems.join('\n')).to.include('Unable to match the returned status code');
  });

  it('refuses a header the document does not declare for that answer', async () => {
    const real = await exchange('GET', '/v1/status');
    const headers = new Headers(real.headers);
    headers.set('X-Powered-By', 'koa');
    const problems = await conformanceProblems({ ...real, headers });
    expect(problems).to.deep.equal([
      `GET /v1/status -> 200 (status.read): header x-powered-by is not declared for 200`,
    ]);
  });

  it('refuses an answer without a required header, or with a body that breaks its schema', async () => {
    const real = await exchange('GET', '/v1/status');
    const headers = new Headers(real.headers);
    headers.delete('X-Request-Id');
    expect((await conformanceProblems({ ...real, headers })).join('\n')).to.match(/x-request-id/i);
    const body = { ...(real.body as Record<string, unknown>), status: 42 };
    expect((await conformanceProblems({ ...real, body })).join('\n')).to.include('status');
  });

  it('declares 415 for a body that is not JSON, on creates, updates and deletes alike', async () => {
    for (const [method, path] of [
      ['POST', '/v1/brands'],
      ['PATCH', `/v1/brands/${ULID}`],
      ['DELETE', `/v1/qr-codes/${ULID}`],
    ]) {
      const res = await svc.request(method, path, {
        token,
        rawBody: 'name=x',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status, `${method} ${path}`).to.equal(415);
      expect(res.body.code).to.equal('unsupported_media_type');
    }
  });

  it('refuses unknown query parameters with 422, also on operations that take none', async () => {
    const typo = await svc.get('/v1/analytics?rnage=7', token);
    expect(typo.status).to.equal(422);
    expect(typo.body.errors).to.deep.equal({
      rnage: ['This field is not allowed. Accepted: range, dimension, brand_ulid, code_ulid, include_bots, hourly.'],
    });
    const none = await svc.get('/v1/status?verbose=1', token);
    expect(none.status).to.equal(422);
    expect(none.body.errors).to.deep.equal({ verbose: ['This endpoint takes no query parameters.'] });
  });

  it('answers a 429 with code rate_limited beside the three keys, headers declared', async () => {
    const small = await startTestService({ config: { platformRateLimitPerMin: 1 } });
    try {
      const org = await small.createOrg({ plan: 'starter_monthly' });
      expect((await small.get('/v1/status', org.token)).status).to.equal(200);
      const refused = await small.get('/v1/organization', org.token);
      expect(refused.status).to.equal(429);
      expect(refused.body).to.have.all.keys('message', 'code', 'retry_after', 'documentation');
      expect(refused.body.code).to.equal('rate_limited');
    } finally {
      await small.close();
    }
  });
});
