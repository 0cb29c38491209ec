// The plain JSON reads answered before Koa (server/http/fast-reads.ts): which requests take that
// path, and that every one of them gets the answer Koa gives to the same request, byte for byte
// but for the Date header and the rate window's remaining count.
import http from 'node:http';
import { expect } from 'chai';
import { operations } from '../../server/all-operations.js';
import { fastReads } from '../../server/http/fast-reads.js';
import { listen, type Listener } from '../../server/http/api-app.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request by node:http, so that a GET may carry Content-Length (fetch refuses to). */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The status a request gets from a listener that has only the fast reads (599: not taken). */
const NOT_TAKEN = 599;

describe('JSON reads answered before Koa', function () {
  this.timeout(120_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fastOnly: Listener;
  let fastUrl: string;
  const ids: Record<string, string> = {};
  let otherBrand: string;

  const jsonReads = operations.filter((op) => op.jsonRead);
  const pathOf = (template: string, pick: (name: string) => string) =>
    template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => pick(name));

  before(async () => {
    svc = await startTestService();
    // Enterprise: 300 calls a minute, more than this file makes (the test clock stands still).
    a = await svc.createOrg({ plan: 'enterprise_monthly' });
    b = await svc.createOrg();
    const domain = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
    const made: [string, string, unknown][] = [
      ['brand_ulid', '/v1/brands', { name: 'Fast brand' }],
      ['style_ulid', '/v1/qr-styles', { name: 'Fast style', config: {} }],
      ['code_ulid', '/v1/qr-codes', { slug: 'fast-read', destination: 'https://example.com/', domain_ulid: domain }],
      ['webhook_ulid', '/v1/webhooks', { url: 'https://hooks.example.com/qr', events: ['code.created'] }],
    ];
    for (const [key, path, body] of made) {
      const res = await svc.post(path, a.token, body);
      expect(res.status, res.text).to.equal(201);
      ids[key] = res.body.data.ulid;
    }
    ids.domain_ulid = domain;
    otherBrand = (await svc.post('/v1/brands', b.token, { name: 'Other brand' })).body.data.ulid;
    const fast = fastReads(svc.app, operations);
    // The API listener's own server, with only the fast reads behind it.
    fastOnly = await listen(
      (req, res) => {
        if (fast(req, res)) return;
        res.statusCode = NOT_TAKEN;
        res.end();
      },
      0,
      '127.0.0.1',
    );
    fastUrl = `http://127.0.0.1:${fastOnly.port}`;
  });
  after(async () => {
    await fastOnly?.close();
    await svc?.close();
  });

  it('marks only GETs without query parameters', () => {
    expect(jsonReads.map((op) => op.id)).to.include.members(['status.read', 'organization.read', 'codes.read']);
    for (const op of jsonReads) {
      expect(op.method, op.id).to.equal('GET');
      expect(op.query, op.id).to.equal(undefined);
      expect(op.response.media ?? op.response.csv ?? op.alternatives, op.id).to.equal(undefined);
    }
  });

  it('takes a plain GET of each marked read, and leaves every other form of request to Koa', async () => {
    const auth = { Authorization: `Bearer ${a.token}` };
    for (const op of jsonReads) {
      const res = await send(
        fastUrl,
        'GET',
        pathOf(op.path, (n) => ids[n]),
        auth,
      );
      expect(res.status, `${op.path}: ${res.text}`).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(res.text));
    }
    const code = `/v1/qr-codes/${ids.code_ulid}`;
    const declined: [string, string, Record<string, string>][] = [
      ['HEAD', '/v1/status', {}],
      ['POST', '/v1/status', {}],
      ['GET', '/v1/status/', {}],
      ['GET', '/V1/status', {}],
      ['GET', '/v1/statu%73', {}],
      ['GET', '/v1/status', { 'Content-Length': '0' }],
      ['GET', '/v1/status?expand=all', {}],
      ['GET', '/v1/status', { 'Transfer-Encoding': 'chunked' }],
      ['GET', `${code}x`, {}],
      ['GET', code.slice(0, -1), {}],
      ['GET', `${code.slice(0, -1)}%41`, {}],
      ['GET', `${code}/image`, {}],
      ['GET', '/v1/qr-codes', {}],
      ['GET', '/v1/wallet', {}],
      ['GET', '/healthz', {}],
    ];
    for (const [method, path, headers] of declined) {
      const res = await send(fastUrl, method, path, { ...auth, ...headers });
      expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).to.equal(NOT_TAKEN);
    }
    // Koa answers a trailing slash as the same read (make bench-api compares the two paths so).
    const slash = await send(svc.url, 'GET', '/v1/organization/', auth);
    expect(slash.status, slash.text).to.equal(200);
    expect(JSON.parse(slash.text).data.ulid).to.equal(a.org.ulid);
  });

  it('answers as Koa does: successes, refusals and errors', async () => {
    const viewer = await svc.createToken(a.org, { abilities: ['analytics.view'] });
    const noPlan = await svc.createOrg({ plan: null });
    const cases: { path: string; headers: Record<string, string> }[] = [];
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
    for (const op of jsonReads) {
      const own = pathOf(op.path, (n) => ids[n]);
      cases.push(
        { path: own, headers: bearer(a.token) },
        { path: own, headers: { ...bearer(a.token), 'X-Request-Id': 'caller-chosen-id-1' } },
        { path: own, headers: {} },
        { path: own, headers: { Authorization: 'Bearer not-a-token' } },
        { path: own, headers: { Authorization: 'Basic dXNlcjpwYXNz' } },
        { path: own, headers: bearer(viewer) },
        { path: own, headers: bearer(noPlan.token) },
      );
      if (op.path.includes('{')) {
        cases.push(
          { path: pathOf(op.path, () => '01ARZ3NDEKTSV4RRFFQ69G5FAV'), headers: bearer(a.token) },
          { path: pathOf(op.path, () => 'UUUUUUUUUUUUUUUUUUUUUUUUUU'), headers: bearer(a.token) },
          { path: pathOf(op.path, (n) => ids[n]), headers: bearer(b.token) },
        );
      }
    }
    cases.push({ path: `/v1/brands/${otherBrand}`, headers: bearer(a.token) });
    // An organization whose 60 calls of the minute are spent: 429 both ways.
    const spent = await svc.createOrg();
    for (let i = 0; i < 60; i++) expect((await svc.get('/v1/status', spent.token)).status).to.equal(200);
    cases.push(
      { path: '/v1/status', headers: bearer(spent.token) },
      { path: '/v1/organization', headers: bearer(spent.token) },
    );
    const statuses = new Set<number>();
    for (const [i, { path, headers }] of cases.entries()) {
      // The same request id both ways, so that the answers may be compared whole.
      const sent = { 'X-Request-Id': `fast-read-case-${i}`, ...headers };
      const fast = await send(fastUrl, 'GET', path, sent);
      // Content-Length on a GET sends the request through Koa.
      const koa = await send(svc.url, 'GET', path, { ...sent, 'Content-Length': '0' });
      const what = `GET ${path} ${JSON.stringify(headers)}`;
      expect(fast.status, `${what}: ${fast.text}`).to.not.equal(NOT_TAKEN);
      expect(fast.status, what).to.equal(koa.status);
      expect(fast.text, what).to.equal(koa.text);
      const comparable = (h: http.IncomingHttpHeaders) => {
        const { date: _date, 'x-ratelimit-remaining': remaining, ...rest } = h;
        return { ...rest, remaining: remaining === undefined ? 'absent' : 'present' };
      };
      expect(comparable(fast.headers), what).to.deep.equal(comparable(koa.headers));
      statuses.add(fast.status);
    }
    expect([...statuses]).to.include.members([200, 401, 403, 404, 422, 429]);
    // And a query string, which the fast path leaves to Koa, is refused as before.
    const queried = await send(svc.url, 'GET', '/v1/status?expand=all', bearer(b.token));
    expect(queried.status, queried.text).to.equal(422);
    expect(JSON.parse(queried.text).errors).to.deep.equal({ expand: ['This endpoint takes no query parameters.'] });
  });

  it('counts its answers in the request metrics like every other request', async () => {
    const count = async () => {
      const text = (await send(svc.url, 'GET', '/metrics')).text;
      const line = text
        .split('\n')
        .find(
          (l) => l.startsWith('http_requests_total{') && l.includes('route="/v1/status"') && l.includes('status="200"'),
        );
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const fresh = await svc.createOrg();
    const before = await count();
    for (let i = 0; i < 5; i++) {
      const res = await send(svc.url, 'GET', '/v1/status', { Authorization: `Bearer ${fresh.token}` });
      expect(res.status).to.equal(200);
    }
    expect((await count()) - before).to.equal(5);
  });
});
