import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('request handling and error bodies', () => {
  let svc: TestService;
  let token: string;
  before(async () => {
    svc = await startTestService({ config: { bodyLimitBytes: 2048, platformRateLimitPerMin: 10_000 } });
    token = (await svc.createOrg()).token;
  });
  after(() => svc.close());

  it('answers 400 invalid_json for a malformed body and creates nothing', async () => {
    const before = await svc.app.db('api_tokens').count<{ c: number }[]>('* as c');
    const res = await svc.request('POST', '/v1/tokens', { token, rawBody: '{"name": "x",' });
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('invalid_json');
    expect(res.body.message).to.match(/^The request body is not valid JSON/);
    const after = await svc.app.db('api_tokens').count<{ c: number }[]>('* as c');
    expect(after[0].c).to.equal(before[0].c);
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await svc.request('POST', '/v1/tokens', { token, body: { name: 'x'.repeat(4000) } });
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal({
      message: 'The request body is larger than 2048 bytes.',
      code: 'payload_too_large',
      limit: 2048,
    });
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await svc.request('POST', '/v1/tokens', {
      token,
      rawBody: 'name=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).to.equal(415);
    expect(res.body.code).to.equal('unsupported_media_type');
  });

  it('answers 422 when a body is a JSON value other than an object', async () => {
    for (const raw of ['[]', '"x"', '42', 'null']) {
      const res = await svc.request('POST', '/v1/tokens', { token, rawBody: raw });
      expect(res.status, raw).to.equal(422);
      expect(res.body.code).to.equal('validation_failed');
    }
  });

  it('answers a JSON 404 for an unknown path and 405 with Allow for a wrong method', async () => {
    const missing = await svc.get('/v1/nothing-here', token);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ message: 'No endpoint GET /v1/nothing-here.', code: 'not_found' });
    const wrong = await svc.request('PUT', '/v1/wallet', { token });
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('GET');
    expect(wrong.body.code).to.equal('method_not_allowed');
  });

  it('puts an X-Request-Id on every response and honours a sane incoming one', async () => {
    const own = await svc.request('GET', '/v1/status', { token, headers: { 'X-Request-Id': 'client-req-12345' } });
    expect(own.headers.get('x-request-id')).to.equal('client-req-12345');
    const junk = await svc.request('GET', '/v1/status', { token, headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(junk.headers.get('x-request-id')).to.match(/^[0-9A-Z]{26}$/);
    for (const res of [await svc.get('/nope'), await svc.get('/v1/status'), await svc.get('/healthz')]) {
      expect(res.headers.get('x-request-id')).to.be.a('string');
    }
  });

  it('serves the OpenAPI 3.1 document without authentication', async () => {
    const res = await svc.get('/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(res.body.info.version).to.equal('v1');
    expect(res.body.components.securitySchemes.bearerAuth).to.deep.include({ type: 'http', scheme: 'bearer' });
  });
});
