import { expect } from 'chai';
import { verificationToken } from '../../server/domains/service.js';
import { runDomainCertificate } from '../../workers/tasks/domain-certificate.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

const FALLBACKS = ['http://localhost:3001', 'https://go.qr-service.test'];
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('domains: /v1/domains', () => {
  let dns: TestDnsServer;
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let hostN = 0;
  const newHost = () => `qr${++hostN}.acme-${Math.random().toString(36).slice(2, 8)}.test`;

  before(async () => {
    dns = await startDnsServer();
    svc = await startTestService({ config: { dnsResolvers: [dns.address], fallbackOrigins: FALLBACKS } });
    a = await svc.createOrg();
    b = await svc.createOrg();
  });
  after(async () => {
    await svc?.close();
    await dns?.close();
  });
  afterEach(() => svc.clock.reset());

  async function create(org: TestOrg, host = newHost(), verify?: boolean) {
    const res = await svc.post('/v1/domains', org.token, verify === undefined ? { host } : { host, verify });
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }

  async function jobsFor(domainUlid: string) {
    const { id } = await svc.app.db('domains').where({ ulid: domainUlid }).first('id');
    const { rows } = await svc.app.db.raw(
      `select t.identifier as task_identifier, j.key, j.payload
         from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where j.key = ?`,
      [`domain-certificate:${id}`],
    );
    return {
      id: id as number,
      rows: rows as { task_identifier: string; key: string; payload: Record<string, unknown> }[],
    };
  }

  async function publish(org: TestOrg, host: string) {
    dns.setTxt(`_qr-verify.${host}`, ['unrelated=1', verificationToken(svc.app, org.org, host)]);
  }

  describe('GET /v1/domains', () => {
    it('lists exactly the shared fallback hosts for a new organization', async () => {
      const fresh = await svc.createOrg();
      const res = await svc.get('/v1/domains', fresh.token);
      expect(res.status).to.equal(200);
      expect(res.body.meta).to.deep.equal({ next_cursor: null });
      const data = res.body.data as Record<string, unknown>[];
      expect(data.map((d) => d.host)).to.deep.equal(['localhost:3001', 'go.qr-service.test']);
      for (const d of data) {
        expect(d).to.include({
          type: 'fallback',
          status: 'active',
          ssl_status: 'active',
          is_primary: false,
          is_shared: true,
        });
        expect(d.verification).to.deep.equal({});
        expect(d.ulid).to.match(ULID_RE);
      }
    });

    it('lists the organization’s custom domains after the fallbacks and never another organization’s', async () => {
      const org = await svc.createOrg();
      const other = await svc.createOrg();
      const mine = await create(org);
      await create(other);
      const res = await svc.get('/v1/domains', org.token);
      expect(res.body.data.map((d: { host: string }) => d.host)).to.deep.equal([
        'localhost:3001',
        'go.qr-service.test',
        mine.host,
      ]);
    });

    it('pages with limit and cursor', async () => {
      const org = await svc.createOrg();
      const d1 = await create(org);
      const d2 = await create(org);
      const p1 = await svc.get('/v1/domains?limit=3', org.token);
      expect(p1.status).to.equal(200);
      expect(p1.body.data.map((d: { host: string }) => d.host)).to.deep.equal([
        'localhost:3001',
        'go.qr-service.test',
        d1.host,
      ]);
      expect(p1.body.meta.next_cursor).to.be.a('string');
      const p2 = await svc.get(`/v1/domains?limit=3&cursor=${p1.body.meta.next_cursor}`, org.token);
      expect(p2.body.data.map((d: { host: string }) => d.host)).to.deep.equal([d2.host]);
      expect(p2.body.meta.next_cursor).to.equal(null);
    });

    it('refuses a limit outside 1..1000 and a cursor it did not issue', async () => {
      for (const [q, field] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=abc', 'limit'],
        ['cursor=bm9wZQ', 'cursor'],
        ['foo=1', 'foo'],
      ]) {
        const res = await svc.get(`/v1/domains?${q}`, a.token);
        expect(res.status, q).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors, q).to.have.property(field);
      }
    });
  });

  describe('POST /v1/domains', () => {
    it('creates a pending custom domain with its verification record', async () => {
      svc.clock.set('2026-03-01T10:00:00.000Z');
      const host = newHost();
      const res = await svc.post('/v1/domains', a.token, { host });
      expect(res.status).to.equal(201);
      const d = res.body.data;
      expect(d.ulid).to.match(ULID_RE);
      expect(d).to.deep.equal({
        ulid: d.ulid,
        host,
        type: 'custom',
        status: 'pending',
        ssl_status: 'pending',
        ssl_expires_at: null,
        ssl_error: null,
        is_primary: false,
        is_shared: false,
        verified_at: null,
        verification: {
          txt_record_name: `_qr-verify.${host}`,
          txt_record_value: verificationToken(svc.app, a.org, host),
          cname_target: 'localhost',
          claim_expires_at: '2026-03-08T10:00:00.000Z',
          last_checked_at: null,
          last_error: null,
        },
        settings: {},
        created_at: '2026-03-01T10:00:00.000Z',
        updated_at: '2026-03-01T10:00:00.000Z',
      });
      expect(d.verification.txt_record_value).to.match(/^qr-verify=[A-Za-z0-9_-]{32}$/);
      expect((await jobsFor(d.ulid)).rows).to.have.length(0);
      const read = await svc.get(`/v1/domains/${d.ulid}`, a.token);
      expect(read.body.data).to.deep.equal(d);
    });

    it('stores an internationalized host lowercase in punycode', async () => {
      const tag = Math.random().toString(36).slice(2, 8);
      const d = await create(a, `QR-${tag}.Bücher.Example`);
      expect(d.host).to.equal(`qr-${tag}.xn--bcher-kva.example`);
      expect(d.verification.txt_record_name).to.equal(`_qr-verify.${d.host}`);
    });

    it('gives different verification values to two organizations for the same host', () => {
      expect(verificationToken(svc.app, a.org, 'x.example.com')).to.not.equal(
        verificationToken(svc.app, b.org, 'x.example.com'),
      );
    });

    const invalidHosts = [
      '1.2.3.4',
      '[::1]',
      'qr.example.com:8443',
      'https://qr.example.com',
      'qr.example.com/path',
      'qr.example.com.',
      'qr.example.com?x',
      'localhost',
      'a_b.example.com',
      '',
      'go.qr-service.test',
      'GO.QR-SERVICE.TEST',
      'localhost.',
    ];
    for (const host of invalidHosts) {
      it(`refuses the host ${JSON.stringify(host)} with 422 on host`, async () => {
        const before = await svc.app.db('domains').count<{ count: number }[]>('* as count');
        const res = await svc.post('/v1/domains', a.token, { host });
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(Object.keys(res.body.errors)).to.deep.equal(['host']);
        const after = await svc.app.db('domains').count<{ count: number }[]>('* as count');
        expect(Number(after[0].count)).to.equal(Number(before[0].count));
      });
    }

    it('accepts a claim on a host another organization claimed (claims hold nothing until verified)', async () => {
      const d = await create(a);
      const res = await svc.post('/v1/domains', b.token, { host: d.host.toUpperCase() });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ host: d.host, status: 'pending' });
    });

    it('refuses the same host twice in one organization', async () => {
      const d = await create(a);
      const res = await svc.post('/v1/domains', a.token, { host: d.host });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.have.property('host');
    });

    it('refuses a missing host, wrong types and unknown fields', async () => {
      const cases: [unknown, string][] = [
        [{}, 'host'],
        [{ host: 42 }, 'host'],
        [{ host: newHost(), verify: 'yes' }, 'verify'],
        [{ host: newHost(), type: 'fallback' }, 'type'],
        [{ host: newHost(), status: 'active' }, 'status'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.post('/v1/domains', a.token, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
      }
    });

    it('verifies at once with verify=true when the TXT record is already published', async () => {
      svc.clock.set('2026-03-02T08:00:00.000Z');
      const host = newHost();
      await publish(a, host);
      const d = await create(a, host, true);
      expect(d).to.include({ status: 'active', ssl_status: 'pending', verified_at: '2026-03-02T08:00:00.000Z' });
      expect(d.verification.last_checked_at).to.equal('2026-03-02T08:00:00.000Z');
      expect(d.verification.last_error).to.equal(null);
      const jobs = await jobsFor(d.ulid);
      expect(jobs.rows).to.have.length(1);
      expect(jobs.rows[0].task_identifier).to.equal('domain-certificate');
      expect(jobs.rows[0].payload).to.deep.equal({ org_id: a.org.id, domain_id: jobs.id, reason: 'verified' });
      expect(dns.queries.filter((q) => q.name === `_qr-verify.${host}` && q.type === 16).length).to.be.greaterThan(0);
    });

    it('keeps the domain pending with verify=true when no TXT record exists, and says why', async () => {
      svc.clock.set('2026-03-02T09:00:00.000Z');
      const host = newHost();
      const d = await create(a, host, true);
      expect(d).to.include({ status: 'pending', verified_at: null });
      expect(d.verification.last_checked_at).to.equal('2026-03-02T09:00:00.000Z');
      expect(d.verification.last_error).to.equal(`No TXT record found at _qr-verify.${host}.`);
      expect((await jobsFor(d.ulid)).rows).to.have.length(0);
    });
  });

  describe('PATCH /v1/domains/{domain_ulid} verify', () => {
    it('stays pending on a wrong value, then becomes active once the record matches', async () => {
      const d = await create(a);
      dns.setTxt(`_qr-verify.${d.host}`, ['qr-verify=somebody-else']);
      svc.clock.set('2026-03-03T10:00:00.000Z');
      const miss = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { verify: true });
      expect(miss.status).to.equal(200);
      expect(miss.body.data.status).to.equal('pending');
      expect(miss.body.data.verification.last_error).to.equal(
        `The TXT records at _qr-verify.${d.host} do not contain the expected value (found 1 other record).`,
      );
      expect(miss.body.data.updated_at).to.equal('2026-03-03T10:00:00.000Z');

      await publish(a, d.host);
      svc.clock.set('2026-03-03T10:05:00.000Z');
      const hit = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { verify: true });
      expect(hit.status).to.equal(200);
      expect(hit.body.data).to.include({
        status: 'active',
        ssl_status: 'pending',
        verified_at: '2026-03-03T10:05:00.000Z',
      });
      expect(hit.body.data.verification.last_error).to.equal(null);
      expect((await jobsFor(d.ulid)).rows).to.have.length(1);
    });

    it('reports a failing resolver without changing the status', async () => {
      const d = await create(a);
      dns.fail(`_qr-verify.${d.host}`);
      const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { verify: true });
      expect(res.status).to.equal(200);
      expect(res.body.data.status).to.equal('pending');
      expect(res.body.data.verification.last_error).to.equal(
        `The DNS lookup of _qr-verify.${d.host} failed (ESERVFAIL); try again later.`,
      );
    });

    it('keeps an active domain active when a re-check misses, recording the error', async () => {
      const host = newHost();
      await publish(a, host);
      const d = await create(a, host, true);
      dns.clear(`_qr-verify.${host}`);
      const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { verify: true });
      expect(res.body.data.status).to.equal('active');
      expect(res.body.data.verified_at).to.equal(d.verified_at);
      expect(res.body.data.verification.last_error).to.equal(`No TXT record found at _qr-verify.${host}.`);
      expect((await jobsFor(d.ulid)).rows).to.have.length(1);
    });

    it('answers 409 for verify on a shared fallback host', async () => {
      const list = await svc.get('/v1/domains', a.token);
      const fallback = list.body.data[0];
      const res = await svc.patch(`/v1/domains/${fallback.ulid}`, a.token, { verify: true });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('conflict');
    });
  });

  describe('PATCH /v1/domains/{domain_ulid} refresh_ssl', () => {
    it('answers 409 for a pending domain and queues nothing', async () => {
      const d = await create(a);
      const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { refresh_ssl: true });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('conflict');
      expect((await jobsFor(d.ulid)).rows).to.have.length(0);
    });

    it('sets ssl_status pending and queues one certificate job for an active domain', async () => {
      const host = newHost();
      await publish(a, host);
      const d = await create(a, host, true);
      await svc.app.db('domains').where({ ulid: d.ulid }).update({ ssl_status: 'failed' });
      await svc.app.db.raw(`delete from graphile_worker._private_jobs where key = ?`, [
        `domain-certificate:${(await jobsFor(d.ulid)).id}`,
      ]);
      const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { refresh_ssl: true });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ status: 'active', ssl_status: 'pending' });
      const jobs = await jobsFor(d.ulid);
      expect(jobs.rows).to.have.length(1);
      expect(jobs.rows[0].payload).to.deep.equal({ org_id: a.org.id, domain_id: jobs.id, reason: 'refresh' });
      // The job key keeps one pending job per domain however often it is asked.
      await svc.patch(`/v1/domains/${d.ulid}`, a.token, { refresh_ssl: true });
      expect((await jobsFor(d.ulid)).rows).to.have.length(1);
    });

    it('verifies and refreshes in one request when both are asked', async () => {
      const d = await create(a);
      await publish(a, d.host);
      const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { verify: true, refresh_ssl: true });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ status: 'active', ssl_status: 'pending' });
      expect((await jobsFor(d.ulid)).rows.map((r) => r.payload.reason)).to.deep.equal(['refresh']);
    });

    it('answers 409 for a shared fallback host', async () => {
      const fallback = (await svc.get('/v1/domains', a.token)).body.data[1];
      const res = await svc.patch(`/v1/domains/${fallback.ulid}`, a.token, { refresh_ssl: true });
      expect(res.status).to.equal(409);
    });
  });

  describe('PATCH /v1/domains/{domain_ulid} is_primary and settings', () => {
    it('keeps at most one primary domain per organization', async () => {
      const org = await svc.createOrg();
      const d1 = await create(org);
      const d2 = await create(org);
      const r1 = await svc.patch(`/v1/domains/${d1.ulid}`, org.token, { is_primary: true });
      expect(r1.status).to.equal(200);
      expect(r1.body.data.is_primary).to.equal(true);
      const r2 = await svc.patch(`/v1/domains/${d2.ulid}`, org.token, { is_primary: true });
      expect(r2.body.data.is_primary).to.equal(true);
      const list = (await svc.get('/v1/domains', org.token)).body.data as { ulid: string; is_primary: boolean }[];
      expect(list.filter((d) => d.is_primary).map((d) => d.ulid)).to.deep.equal([d2.ulid]);
      const r3 = await svc.patch(`/v1/domains/${d2.ulid}`, org.token, { is_primary: false });
      expect(r3.body.data.is_primary).to.equal(false);
      const after = (await svc.get('/v1/domains', org.token)).body.data as { is_primary: boolean }[];
      expect(after.filter((d) => d.is_primary)).to.have.length(0);
    });

    it('leaves exactly one primary domain when eight requests race', async () => {
      const org = await svc.createOrg();
      const made = [];
      for (let i = 0; i < 8; i++) made.push(await create(org));
      const results = await Promise.all(
        made.map((d) => svc.patch(`/v1/domains/${d.ulid}`, org.token, { is_primary: true })),
      );
      expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
      const primaries = await svc.app
        .db('domains')
        .where({ org_id: org.org.id, is_primary: true })
        .count<{ c: number }[]>('* as c');
      expect(Number(primaries[0].c)).to.equal(1);
    });

    it('does not touch another organization’s primary domain', async () => {
      const da = await create(a);
      const db = await create(b);
      await svc.patch(`/v1/domains/${da.ulid}`, a.token, { is_primary: true });
      await svc.patch(`/v1/domains/${db.ulid}`, b.token, { is_primary: true });
      expect((await svc.get(`/v1/domains/${da.ulid}`, a.token)).body.data.is_primary).to.equal(true);
    });

    it('refuses a shared fallback host as primary with 422', async () => {
      const fallback = (await svc.get('/v1/domains', a.token)).body.data[0];
      const res = await svc.patch(`/v1/domains/${fallback.ulid}`, a.token, { is_primary: true });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.deep.equal({ is_primary: ['A shared fallback domain cannot be primary.'] });
    });

    it('merges settings; null removes a key', async () => {
      const d = await create(a);
      const r1 = await svc.patch(`/v1/domains/${d.ulid}`, a.token, {
        settings: { root_redirect: 'https://acme.test/', not_found_redirect: 'https://acme.test/404' },
      });
      expect(r1.status).to.equal(200);
      expect(r1.body.data.settings).to.deep.equal({
        root_redirect: 'https://acme.test/',
        not_found_redirect: 'https://acme.test/404',
      });
      const r2 = await svc.patch(`/v1/domains/${d.ulid}`, a.token, { settings: { root_redirect: null } });
      expect(r2.body.data.settings).to.deep.equal({ not_found_redirect: 'https://acme.test/404' });
      const stored = await svc.app.db('domains').where({ ulid: d.ulid }).first('settings');
      expect(stored.settings).to.deep.equal({ not_found_redirect: 'https://acme.test/404' });
    });

    it('refuses invalid bodies with 422 and changes nothing', async () => {
      const d = await create(a);
      const cases: [unknown, string][] = [
        [{ verify: 'true' }, 'verify'],
        [{ refresh_ssl: 1 }, 'refresh_ssl'],
        [{ is_primary: null }, 'is_primary'],
        [{ settings: { root_redirect: 'ftp://acme.test/' } }, 'settings.root_redirect'],
        [{ settings: { root_redirect: 'not a url' } }, 'settings.root_redirect'],
        [{ settings: { other: 'https://x.test' } }, 'settings.other'],
        [{ settings: 'x' }, 'settings'],
        [{ host: 'other.example.com' }, 'host'],
        [{ status: 'active' }, 'status'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.patch(`/v1/domains/${d.ulid}`, a.token, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
      }
      expect((await svc.get(`/v1/domains/${d.ulid}`, a.token)).body.data).to.deep.equal(d);
    });
  });

  describe('GET /v1/domains/{domain_ulid}', () => {
    it('reads a shared fallback host from any organization', async () => {
      const fa = (await svc.get('/v1/domains', a.token)).body.data[1];
      const res = await svc.get(`/v1/domains/${fa.ulid}`, b.token);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal(fa);
    });

    it('answers 422 for a malformed ULID and 404 for an unknown one', async () => {
      const bad = await svc.get('/v1/domains/not-a-ulid', a.token);
      expect(bad.status).to.equal(422);
      expect(bad.body.errors).to.have.property('domain_ulid');
      const missing = await svc.get('/v1/domains/01HZZZZZZZZZZZZZZZZZZZZZZZ', a.token);
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('not_found');
    });
  });

  describe('isolation between organizations', () => {
    it('answers 404 to every verb on another organization’s domain and changes nothing', async () => {
      const d = await create(a);
      await publish(a, d.host);
      expect((await svc.get(`/v1/domains/${d.ulid}`, b.token)).status).to.equal(404);
      for (const body of [
        { verify: true },
        { refresh_ssl: true },
        { is_primary: true },
        { settings: { root_redirect: 'https://x.test/' } },
      ]) {
        const res = await svc.patch(`/v1/domains/${d.ulid}`, b.token, body);
        expect(res.status, JSON.stringify(body)).to.equal(404);
      }
      expect((await svc.get(`/v1/domains/${d.ulid}`, a.token)).body.data).to.deep.equal(d);
      const listB = (await svc.get('/v1/domains', b.token)).body.data as { ulid: string }[];
      expect(listB.map((x) => x.ulid)).to.not.include(d.ulid);
    });
  });

  describe('abilities', () => {
    it('requires domains.view to read and domains.manage to write', async () => {
      const d = await create(a);
      const viewer = await svc.createToken(a.org, { role: 'viewer' });
      const editor = await svc.createToken(a.org, { role: 'editor' });
      const codesOnly = await svc.createToken(a.org, { abilities: ['codes.view'] });
      const checks: [string, string, string, unknown, string][] = [
        ['GET', '/v1/domains', codesOnly, undefined, 'domains.view'],
        ['GET', `/v1/domains/${d.ulid}`, codesOnly, undefined, 'domains.view'],
        ['POST', '/v1/domains', viewer, { host: newHost() }, 'domains.manage'],
        ['PATCH', `/v1/domains/${d.ulid}`, viewer, { verify: true }, 'domains.manage'],
        ['POST', '/v1/domains', editor, { host: newHost() }, 'domains.manage'],
        ['PATCH', `/v1/domains/${d.ulid}`, editor, { is_primary: true }, 'domains.manage'],
      ];
      for (const [method, path, token, body, ability] of checks) {
        const res = await svc.request(method, path, { token, body });
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body).to.include({ code: 'forbidden', required_ability: ability });
      }
      expect((await svc.get('/v1/domains', viewer)).status).to.equal(200);
      expect((await svc.get(`/v1/domains/${d.ulid}`, viewer)).status).to.equal(200);
    });
  });

  describe('domain-certificate task', () => {
    it('skips a domain that is not verified, and a domain id of another organization', async () => {
      const host = newHost();
      await publish(a, host);
      const active = await create(a, host, true);
      const pending = await create(a);
      const ids = await svc.app.db('domains').whereIn('ulid', [active.ulid, pending.ulid]).select('id', 'ulid');
      const idOf = (u: string) => ids.find((r: { ulid: string }) => r.ulid === u).id as number;
      expect(
        await runDomainCertificate(svc.app, { org_id: a.org.id, domain_id: idOf(pending.ulid), reason: 'verified' }),
      ).to.equal('skipped');
      // Bound to its organization: another organization's id does not reach the domain.
      expect(
        await runDomainCertificate(svc.app, { org_id: b.org.id, domain_id: idOf(active.ulid), reason: 'refresh' }),
      ).to.equal('skipped');
      expect((await svc.get(`/v1/domains/${active.ulid}`, a.token)).body.data.ssl_status).to.equal('pending');
      expect((await svc.get(`/v1/domains/${pending.ulid}`, a.token)).body.data.ssl_status).to.equal('pending');
    });
  });
});
