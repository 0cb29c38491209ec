// Hostname claims: a host is held exclusively only once verified; unverified claims of several
// organizations coexist, the first to verify wins and the others fail; claims expire; domains can
// be deleted unless codes use them; no answer tells one organization what another holds.
import { expect } from 'chai';
import { parseCommand, runCommand } from '../../server/cli/commands.js';
import { expireClaims } from '../../server/domains/lifecycle.js';
import { verificationToken } from '../../server/domains/service.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

describe('domains: claims, expiry and deletion', () => {
  let dns: TestDnsServer;
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let n = 0;
  const newHost = () => `go${++n}.claim-${Math.random().toString(36).slice(2, 8)}.test`;

  before(async () => {
    dns = await startDnsServer();
    svc = await startTestService({ config: { dnsResolvers: [dns.address], domainClaimTtlHours: 24 } });
    a = await svc.createOrg();
    b = await svc.createOrg();
  });
  after(async () => {
    await svc?.close();
    await dns?.close();
  });
  afterEach(() => svc.clock.reset());

  async function claim(org: TestOrg, host: string) {
    const res = await svc.post('/v1/domains', org.token, { host });
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }
  const publish = (org: TestOrg, host: string) =>
    dns.setTxt(`_qr-verify.${host}`, [verificationToken(svc.app, org.org, host)]);
  const verify = (org: TestOrg, ulid: string) => svc.patch(`/v1/domains/${ulid}`, org.token, { verify: true });
  const read = async (org: TestOrg, ulid: string) => (await svc.get(`/v1/domains/${ulid}`, org.token)).body.data;

  it('lets a second organization claim a host another one claimed, without telling it so', async () => {
    const host = newHost();
    const first = await claim(a, host);
    const res = await svc.post('/v1/domains', b.token, { host: host.toUpperCase() });
    expect(res.status).to.equal(201);
    expect(res.body.data).to.include({ host, status: 'pending' });
    expect(res.text).to.not.include(first.ulid);
    expect(res.body.data.verification.txt_record_value).to.not.equal(first.verification.txt_record_value);
  });

  it('accepts a claim on a host another organization already verified, and reveals nothing about it', async () => {
    const host = newHost();
    const held = await claim(a, host);
    publish(a, host);
    expect((await verify(a, held.ulid)).body.data.status).to.equal('active');
    const res = await svc.post('/v1/domains', b.token, { host, verify: true });
    expect(res.status).to.equal(201);
    expect(res.body.data.status).to.equal('pending');
    expect(res.body.data.verification.last_error).to.match(/do not contain the expected value/);
    expect(res.text).to.not.include(held.ulid);
    expect((await svc.get('/v1/domains', b.token)).text).to.not.include(held.ulid);
  });

  it('gives the host to the first organization to verify and fails the other claims with a clear status', async () => {
    const host = newHost();
    const ca = await claim(a, host);
    const cb = await claim(b, host);
    publish(b, host);
    const won = await verify(b, cb.ulid);
    expect(won.status).to.equal(200);
    expect(won.body.data).to.include({ status: 'active' });
    const lost = await read(a, ca.ulid);
    expect(lost.status).to.equal('failed');
    expect(lost.verification.last_error).to.equal(
      'Another organization verified this host first; this claim can no longer be verified.',
    );
    // The failed claim cannot verify later, even with its own record published.
    publish(a, host);
    const again = await verify(a, ca.ulid);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('conflict');
    expect(again.text).to.not.include(cb.ulid);
    expect((await read(b, cb.ulid)).status).to.equal('active');
  });

  it('fails a claim that verifies while another organization holds the host', async () => {
    const host = newHost();
    const held = await claim(a, host);
    publish(a, host);
    await verify(a, held.ulid);
    const late = await claim(b, host);
    publish(b, host);
    const res = await verify(b, late.ulid);
    expect(res.status).to.equal(200);
    expect(res.body.data.status).to.equal('failed');
    expect(res.text).to.not.include(held.ulid);
    expect((await read(a, held.ulid)).status).to.equal('active');
  });

  it('lets exactly one of two organizations win when both verify at once', async () => {
    // Five hosts, one after the other: two verifications that each held their own claim first used
    // to deadlock on the host's rows (a 500 for one of them) in most rounds, not in every one.
    for (let round = 0; round < 5; round++) {
      const host = newHost();
      const [ca, cb] = [await claim(a, host), await claim(b, host)];
      dns.setTxt(`_qr-verify.${host}`, [
        verificationToken(svc.app, a.org, host),
        verificationToken(svc.app, b.org, host),
      ]);
      const results = await Promise.all([verify(a, ca.ulid), verify(b, cb.ulid)]);
      // The loser sees its failed claim (200), or 409 when the winner had committed before it was read.
      expect(results.map((r) => r.status)).to.satisfy(
        (s: number[]) => s.includes(200) && s.every((x) => x === 200 || x === 409),
      );
      const statuses = [await read(a, ca.ulid), await read(b, cb.ulid)].map((d) => d.status).sort();
      expect(statuses).to.deep.equal(['active', 'failed']);
    }
  });

  it('refuses the same host twice in one organization while its claim is live, naming no one else', async () => {
    const host = newHost();
    await claim(a, host);
    const res = await svc.post('/v1/domains', a.token, { host });
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.deep.equal({ host: ['This organization already has this host among its domains.'] });
  });

  it('expires an unverified claim after the claim period; it can no longer verify', async () => {
    svc.clock.set('2026-04-01T00:00:00.000Z');
    const host = newHost();
    const c = await claim(a, host);
    expect(c.verification.claim_expires_at).to.equal('2026-04-02T00:00:00.000Z');
    publish(a, host);
    svc.clock.set('2026-04-02T00:00:01.000Z');
    const res = await verify(a, c.ulid);
    expect(res.status).to.equal(409);
    expect(res.body.message).to.match(/expired/);
    expect((await read(a, c.ulid)).status).to.equal('expired');
    // A new claim of the same host starts over.
    const fresh = await claim(a, host);
    expect((await verify(a, fresh.ulid)).body.data.status).to.equal('active');
  });

  it('expires every claim past its period in the maintenance sweep, and no other', async () => {
    svc.clock.set('2026-05-01T00:00:00.000Z');
    const old = await claim(b, newHost());
    svc.clock.set('2026-05-01T20:00:00.000Z');
    const recent = await claim(b, newHost());
    const expired = await expireClaims(svc.app, new Date('2026-05-02T00:00:00.000Z'));
    expect(expired).to.be.greaterThanOrEqual(1);
    expect((await read(b, old.ulid)).status).to.equal('expired');
    expect((await read(b, recent.ulid)).status).to.equal('pending');
  });

  it('shows operators every organization’s domains with qrctl domains list and check HOST (JSON)', async () => {
    const host = newHost();
    const [ca, cb] = [await claim(a, host), await claim(b, host)];
    publish(b, host);
    await verify(b, cb.ulid);
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const code = await runCommand(svc.app, parseCommand(argv), { out: (l) => out.push(l), err: () => undefined });
      return { code, body: JSON.parse(out.join('\n')) };
    };
    const list = await cli('domains', 'list', '--json');
    expect(list.code).to.equal(0);
    const mine = list.body.domains.filter((d: { host: string }) => d.host === host);
    expect(mine.map((d: Record<string, unknown>) => [d.organization, d.status])).to.deep.equal([
      [a.org.slug, 'failed'],
      [b.org.slug, 'active'],
    ]);
    for (const d of mine) expect(d).to.include.keys('ssl_status', 'ssl_expires_at', 'ssl_error', 'last_error');

    const check = await cli('domains', 'check', host.toUpperCase(), '--json');
    expect(check.code).to.equal(0);
    expect(check.body.domains.map((d: { ulid: string }) => d.ulid)).to.deep.equal([ca.ulid, cb.ulid]);
    const won = check.body.domains[1];
    expect(won).to.include({ status: 'active', ssl_status: 'pending', ssl_error: null, certificate: null });
    expect(won.txt).to.deep.equal({ name: `_qr-verify.${host}`, matched: true, reason: null });
    expect(check.body.domains[0].txt.matched).to.equal(false);
    const missing = await cli('domains', 'check', 'nothing.example.test', '--json');
    expect(missing.code).to.equal(2);
    expect(missing.body.error.message).to.match(/no live domain/);
  });

  describe('DELETE /v1/domains/{domain_ulid}', () => {
    it('soft-deletes a domain: gone from reads and lists, its host free to claim again', async () => {
      const host = newHost();
      const d = await claim(a, host);
      const res = await svc.delete(`/v1/domains/${d.ulid}`, a.token);
      expect(res.status).to.equal(204);
      expect((await svc.get(`/v1/domains/${d.ulid}`, a.token)).status).to.equal(404);
      expect((await svc.get('/v1/domains', a.token)).text).to.not.include(d.ulid);
      const row = await svc.app.db('domains').where({ ulid: d.ulid }).first('deleted_at');
      expect(row.deleted_at).to.be.instanceOf(Date);
      await claim(a, host);
      expect((await svc.delete(`/v1/domains/${d.ulid}`, a.token)).status).to.equal(404);
    });

    it('answers 409 domain_in_use while a live code uses the domain, then deletes once it is gone', async () => {
      const d = await claim(a, newHost());
      const code = await svc.post('/v1/qr-codes', a.token, {
        slug: `on-${d.ulid.slice(-6).toLowerCase()}`,
        destination: 'https://example.com/',
        domain_ulid: d.ulid,
      });
      expect(code.status, code.text).to.equal(201);
      const refused = await svc.delete(`/v1/domains/${d.ulid}`, a.token);
      expect(refused.status).to.equal(409);
      expect(refused.body).to.include({ code: 'domain_in_use', codes: 1 });
      expect((await read(a, d.ulid)).ulid).to.equal(d.ulid);
      expect((await svc.delete(`/v1/qr-codes/${code.body.data.ulid}`, a.token)).status).to.equal(204);
      expect((await svc.delete(`/v1/domains/${d.ulid}`, a.token)).status).to.equal(204);
    });

    it('clears the primary flag and brands’ primary domain with it', async () => {
      const d = await claim(a, newHost());
      await svc.patch(`/v1/domains/${d.ulid}`, a.token, { is_primary: true });
      const brand = await svc.post('/v1/brands', a.token, { name: 'Del', primary_domain_ulid: d.ulid });
      expect(brand.status, brand.text).to.equal(201);
      expect((await svc.delete(`/v1/domains/${d.ulid}`, a.token)).status).to.equal(204);
      const after = await svc.get(`/v1/brands/${brand.body.data.ulid}`, a.token);
      expect(after.body.data.primary_domain).to.equal(null);
    });

    it('answers 404 for another organization’s domain and 409 for a shared fallback host', async () => {
      const d = await claim(a, newHost());
      expect((await svc.delete(`/v1/domains/${d.ulid}`, b.token)).status).to.equal(404);
      expect((await read(a, d.ulid)).status).to.equal('pending');
      const fallback = (await svc.get('/v1/domains', a.token)).body.data[0];
      expect(fallback.type).to.equal('fallback');
      const res = await svc.delete(`/v1/domains/${fallback.ulid}`, a.token);
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('conflict');
    });

    it('requires domains.manage', async () => {
      const d = await claim(a, newHost());
      const viewer = await svc.createToken(a.org, { role: 'viewer' });
      const res = await svc.delete(`/v1/domains/${d.ulid}`, viewer);
      expect(res.status).to.equal(403);
      expect(res.body).to.include({ code: 'forbidden', required_ability: 'domains.manage' });
    });
  });

  it('refuses new codes on a claim that failed', async () => {
    const host = newHost();
    const [ca, cb] = [await claim(a, host), await claim(b, host)];
    publish(b, host);
    await verify(b, cb.ulid);
    const res = await svc.post('/v1/qr-codes', a.token, {
      slug: 'on-failed',
      destination: 'https://example.com/',
      domain_ulid: ca.ulid,
    });
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.deep.equal({ domain_ulid: ['This domain takes no new codes (status failed).'] });
  });
});
