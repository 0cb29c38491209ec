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
      expect((await fetch(link)).status, link).to.equal(200);
    }
    const docs = await svc.get('/docs');
    expect(docs.headers.get('content-type')).to.match(/^text\/html/);
    expect(docs.text).to.include('/v1/openapi.json');
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
