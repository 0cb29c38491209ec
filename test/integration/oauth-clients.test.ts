import fs from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CIMD_CACHE_SECONDS, CIMD_MAX_CACHE_SECONDS, resolveClient } from '../../server/oauth/clients.js';
import { OAuthError } from '../../server/oauth/errors.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { createTestCa } from '../helpers/test-certs.js';

// OAuth clients of /mcp without a browser (the whole flow is test/browser/mcp-oauth.test.ts): the
// Dynamic Client Registration limit under concurrent requests, and Client ID Metadata Documents
// cached as their HTTP caching headers say.
describe('OAuth clients: registration limit and metadata document caching', () => {
  const LIMIT = 5;
  let svc: TestService;
  let dir: string;
  let server: https.Server;
  let port: number;
  let headers: Record<string, string> = {};
  let fetches = 0;
  const docUrl = (name: string) => `https://localhost:${port}/clients/${name}.json`;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'oauth-clients-'));
    const ca = await createTestCa();
    const leaf = await ca.issue({ dns: ['localhost'] });
    const caFile = path.join(dir, 'ca.pem');
    await fs.writeFile(caFile, ca.certPem);
    server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
      fetches++;
      res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
      res.end(
        JSON.stringify({
          client_id: `https://localhost:${port}${req.url}`,
          client_name: 'Cached assistant',
          redirect_uris: ['http://127.0.0.1:9/callback'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    svc = await startTestService({
      config: {
        oauthRegistrationsPerHour: LIMIT,
        oauthClientMetadataCaFile: caFile,
        webhookAllowedTargets: [`localhost:${port}`],
      },
    });
  });
  after(async () => {
    await svc?.close();
    server?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });
  afterEach(() => svc.clock.reset());

  const register = (name: string) =>
    fetch(`${svc.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: name,
        redirect_uris: ['http://127.0.0.1:9/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });

  it('admits exactly OAUTH_REGISTRATIONS_PER_HOUR registrations from one address when they arrive together, the rest 429 with the wait', async () => {
    const answers = await Promise.all(Array.from({ length: 3 * LIMIT }, (_, i) => register(`Concurrent ${i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(LIMIT);
    expect(statuses.filter((s) => s === 429)).to.have.length(2 * LIMIT);
    const refused = answers.find((r) => r.status === 429)!;
    const body = (await refused.json()) as { error: string };
    expect(body.error).to.equal('temporarily_unavailable');
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).to.be.within(3500, 3600);
    const rows = await svc.app.db('oauth_clients').where({ kind: 'dcr' }).count('* as n');
    expect(Number(rows[0].n)).to.equal(LIMIT);

    // The hour passes for the first ones: room again, for as many as left the window.
    svc.clock.advance(3600_000 + 1000);
    expect((await register('Later')).status).to.equal(201);
  });

  async function resolveCounting(name: string): Promise<number> {
    const before = fetches;
    const client = await resolveClient(svc.app, docUrl(name));
    expect(client.name).to.equal('Cached assistant');
    return fetches - before;
  }

  it('keeps a document for its max-age, and fetches it again once stale', async () => {
    headers = { 'Cache-Control': 'public, max-age=60' };
    expect(await resolveCounting('max-age')).to.equal(1);
    expect(await resolveCounting('max-age')).to.equal(0);
    svc.clock.advance(59_000);
    expect(await resolveCounting('max-age')).to.equal(0);
    svc.clock.advance(2_000);
    expect(await resolveCounting('max-age')).to.equal(1);
  });

  it('as a shared cache: s-maxage wins over max-age, and Age is subtracted', async () => {
    headers = { 'Cache-Control': 'max-age=600, s-maxage=20', Age: '5' };
    expect(await resolveCounting('s-maxage')).to.equal(1);
    svc.clock.advance(14_000);
    expect(await resolveCounting('s-maxage')).to.equal(0);
    svc.clock.advance(2_000);
    expect(await resolveCounting('s-maxage')).to.equal(1);
  });

  for (const directive of ['no-store', 'no-cache', 'private, max-age=600', 'max-age=0']) {
    it(`fetches a document served with "${directive}" every time it is needed`, async () => {
      headers = { 'Cache-Control': directive };
      const name = directive.replace(/[^a-z0-9]+/g, '-');
      expect(await resolveCounting(name)).to.equal(1);
      expect(await resolveCounting(name)).to.equal(1);
    });
  }

  it('keeps a document with an Expires date until then', async () => {
    headers = { Date: new Date().toUTCString(), Expires: new Date(Date.now() + 120_000).toUTCString() };
    expect(await resolveCounting('expires')).to.equal(1);
    svc.clock.advance(100_000);
    expect(await resolveCounting('expires')).to.equal(0);
    svc.clock.advance(25_000);
    expect(await resolveCounting('expires')).to.equal(1);
  });

  it(`keeps a document that says nothing about caching ${CIMD_CACHE_SECONDS} s, and none longer than ${CIMD_MAX_CACHE_SECONDS} s`, async () => {
    headers = {};
    expect(await resolveCounting('silent')).to.equal(1);
    svc.clock.advance(CIMD_CACHE_SECONDS * 1000 - 5_000);
    expect(await resolveCounting('silent')).to.equal(0);
    svc.clock.advance(10_000);
    expect(await resolveCounting('silent')).to.equal(1);

    headers = { 'Cache-Control': 'max-age=31536000, immutable' };
    expect(await resolveCounting('year')).to.equal(1);
    svc.clock.advance(CIMD_MAX_CACHE_SECONDS * 1000 - 5_000);
    expect(await resolveCounting('year')).to.equal(0);
    svc.clock.advance(10_000);
    expect(await resolveCounting('year')).to.equal(1);
  });

  it('a stale document that can no longer be fetched is refused, not used', async () => {
    headers = { 'Cache-Control': 'max-age=10' };
    expect(await resolveCounting('gone')).to.equal(1);
    svc.clock.advance(11_000);
    headers = { 'Cache-Control': 'max-age=10', 'Content-Type': 'text/html' };
    let refused: unknown;
    try {
      await resolveClient(svc.app, docUrl('gone'));
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(OAuthError);
    expect((refused as OAuthError).message).to.match(/not served as application\/json/);
  });
});
