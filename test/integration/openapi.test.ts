import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createApiRouter } from '../../server/http/api-app.js';
import { routerPath } from '../../server/http-common/respond.js';
import { apiMounts } from '../../server/mounts.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { testRoot } from '../helpers/stores.js';
import { requestBodyProblems } from '../helpers/conformance.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';

const run = promisify(execFile);

// Served without being API operations: the index, infrastructure, the document itself, the MCP
// endpoint, and the dashboard under /app (its JSON calls are the session's, see docs/dashboard.md).
const UNDOCUMENTED = new Set([
  '/',
  '/docs',
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs/rate-limits',
  '/docs/assets/:file',
  '/v1/openapi.json',
  '/mcp',
]);
const isDashboard = (route: string) => route === '/app' || route.startsWith('/app/');
/** The OAuth authorization server of /mcp speaks OAuth, not this API; docs/mcp.md describes it. */
const isOAuth = (route: string) => route.startsWith('/oauth/') || route.startsWith('/.well-known/oauth-');

describe('the OpenAPI document', () => {
  let svc: TestService;
  let doc: any;
  before(async () => {
    svc = await startTestService();
    doc = (await svc.get('/v1/openapi.json')).body;
  });
  after(() => svc.close());

  it('documents every route the router serves, and the router serves every documented path', () => {
    const router = createApiRouter(svc.app, { mounts: apiMounts });
    const served = new Set<string>();
    for (const layer of router.stack) {
      const route = String(layer.path);
      if (UNDOCUMENTED.has(route) || isDashboard(route) || isOAuth(route)) continue;
      for (const m of layer.methods) if (m !== 'HEAD') served.add(`${m} ${route}`);
    }
    const documented = new Set<string>();
    for (const [p, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const m of Object.keys(item)) documented.add(`${m.toUpperCase()} ${routerPath(p)}`);
    }
    expect([...served].sort()).to.deep.equal([...documented].sort());
  });

  it('answers every documented operation (401 without a token, never 404 or 405)', async () => {
    for (const [p, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      const concrete = p.replace(/\{[a-z_]+\}/g, (m) => (m === '{token_id}' ? '1' : '01ARZ3NDEKTSV4RRFFQ69G5FAV'));
      for (const m of Object.keys(item)) {
        const res = await svc.request(m.toUpperCase(), concrete);
        expect(res.status, `${m} ${p}`).to.equal(401);
      }
    }
  });

  it('declares OpenAPI 3.1, version v1, bearer security and the error shapes', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.info.version).to.equal('v1');
    expect(doc.security).to.deep.equal([{ bearerAuth: [] }]);
    expect(doc.components.schemas.Error.required).to.deep.equal(['message', 'code']);
    expect(doc.components.schemas.RateLimited.required).to.deep.equal([
      'message',
      'code',
      'retry_after',
      'documentation',
    ]);
    const status = doc.paths['/v1/status'].get;
    expect(status.responses['200'].content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/Status',
    });
    expect(status.responses['429'].headers).to.have.keys(
      'Retry-After',
      'Link',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
      'X-Content-Type-Options',
    );
  });

  it('answers GET / with a JSON index linking the document and the docs, which are served', async () => {
    const index = await svc.get('/');
    expect(index.status).to.equal(200);
    expect(index.body).to.include({ name: 'QR code service', version: 'v1' });
    expect(index.body.links.openapi).to.equal(`${svc.url}/v1/openapi.json`);
    for (const link of Object.values<string>(index.body.links)) {
      if (link.endsWith('/mcp') || link.endsWith('/v1/status')) continue;
      // Read to the end: an answer left unread keeps its connection busy, and the service's stop
      // waits for it (the OpenAPI document is larger than the socket's buffers).
      const res = await fetch(link);
      await res.arrayBuffer();
      expect(res.status, link).to.equal(200);
    }
    const docs = await svc.get('/docs');
    expect(docs.headers.get('content-type')).to.match(/^text\/html/);
    expect(docs.text).to.include('/v1/openapi.json');
  });

  it('describes a code’s create and update bodies as one schema per type under a discriminator on type (redirect mapped to url)', async () => {
    const schemas = doc.components.schemas;
    const typed = schemas['codes.create.body.typed'];
    expect(schemas['codes.create.body'].oneOf).to.deep.equal([
      { $ref: '#/components/schemas/codes.create.body.typed' },
      { $ref: '#/components/schemas/codes.create.body.untyped' },
    ]);
    expect(typed.discriminator.propertyName).to.equal('type');
    const types = [
      'url',
      'redirect',
      'vcard',
      'links',
      'app',
      'event',
      'wifi',
      'text',
      'email',
      'sms',
      'phone',
      'geo',
      'gs1',
    ];
    expect(Object.keys(typed.discriminator.mapping).sort()).to.deep.equal([...types].sort());
    expect(typed.discriminator.mapping.redirect).to.equal(typed.discriminator.mapping.url);
    // Every member is a named schema that defines and requires type, with its type's destination.
    for (const ref of typed.oneOf.map((m: { $ref: string }) => m.$ref)) {
      const member = schemas[ref.split('/').pop()];
      expect(member.required).to.include('type');
      expect(member.properties.type.enum.every((t: string) => typed.discriminator.mapping[t] === ref)).to.equal(true);
    }
    expect(schemas['codes.create.body.vcard'].properties.destination).to.deep.equal({
      $ref: '#/components/schemas/Destination.vcard',
    });
    expect(schemas['codes.update.body.typed'].discriminator.mapping).to.deep.equal(
      Object.fromEntries(
        Object.entries(typed.discriminator.mapping).map(([t, r]) => [t, String(r).replace('create', 'update')]),
      ),
    );
    expect(schemas['codes.create.body.untyped'].properties).not.to.have.property('type');
  });

  it('accepts each type’s body and refuses a destination of another type, as Prism’s validation proxy reads the document', async () => {
    const base = { slug: 'x', domain_ulid: '01JD0000000000000000000000' };
    const good: Record<string, unknown>[] = [
      { ...base, destination: 'https://example.com/' },
      { ...base, type: 'url', destination: { url: 'https://example.com/' } },
      { ...base, type: 'redirect', destination: 'https://example.com/' },
      ...Object.entries(LANDING_CASES).map(([type, destination]) => ({ ...base, type, destination })),
      { ...base, type: 'wifi', destination: { ssid: 'Cafe', password: 'secret12' } },
      { ...base, type: 'geo', destination: { latitude: 48.8584, longitude: 2.2945 } },
    ];
    for (const body of good)
      expect(await requestBodyProblems('POST', '/v1/qr-codes', body), JSON.stringify(body)).to.deep.equal([]);
    const bad: Record<string, unknown>[] = [
      { ...base, type: 'vcard', destination: 'https://example.com/' },
      { ...base, destination: LANDING_CASES.vcard },
      { ...base, type: 'event', destination: LANDING_CASES.links },
      { ...base, type: 'fax', destination: 'https://example.com/' },
      { slug: 'x', type: 'vcard', destination: LANDING_CASES.vcard },
    ];
    for (const body of bad)
      expect(await requestBodyProblems('POST', '/v1/qr-codes', body), JSON.stringify(body)).not.to.deep.equal([]);
    const code = '/v1/qr-codes/01JD0000000000000000000000';
    expect(await requestBodyProblems('PATCH', code, { name: 'n' })).to.deep.equal([]);
    expect(await requestBodyProblems('PATCH', code, { destination: LANDING_CASES.vcard })).to.deep.equal([]);
    expect(await requestBodyProblems('PATCH', code, { type: 'event', destination: LANDING_CASES.event })).to.deep.equal(
      [],
    );
    expect(
      await requestBodyProblems('PATCH', code, { type: 'app', destination: LANDING_CASES.event }),
    ).not.to.deep.equal([]);
  });

  it('passes redocly lint', async function () {
    this.timeout(120_000);
    const file = path.join(testRoot(), 'openapi.json');
    await fs.writeFile(file, JSON.stringify(doc));
    const bin = path.resolve('node_modules/.bin/redocly');
    const { stdout, stderr } = await run(bin, ['lint', '--config', path.resolve('.redocly.yaml'), file]).catch((e) => {
      expect.fail(`redocly lint failed:\n${e.stdout}\n${e.stderr}`);
    });
    expect(stdout + stderr).to.include('Your API description is valid');
  });
});
