// Shared fallback domains follow FALLBACK_ORIGINS of the service only: an origin no longer
// configured is retired (listed with its status, refused for new codes, its codes still served),
// and qrctl, whatever its environment, changes none of them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { reconcileFallbackDomains } from '../../server/domains/fallback.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { hit } from './redirect-fixtures.js';

const run = promisify(execFile);

describe('domains: shared fallback origins', () => {
  let svc: TestService;
  let org: TestOrg;
  let redirect: RedirectListener;

  before(async () => {
    svc = await startTestService({ config: { fallbackOrigins: ['https://go.qr-one.test', 'https://go.qr-two.test'] } });
    org = await svc.createOrg();
    redirect = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50 });
  });
  after(() => svc?.close());

  const fallbacks = async () =>
    ((await svc.get('/v1/domains', org.token)).body.data as { host: string; status: string; type: string }[])
      .filter((d) => d.type === 'fallback')
      .map((d) => `${d.host} ${d.status}`);

  it('leaves the fallback domains alone when qrctl runs with another FALLBACK_ORIGINS (or the default)', async function () {
    this.timeout(60_000);
    const before = await svc.app.db('domains').where({ type: 'fallback' }).orderBy('id').select();
    for (const origins of [undefined, 'http://localhost:3999']) {
      const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: svc.app.databaseUrl };
      delete env.FALLBACK_ORIGINS;
      if (origins) env.FALLBACK_ORIGINS = origins;
      const slug = `cli-${Math.random().toString(36).slice(2, 8)}`;
      const { stdout } = await run(
        process.execPath,
        [
          '--import',
          'tsx',
          'server/cli/qrctl.ts',
          'org',
          'create',
          '--name',
          'Cli',
          '--slug',
          slug,
          '--plan',
          'business_monthly',
          '--currency',
          'EUR',
          '--owner-email',
          `${slug}@example.test`,
          '--json',
        ],
        { env },
      );
      expect(JSON.parse(stdout).organization.slug).to.equal(slug);
    }
    expect(await svc.app.db('domains').where({ type: 'fallback' }).orderBy('id').select()).to.deep.equal(before);
    expect(await fallbacks()).to.deep.equal(['go.qr-one.test active', 'go.qr-two.test active']);
  });

  it('retires an origin the service no longer configures: listed as retired, no new codes, old codes still served', async () => {
    const list = (await svc.get('/v1/domains', org.token)).body.data as { ulid: string; host: string }[];
    const two = list.find((d) => d.host === 'go.qr-two.test')!;
    const made = await svc.post('/v1/qr-codes', org.token, {
      slug: 'kept',
      destination: 'https://example.com/kept',
      domain_ulid: two.ulid,
    });
    expect(made.status, made.text).to.equal(201);

    // The service restarts with go.qr-two.test dropped and go.qr-three.test added.
    const changes = await reconcileFallbackDomains(
      svc.app.db,
      ['https://go.qr-one.test', 'https://go.qr-three.test'],
      svc.app.log,
    );
    expect(changes).to.deep.equal({
      added: ['https://go.qr-three.test'],
      reactivated: [],
      retired: ['https://go.qr-two.test'],
    });
    expect(await fallbacks()).to.deep.equal([
      'go.qr-one.test active',
      'go.qr-two.test retired',
      'go.qr-three.test active',
    ]);
    const refused = await svc.post('/v1/qr-codes', org.token, {
      slug: 'new-on-retired',
      destination: 'https://example.com/',
      domain_ulid: two.ulid,
    });
    expect(refused.status).to.equal(422);
    expect(refused.body.errors).to.deep.equal({ domain_ulid: ['This domain takes no new codes (status retired).'] });
    const kept = await svc.get(`/v1/qr-codes/${made.body.data.ulid}`, org.token);
    expect(kept.body.data.public_url).to.equal(`https://go.qr-two.test/${org.org.slug}/kept`);
    const res = await hit(redirect.port, 'go.qr-two.test', `/${org.org.slug}/kept`);
    expect(res.status).to.equal(302);
    expect(res.headers.location).to.equal('https://example.com/kept');

    // Configured again: the same domain (same ULID) is active again.
    const back = await reconcileFallbackDomains(
      svc.app.db,
      ['https://go.qr-one.test', 'https://go.qr-two.test'],
      svc.app.log,
    );
    expect(back).to.deep.equal({
      added: [],
      reactivated: ['https://go.qr-two.test'],
      retired: ['https://go.qr-three.test'],
    });
    expect((await svc.get(`/v1/domains/${two.ulid}`, org.token)).body.data.status).to.equal('active');
  });
});
