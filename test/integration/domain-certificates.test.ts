// Custom-domain certificates end to end, against real servers on loopback: Debian's pebble as the ACME
// server (installed by test/helpers/pebble.ts when missing), the test DNS server answering the custom
// hosts with 127.0.0.1 and holding their TXT records, pebble's HTTP-01 port pointed at the redirect
// listener, and graphile-worker running the domain-certificate job. Validation is real.
import crypto from 'node:crypto';
import { expect } from 'chai';
import { Sealer } from '../../server/at-rest.js';
import { AcmeIssuanceError, AcmeIssuer } from '../../server/domains/acme.js';
import { runDomainMaintenance } from '../../server/domains/maintenance.js';
import { verificationToken } from '../../server/domains/service.js';
import type { RedirectListener } from '../../server/redirect/listener.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import type { TestOrg, TestService } from '../helpers/harness.js';
import { freePort, type Pebble } from '../helpers/pebble.js';
import { hit } from './redirect-fixtures.js';
import {
  addVerifiedDomain,
  domainUntil as domainUntilOn,
  startHttpsStack,
  tlsGet as tlsGetOn,
  type HttpsStack,
} from '../helpers/custom-domains.js';

describe('domains: certificates from an ACME server (pebble), HTTPS redirect', function () {
  this.timeout(120_000);
  let dns: TestDnsServer;
  let pebble: Pebble;
  let svc: TestService;
  let redirect: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let trusted: string[];
  const tag = crypto.randomBytes(3).toString('hex');
  const host = `go.${tag}.customer.test`;
  const brokenHost = `down.${tag}.customer.test`;
  let domainUlid: string;

  let stack: HttpsStack;

  before(async function () {
    // The first run on a fresh machine installs pebble with apt-get.
    this.timeout(600_000);
    stack = await startHttpsStack();
    ({ dns, pebble, svc, redirect, trusted } = stack);
    a = await svc.createOrg();
    b = await svc.createOrg();
  });
  after(() => stack?.close());

  const tlsGet = (servername: string, path: string) => tlsGetOn(redirect.tlsPort!, servername, path, trusted);
  const domainUntil = (org: TestOrg, ulid: string, done: (d: Record<string, any>) => boolean, ms = 30_000) =>
    domainUntilOn(svc, org, ulid, done, { ms, more: () => pebble.output().slice(-2000) });

  async function addVerified(org: TestOrg, name: string, address: string) {
    const created = await addVerifiedDomain(svc, dns, org, name, address);
    expect(created).to.include({ status: 'active', ssl_status: 'pending', ssl_expires_at: null, ssl_error: null });
    return created.ulid as string;
  }

  it('issues a certificate once verified; HTTPS with SNI answers the code with 302 (and a gs1 code as a GS1 resolver), plain HTTP with 308', async () => {
    domainUlid = await addVerified(a, host, '127.0.0.1');
    const code = await svc.post('/v1/qr-codes', a.token, {
      slug: 'menu',
      destination: 'https://example.com/menu',
      domain_ulid: domainUlid,
    });
    expect(code.status, code.text).to.equal(201);
    expect(code.body.data.public_url).to.equal(`https://${host}/menu`);

    const d = await domainUntil(a, domainUlid, (x) => x.ssl_status === 'active');
    expect(d.ssl_error).to.equal(null);
    expect(new Date(d.ssl_expires_at).getTime()).to.be.greaterThan(Date.now() + 60 * 86_400_000);

    const secure = await tlsGet(host, '/menu');
    expect(secure.status).to.equal(302);
    expect(secure.location).to.equal('https://example.com/menu');
    expect(secure.subject).to.equal(`DNS:${host}`);
    expect(secure.authorized).to.equal(true);

    const plain = await hit(redirect.port, host, '/menu?x=1');
    expect(plain.status).to.equal(308);
    expect(plain.headers.location).to.equal(`https://${host}/menu?x=1`);
    // ACME challenges are never redirected: an unknown token is a plain 404.
    const challenge = await hit(redirect.port, host, '/.well-known/acme-challenge/unknown-token');
    expect(challenge.status).to.equal(404);

    // The GS1-Conformant resolver SHALL support HTTPS: a gs1 code on the domain resolves over TLS by SNI.
    const product = await svc.post('/v1/qr-codes', a.token, {
      slug: 'rice',
      type: 'gs1',
      domain_ulid: domainUlid,
      destination: {
        gtin: '09506000134352',
        links: [{ link_type: 'gs1:pip', href: 'https://example.com/rice', title: 'Rice', default: true }],
      },
    });
    expect(product.status, product.text).to.equal(201);
    expect(product.body.data.public_url).to.equal(`https://${host}/01/09506000134352`);
    const resolved = await tlsGet(host, '/01/09506000134352/10/LOT1?17=261231');
    expect(resolved.status).to.equal(307);
    expect(resolved.location).to.equal('https://example.com/rice?17=261231');
    const linkset = await tlsGet(host, '/01/09506000134352?linkType=linkset');
    expect(linkset.status).to.equal(200);
    expect(JSON.parse(linkset.body).linkset[0].anchor).to.equal(`https://${host}/01/09506000134352`);
    expect((await tlsGet(host, '/01/09506000134353')).status).to.equal(400);
    expect(JSON.parse((await tlsGet(host, '/.well-known/gs1resolver')).body).resolverRoot).to.equal(`https://${host}`);

    // No SNI match: the default certificate and the 404 page.
    const unknown = await tlsGet('nobody.example.test', '/menu');
    expect(unknown.subject).to.equal('DNS:localhost');
    expect(unknown.status).to.equal(404);
  });

  it('answers floods of random SNI names, random challenge hosts and random challenge tokens without a query each', async () => {
    const certs = redirect.certificates!;
    const challenges = redirect.challenges;
    const misses = certs.stats.misses;
    for (let i = 0; i < 20; i++) {
      const answer = await tlsGet(`r${i}x${crypto.randomBytes(6).toString('hex')}.nowhere.test`, '/menu');
      expect(answer.subject).to.equal('DNS:localhost');
      expect(answer.status).to.equal(404);
    }
    // The known-keys filter (0.1% false positives) answers them: no certificate query, nothing cached.
    expect(certs.stats.misses - misses).to.be.at.most(1);
    expect(certs.stats.filtered).to.be.at.least(19);

    const queries = challenges.stats.queries;
    const randomToken = () => crypto.randomBytes(12).toString('base64url');
    for (let i = 0; i < 20; i++) {
      const res = await hit(
        redirect.port,
        `h${crypto.randomBytes(6).toString('hex')}.nowhere.test`,
        `/.well-known/acme-challenge/${randomToken()}`,
      );
      expect(res.status).to.equal(404);
    }
    expect(challenges.stats.queries - queries).to.be.at.most(1);
    // Random tokens on a real host: the host's challenges are read once and kept; a missing token is
    // read again only a few times a second (a challenge written a moment ago may not be notified yet).
    const tokens = await Promise.all(
      Array.from({ length: 100 }, () => hit(redirect.port, host, `/.well-known/acme-challenge/${randomToken()}`)),
    );
    expect(tokens.every((r) => r.status === 404)).to.equal(true);
    expect(challenges.stats.queries - queries).to.be.at.most(25);
  });

  it('keeps private keys sealed at rest and never returns them', async () => {
    const row = await svc.app
      .db('domain_certificates as c')
      .join('domains as d', 'd.id', 'c.domain_id')
      .where('d.ulid', domainUlid)
      .first('c.*');
    expect(row.certificate_pem).to.include('BEGIN CERTIFICATE');
    const sealed: Buffer = row.private_key_sealed;
    for (const marker of ['PRIVATE KEY', '-----BEGIN', 'MIG'])
      expect(sealed.includes(Buffer.from(marker))).to.equal(false);
    const account = await svc.app.db('acme_accounts').first('account_key_sealed');
    expect(account.account_key_sealed.includes(Buffer.from('PRIVATE KEY'))).to.equal(false);
    for (const path of [`/v1/domains/${domainUlid}`, '/v1/domains']) {
      const res = await svc.get(path, a.token);
      expect(res.text).to.not.match(/PRIVATE KEY|BEGIN CERTIFICATE/);
    }
  });

  it('renews a certificate whose expiry comes inside the 30-day window and serves the new one', async () => {
    const before = await tlsGet(host, '/menu');
    const soon = new Date(Date.now() + 10 * 86_400_000);
    const { id } = await svc.app.db('domains').where({ ulid: domainUlid }).first('id');
    await svc.app.db('domain_certificates').where({ domain_id: id }).update({ not_after: soon });
    await svc.app.db('domains').where({ id }).update({ ssl_expires_at: soon });
    const report = await runDomainMaintenance(svc.app);
    expect(report.renewals).to.be.greaterThanOrEqual(1);
    await domainUntil(
      a,
      domainUlid,
      (x) => x.ssl_status === 'active' && new Date(x.ssl_expires_at) > new Date(Date.now() + 60 * 86_400_000),
    );
    const deadline = Date.now() + 5000;
    let after = await tlsGet(host, '/menu');
    while (after.fingerprint === before.fingerprint && Date.now() < deadline) after = await tlsGet(host, '/menu');
    expect(after.fingerprint).to.not.equal(before.fingerprint);
    expect(after.status).to.equal(302);
  });

  it('fails with the ACME server’s reason when the challenge is unreachable, queues a retry, and recovers', async () => {
    // The name resolves to an address where nothing answers HTTP.
    const ulid = await addVerified(a, brokenHost, '127.0.0.2');
    const failed = await domainUntil(a, ulid, (x) => x.ssl_status === 'failed');
    expect(failed.ssl_error).to.match(/could not validate the HTTP-01 challenge: .*127\.0\.0\.2.*(refused|connect)/i);
    expect(failed.ssl_expires_at).to.equal(null);
    const { id } = await svc.app.db('domains').where({ ulid }).first('id');
    const { rows } = await svc.app.db.raw(
      `select run_at, payload from graphile_worker._private_jobs where key = ? and locked_at is null`,
      [`domain-certificate:${id}`],
    );
    expect(rows).to.have.length(1);
    expect(rows[0].payload.reason).to.equal('retry');
    expect(new Date(rows[0].run_at).getTime()).to.be.greaterThan(Date.now() + 4 * 60_000);

    dns.setA(brokenHost, '127.0.0.1');
    const refreshed = await svc.patch(`/v1/domains/${ulid}`, a.token, { refresh_ssl: true });
    expect(refreshed.body.data.ssl_status).to.equal('pending');
    const recovered = await domainUntil(a, ulid, (x) => x.ssl_status === 'active');
    expect(recovered.ssl_error).to.equal(null);
    expect((await tlsGet(brokenHost, '/')).subject).to.equal(`DNS:${brokenHost}`);
  });

  it('hides every certificate detail and action from another organization', async () => {
    expect((await svc.get(`/v1/domains/${domainUlid}`, b.token)).status).to.equal(404);
    expect((await svc.patch(`/v1/domains/${domainUlid}`, b.token, { refresh_ssl: true })).status).to.equal(404);
    expect((await svc.delete(`/v1/domains/${domainUlid}`, b.token)).status).to.equal(404);
    const list = await svc.get('/v1/domains', b.token);
    expect(list.text).to.not.include(host);
    expect((await svc.get(`/v1/domains/${domainUlid}`, a.token)).body.data.ssl_status).to.equal('active');
  });

  it('counts every transition in /metrics', async () => {
    const metrics = (await svc.get('/metrics')).text;
    for (const [transition, atLeast] of [
      ['verified', 2],
      ['certificate_issuing', 4],
      ['certificate_issued', 3],
      ['certificate_failed', 1],
    ] as const) {
      const m = new RegExp(`^domain_transitions_total\\{transition="${transition}"\\} (\\d+)$`, 'm').exec(metrics);
      expect(Number(m?.[1]), transition).to.be.greaterThanOrEqual(atLeast);
    }
  });

  it('makes a domain unverified after its TXT record is missing for the grace period: no renewals, codes answer until expiry', async () => {
    dns.clear(`_qr-verify.${host}`);
    dns.setA(host, '127.0.0.1');
    await runDomainMaintenance(svc.app);
    let d = (await svc.get(`/v1/domains/${domainUlid}`, a.token)).body.data;
    expect(d.status).to.equal('active');
    expect(d.verification.last_error).to.equal(`No TXT record found at _qr-verify.${host}.`);

    svc.clock.advance(73 * 3600_000);
    const report = await runDomainMaintenance(svc.app);
    expect(report.unverified).to.equal(1);
    d = (await svc.get(`/v1/domains/${domainUlid}`, a.token)).body.data;
    expect(d.status).to.equal('unverified');
    expect(d.verification.last_error).to.match(/missing since .*unverified/);

    // No renewal for it even inside the window; its certificate and codes keep working meanwhile.
    const { id } = await svc.app.db('domains').where({ ulid: domainUlid }).first('id');
    const soon = new Date(svc.clock.now().getTime() + 5 * 86_400_000);
    await svc.app.db('domains').where({ id }).update({ ssl_expires_at: soon });
    await svc.app.db.raw(`delete from graphile_worker._private_jobs where key = ?`, [`domain-certificate:${id}`]);
    await runDomainMaintenance(svc.app);
    const { rows } = await svc.app.db.raw(`select 1 from graphile_worker._private_jobs where key = ?`, [
      `domain-certificate:${id}`,
    ]);
    expect(rows).to.have.length(0);
    expect((await tlsGet(host, '/menu')).status).to.equal(302);

    // Past its certificate's expiry the domain stops answering.
    svc.clock.advance(6 * 86_400_000);
    const gone = await hit(redirect.port, host, '/menu');
    expect(gone.status).to.equal(404);

    // The record back: verified again by the next re-check, a certificate queued.
    svc.clock.reset();
    dns.setTxt(`_qr-verify.${host}`, [verificationToken(svc.app, a.org, host)]);
    expect((await runDomainMaintenance(svc.app)).reverified).to.equal(1);
    await domainUntil(a, domainUlid, (x) => x.status === 'active' && x.ssl_status === 'active');
  });

  it('says what failed when the ACME directory does not answer: connection refused on its URL', async () => {
    const closed = await freePort();
    const directoryUrl = `https://127.0.0.1:${closed}/dir`;
    const issuer = new AcmeIssuer(svc.app.db, new Sealer(svc.app.secretKey), svc.app.log, {
      directoryUrl,
      caPem: pebble.listenerCaPem,
      contactEmail: null,
    });
    const err = await issuer.issue(`never.${tag}.customer.test`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AcmeIssuanceError);
    expect((err as Error).message).to.equal(
      `Registering the ACME account failed: the ACME server did not answer: connection refused (ECONNREFUSED) on GET ${directoryUrl}`,
    );
    expect(await svc.app.db('acme_accounts').where({ directory_url: directoryUrl })).to.have.length(0);
  });

  it('registers again and issues when the ACME server has forgotten the account (a reset server)', async () => {
    const before = await svc.app.db('acme_accounts').where({ directory_url: pebble.directoryUrl }).first();
    expect(before, 'an account from the issuances above').to.not.equal(undefined);
    const servedBefore = (await tlsGet(host, '/')).fingerprint;
    await pebble.restart();
    const refreshed = await svc.patch(`/v1/domains/${domainUlid}`, a.token, { refresh_ssl: true });
    expect(refreshed.body.data.ssl_status).to.equal('pending');
    const d = await domainUntil(a, domainUlid, (x) => x.ssl_status !== 'pending' && x.ssl_status !== 'issuing');
    expect([d.ssl_status, d.ssl_error]).to.deep.equal(['active', null]);
    const after = await svc.app.db('acme_accounts').where({ directory_url: pebble.directoryUrl });
    expect(after).to.have.length(1);
    expect(after[0].account_key_sealed.equals(before.account_key_sealed)).to.equal(false);
    // The certificate served now is the reset server's.
    const served = await tlsGet(host, '/');
    expect(served.fingerprint).to.not.equal(servedBefore);
    expect(served.subject).to.equal(`DNS:${host}`);
  });
});
