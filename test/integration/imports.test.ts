import { expect } from 'chai';
import { ulid } from 'ulid';
import { codeScansOnDays } from '../../server/analytics/queries.js';
import { importedLinks } from '../../server/imports/repository.js';
import { runJobs as runJobsOnce } from '../helpers/jobs.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { BitlyServer, DubServer, KuttServer, ShlinkServer, type ShlinkUrl } from '../helpers/source-servers.js';

const UA_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const UA_DESKTOP =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

describe('Imports: /v1/imports', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let shlink: ShlinkServer;

  const runJobs = () => runJobsOnce(svc.app);
  const codes = (org: TestOrg) =>
    svc.app.db('qr_codes').where({ org_id: org.org.id }).whereNull('deleted_at').orderBy('id');
  const imported = async (orgId: number, code?: number) => {
    const rs = await svc.app.ch.client.query({
      query: `SELECT count() AS n, groupUniqArray(import_source) AS s FROM ${svc.app.ch.database}.scan_events
               WHERE org_id = {org:UInt64} AND source = 'import' ${code ? 'AND code_id = {code:UInt64}' : ''}`,
      query_params: { org: orgId, code: code ?? 0 },
      format: 'JSONEachRow',
    });
    const [r] = await rs.json<{ n: string; s: string[] }>();
    return { n: Number(r.n), sources: r.s };
  };

  async function start(org: TestOrg, body: Record<string, unknown>) {
    const res = await svc.post('/v1/imports', org.token, body);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.data.status).to.equal('previewing');
    await runJobs();
    const read = await svc.get(`/v1/imports/${res.body.data.ulid}`, org.token);
    return { imp: read.body.data, token: res.body.meta.confirm_token as string };
  }

  async function confirm(org: TestOrg, ulid: string, token: string) {
    const res = await svc.post(`/v1/imports/${ulid}/confirm`, org.token, { confirm_token: token });
    expect(res.status, res.text).to.equal(202);
    await runJobs();
    return (await svc.get(`/v1/imports/${ulid}`, org.token)).body.data;
  }

  before(async () => {
    svc = await startTestService({ config: { importAllowPrivateSources: true, importMaxRetryAfterSeconds: 2 } });
    a = await svc.createOrg({ plan: 'business_monthly', slug: 'impa' });
    b = await svc.createOrg({ plan: 'business_monthly', slug: 'impb' });
    shlink = await ShlinkServer.start();
  });
  after(async () => {
    await shlink?.close();
    await svc?.close();
  });

  describe('generic CSV', () => {
    const csv = [
      'Long URL,Short Code,Domain,Title,Tags,Created At',
      'https://example.com/one,one,,First,"a,b",2021-03-04 05:06:07',
      'https://example.com/taken,taken,,,,',
      'https://example.com/sho,abc,sho.rt,,,2020-01-01T00:00:00Z',
      'javascript:alert(1),evil,,,,',
      'https://example.com/bad,has space,,,,',
    ].join('\n');

    it('previews the mapping (header case and spaces ignored), then creates the codes with their dates and reports what changed', async () => {
      await svc.post('/v1/qr-codes', a.token, {
        slug: 'taken',
        destination: 'https://x.com',
        domain_ulid: (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid,
      });
      const { imp, token } = await start(a, { source: 'csv', file: csv });
      expect(imp.status).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({
        links: 5,
        new: 4,
        clashes: 1,
        renamed: 2,
        failed: 1,
        domains_not_kept: 1,
      });
      expect(imp.preview.mappings.map((m: { slug: string }) => m.slug)).to.deep.equal([
        'one',
        'taken-2',
        'abc',
        'evil',
        'has-space',
      ]);
      expect(imp.preview.clashes.map((c: { short_code: string }) => c.short_code)).to.deep.equal(['taken']);
      const evil = imp.preview.mappings.find((m: { short_code: string }) => m.short_code === 'evil');
      expect(evil.status).to.equal('failed');
      expect(evil.problems.map((p: { field: string }) => p.field)).to.include('destination');
      expect(imp.preview.unmappable.map((u: { short_code: string }) => u.short_code)).to.include('one'); // tags
      expect(await codes(a)).to.have.length(1); // nothing before confirm

      const done = await confirm(a, imp.ulid, token);
      expect(done.status).to.equal('completed_with_errors');
      expect(done.progress).to.deep.include({
        links_total: 5,
        links_done: 5,
        links_created: 4,
        links_failed: 1,
        percent: 100,
      });
      const rows = await codes(a);
      expect(rows.map((r) => r.slug)).to.deep.equal([
        'impa/taken',
        'impa/one',
        'impa/taken-2',
        'impa/abc',
        'impa/has-space',
      ]);
      expect(rows[1].created_at.toISOString()).to.equal('2021-03-04T05:06:07.000Z');
      expect(rows[1].name).to.equal('First');
      const report = (await svc.get(`/v1/imports/${imp.ulid}/report`, a.token)).body.data;
      expect(report.map((r: { short_code: string }) => r.short_code)).to.deep.equal([
        'one',
        'taken',
        'abc',
        'evil',
        'has space',
      ]);
      const row = await svc.app.db('imports').where({ ulid: imp.ulid }).first();
      expect(row.upload).to.equal(null);
      expect(row.credentials).to.equal(null);
    });

    it('matches a re-run on the source and short code: nothing is created twice', async () => {
      const before = (await codes(a)).length;
      const { imp, token } = await start(a, { source: 'csv', file: csv });
      expect(imp.preview.counts).to.deep.include({ links: 5, matched: 4, new: 0, failed: 1 });
      const done = await confirm(a, imp.ulid, token);
      expect(done.progress.links_matched).to.equal(4);
      expect((await codes(a)).length).to.equal(before);
    });

    it('fails a malformed CSV with the line, and refuses a confirm', async () => {
      const { imp, token } = await start(a, { source: 'csv', file: 'long_url,short_code\n"https://x.com,abc\n' });
      expect(imp.status).to.equal('failed');
      expect(imp.error_message).to.match(/malformed/i);
      const res = await svc.post(`/v1/imports/${imp.ulid}/confirm`, a.token, { confirm_token: token });
      expect(res.status).to.equal(409);
    });

    it('answers 422 without the file, without the source’s address or token, and with a wrong confirm token', async () => {
      expect((await svc.post('/v1/imports', a.token, { source: 'csv' })).status).to.equal(422);
      expect((await svc.post('/v1/imports', a.token, { source: 'shlink', credentials: {} })).status).to.equal(422);
      expect((await svc.post('/v1/imports', a.token, { source: 'dub' })).status).to.equal(422);
      const { imp } = await start(a, { source: 'csv', file: 'long_url,short_code\nhttps://x.com,zz\n' });
      expect((await svc.post(`/v1/imports/${imp.ulid}/confirm`, a.token, { confirm_token: 'nope' })).status).to.equal(
        422,
      );
    });

    it('with on_clash skip leaves the clashing link out; with fail refuses the confirm', async () => {
      await svc.post('/v1/qr-codes', a.token, {
        slug: 'handmade',
        destination: 'https://x.com',
        domain_ulid: (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid,
      });
      const file = 'long_url,short_code\nhttps://example.com/t,handmade\nhttps://example.com/n,newone\n';
      const skip = await start(a, { source: 'csv', file, options: { on_clash: 'skip' } });
      expect(skip.imp.preview.counts).to.deep.include({ skipped: 1, new: 1 });
      const fail = await start(a, { source: 'csv', file, options: { on_clash: 'fail' } });
      const res = await svc.post(`/v1/imports/${fail.imp.ulid}/confirm`, a.token, { confirm_token: fail.token });
      expect(res.status).to.equal(409);
      expect(res.body.message).to.match(/on_clash is fail/);
    });
  });

  describe('Shlink (REST v3)', () => {
    // Recent history (older than SCAN_RETENTION_DAYS is not kept); day 1 is 60 days ago.
    const DAY0 = Math.floor(Date.now() / 86_400_000 - 61) * 86_400_000;
    const isoDay = (d: number) => new Date(DAY0 + d * 86_400_000).toISOString().slice(0, 10);
    const day = (d: number, h = 12) => new Date(DAY0 + d * 86_400_000 + h * 3_600_000).toISOString();
    const visits = (n: number, d0: number): ShlinkUrl['visits'] =>
      Array.from({ length: n }, (_, i) => ({
        date: new Date(Date.parse(day(d0)) + i * 60_000).toISOString(),
        referer: i % 2 ? 'https://t.co/x' : '',
        userAgent: i % 3 ? UA_DESKTOP : UA_IPHONE,
        countryCode: i % 2 ? 'DE' : 'US',
      }));

    before(() => {
      shlink.urls = [
        {
          shortCode: 'promo',
          longUrl: 'https://example.com/promo',
          dateCreated: day(1),
          domain: null,
          title: 'Promo',
          meta: { validSince: null, validUntil: '2030-01-01T00:00:00+00:00', maxVisits: 100000 },
          rules: [
            {
              longUrl: 'https://example.com/ios',
              priority: 1,
              conditions: [{ type: 'device', matchKey: null, matchValue: 'ios' }],
            },
            {
              longUrl: 'https://example.com/es',
              priority: 2,
              conditions: [{ type: 'language', matchKey: null, matchValue: 'es-ES' }],
            },
            {
              longUrl: 'https://example.com/q',
              priority: 3,
              conditions: [{ type: 'query-param', matchKey: 'foo', matchValue: 'bar' }],
            },
          ],
          visits: visits(2500, 2),
        },
        ...Array.from({ length: 119 }, (_, i) => ({
          shortCode: `l${i}`,
          longUrl: `https://example.com/${i}`,
          dateCreated: day(1, 13),
          domain: null,
          visits: i === 0 ? visits(3, 5) : [],
        })),
      ];
    });

    const creds = () => ({ url: shlink.url, api_key: shlink.apiKey });

    it('imports short URLs over every page (honouring a 429 with Retry-After), their rules and their visits oldest first', async function () {
      this.timeout(90_000); // 121 links over several pages, with a Retry-After wait
      shlink.faults.push({
        match: /^\/rest\/v3\/short-urls\?/,
        status: 429,
        headers: { 'Retry-After': '1' },
        times: 1,
      });
      const { imp, token } = await start(b, { source: 'shlink', credentials: creds() });
      expect(imp.status, imp.error_message).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({ links: 120, new: 120, scans_expected: 2503 });
      const promo = imp.preview.unmappable.find((u: { short_code: string }) => u.short_code === 'promo');
      expect(promo.problems.map((p: { message: string }) => p.message).join(' ')).to.match(/query-param foo=bar/);
      expect(shlink.requests.filter((r) => r.headers['x-api-key'] !== shlink.apiKey)).to.deep.equal([]);
      // hasRedirectRules (Shlink 4.3+) is false for every other link: only promo's rules are read.
      expect(shlink.requests.filter((r) => /redirect-rules/.test(r.path)).map((r) => r.path)).to.deep.equal([
        '/rest/v3/short-urls/promo/redirect-rules',
      ]);

      const done = await confirm(b, imp.ulid, token);
      expect(done.status).to.equal('completed');
      expect(done.progress).to.deep.include({ links_created: 120, scans_done: 2503, percent: 100 });
      const code = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/promo' }).first();
      expect(code.routing.rules).to.deep.equal([
        { conditions: { os: ['iOS'] }, destination: 'https://example.com/ios' },
        { conditions: { language: ['es'] }, destination: 'https://example.com/es' },
      ]);
      expect(code.redirect_cap).to.equal(100000);
      expect(code.expire_at.toISOString()).to.equal('2030-01-01T00:00:00.000Z');
      expect(await imported(b.org.id, Number(code.id))).to.deep.equal({ n: 2500, sources: ['shlink'] });
      // History at its real dates, in the rollup, and never counted by alerts.
      const daily = await svc.app.ch.client.query({
        query: `SELECT min(scanned_at) AS first, countIf(device_type = 'mobile') AS mobile FROM ${svc.app.ch.database}.scan_events WHERE code_id = {c:UInt64}`,
        query_params: { c: Number(code.id) },
        format: 'JSONEachRow',
      });
      const [d] = await daily.json<{ first: string; mobile: string }>();
      expect(d.first).to.equal(`${isoDay(2)} 12:00:00.000`);
      expect(Number(d.mobile)).to.equal(834);
      expect(await codeScansOnDays(svc.app.ch, b.org.id, [Number(code.id)], [isoDay(2), isoDay(3)])).to.deep.equal([]);
      const row = await svc.app.db('imports').where({ ulid: imp.ulid }).first();
      expect(row.credentials).to.equal(null);
    });

    it('re-run adds only the visits newer than the high-water mark', async () => {
      const promo = shlink.urls[0];
      promo.visits.push(...visits(7, 20));
      const { imp, token } = await start(b, { source: 'shlink', credentials: creds() });
      expect(imp.preview.counts).to.deep.include({ matched: 120, new: 0 });
      const done = await confirm(b, imp.ulid, token);
      expect(done.progress.scans_done).to.equal(7);
      expect((await imported(b.org.id)).n).to.equal(2510);
    });

    it('reads every short URL’s redirect rules from a Shlink older than 4.3 (no hasRedirectRules)', async () => {
      shlink.reportsRedirectRules = false;
      const from = shlink.requests.length;
      try {
        const { imp } = await start(b, { source: 'shlink', credentials: creds() });
        expect(imp.status, imp.error_message).to.equal('staged');
        const rules = shlink.requests.slice(from).filter((r) => /redirect-rules/.test(r.path));
        expect(rules).to.have.length(120);
      } finally {
        shlink.reportsRedirectRules = true;
      }
    });

    it('imports orphan visits on request onto one paused code, reported, and a re-run adds only the newer ones', async function () {
      this.timeout(90_000); // three imports of 121 links
      shlink.orphanVisits = visits(30, 4).map((v, i) => ({
        ...v,
        visitedUrl: `https://s.test/${i % 2 ? 'nope' : ''}`,
        type: i % 2 ? 'invalid_short_url' : 'base_url',
      }));
      const { imp, token } = await start(b, {
        source: 'shlink',
        credentials: creds(),
        options: { orphan_visits: true },
      });
      expect(imp.status, imp.error_message).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({ links: 121, matched: 120, new: 1, scans_expected: 2540 });
      const orphan = imp.preview.unmappable.find(
        (u: { short_code: string }) => u.short_code === 'shlink-orphan-visits',
      );
      expect(orphan.problems.map((p: { field: string }) => p.field)).to.deep.equal(['orphan_visits']);
      const done = await confirm(b, imp.ulid, token);
      expect(done.status, done.error_message).to.equal('completed');
      expect(done.progress.scans_done).to.equal(30);
      const code = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/shlink-orphan-visits' }).first();
      expect(code).to.deep.include({ status: 'paused', name: 'Shlink orphan visits', destination: `${shlink.url}/` });
      expect(await imported(b.org.id, Number(code.id))).to.deep.equal({ n: 30, sources: ['shlink'] });
      expect(shlink.requests.some((r) => r.path.startsWith('/rest/v3/visits/orphan?'))).to.equal(true);

      shlink.orphanVisits.push(
        ...visits(4, 30).map((v) => ({ ...v, visitedUrl: 'https://s.test/x', type: 'regular_404' as const })),
      );
      const again = await start(b, { source: 'shlink', credentials: creds(), options: { orphan_visits: true } });
      expect(again.imp.preview.counts).to.deep.include({ matched: 121, new: 0 });
      expect((await confirm(b, again.imp.ulid, again.token)).progress.scans_done).to.equal(4);
      expect((await imported(b.org.id, Number(code.id))).n).to.equal(34);
      // Without the option the orphan visits stay where they are.
      const plain = await start(b, { source: 'shlink', credentials: creds() });
      expect(plain.imp.preview.counts).to.deep.include({ links: 120 });
    });

    it('a 500 midway fails the import with the reason, keeps what was imported, and a resume finishes without duplicates', async () => {
      shlink.urls = [
        {
          shortCode: 'x1',
          longUrl: 'https://example.com/x1',
          dateCreated: day(1),
          domain: null,
          visits: visits(1500, 3),
        },
        {
          shortCode: 'x2',
          longUrl: 'https://example.com/x2',
          dateCreated: day(2),
          domain: null,
          visits: visits(40, 4),
        },
      ];
      const { imp, token } = await start(a, { source: 'shlink', credentials: creds() });
      // x1's visits are read last page first: page 1 (asked first for the page count) then 2 then 1.
      // The second read of page 1 answers 500: the import stops there with page 2 imported.
      shlink.faults.push({ match: /\/x1\/visits\?.*page=1&/, status: 500, times: 1, after: 1 });
      const failed = await confirm(a, imp.ulid, token);
      expect(failed.status).to.equal('failed');
      expect(failed.error_message).to.match(/answered 500.*Internal Server Error/);
      expect(failed.resumable).to.equal(true);
      expect(failed.progress.links_created).to.equal(2);
      const kept = (await imported(a.org.id)).n;
      expect(kept).to.equal(failed.progress.scans_done);
      expect(kept).to.equal(500);
      expect((await svc.app.db('imports').where({ ulid: imp.ulid }).first()).credentials).to.equal(null);

      const noCreds = await svc.post(`/v1/imports/${imp.ulid}/resume`, a.token, {});
      expect(noCreds.status).to.equal(422);
      const resumed = await svc.post(`/v1/imports/${imp.ulid}/resume`, a.token, { credentials: creds() });
      expect(resumed.status, resumed.text).to.equal(202);
      await runJobs();
      const done = (await svc.get(`/v1/imports/${imp.ulid}`, a.token)).body.data;
      expect(done.status).to.equal('completed');
      expect((await imported(a.org.id)).n).to.equal(1540);
      expect(done.progress.scans_done).to.equal(1540);
    });

    it('writes a long history in batches while reading on, and a failure after the first batch resumes exactly', async function () {
      this.timeout(120_000); // 30,000 visits, twice read in part
      // An organization of its own: the calls of org a's tests stay within its plan's rate limit.
      const c = await svc.createOrg({ plan: 'business_monthly', slug: 'impbig' });
      shlink.urls = [
        {
          shortCode: 'big',
          longUrl: 'https://example.com/big',
          dateCreated: day(1),
          domain: null,
          visits: visits(30_000, 5),
        },
      ];
      const { imp, token } = await start(c, { source: 'shlink', credentials: creds() });
      // Pages are read 30, 29, ... 1 (after page 1 for the count): page 3 is the 28th read, after
      // 27,000 visits, so the first batch of 25,000 was handed over while reading went on.
      shlink.faults.push({ match: /\/big\/visits\?.*page=3&/, status: 500, times: 1 });
      const failed = await confirm(c, imp.ulid, token);
      expect(failed.status).to.equal('failed');
      const code = await svc.app.db('qr_codes').where({ org_id: c.org.id, slug: 'impbig/big' }).first();
      expect((await imported(c.org.id, Number(code.id))).n).to.equal(27_000);
      expect(failed.progress.scans_done).to.equal(27_000);
      const resumed = await svc.post(`/v1/imports/${imp.ulid}/resume`, c.token, { credentials: creds() });
      expect(resumed.status, resumed.text).to.equal(202);
      await runJobs();
      const done = (await svc.get(`/v1/imports/${imp.ulid}`, c.token)).body.data;
      expect(done.status).to.equal('completed');
      expect(done.progress.scans_done).to.equal(30_000);
      expect((await imported(c.org.id, Number(code.id))).n).to.equal(30_000);
      const mark = await svc.app.db('imported_links').where({ org_id: c.org.id, source_key: '/big' }).first();
      expect(Number(mark.scans_imported)).to.equal(30_000);
    });

    it('fails clearly on refused credentials and on a 429 longer than allowed', async () => {
      const bad = await start(a, { source: 'shlink', credentials: { url: shlink.url, api_key: 'wrong' } });
      expect(bad.imp.status).to.equal('failed');
      expect(bad.imp.error_message).to.match(/refused the credentials \(401\): Invalid API key/);
      shlink.faults.push({ match: /short-urls\?/, status: 429, headers: { 'Retry-After': '3600' }, times: 1 });
      const slow = await start(a, { source: 'shlink', credentials: creds() });
      expect(slow.imp.error_message).to.match(/rate limiting \(429, Retry-After 3600 s\)/);
    });
  });

  describe('Bitly (API v4)', () => {
    let bitly: BitlyServer;
    before(async () => {
      bitly = await BitlyServer.start();
      const recent = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00+0000';
      bitly.links = [
        ...Array.from({ length: 130 }, (_, i) => ({
          id: `bit.ly/b${i}`,
          long_url: `https://example.com/b${i}`,
          created_at: '2023-05-06T07:08:09+0000',
          group: 'Bg1',
          clicks:
            i === 0
              ? [
                  { date: recent(3), clicks: 4 },
                  { date: recent(2), clicks: 0 },
                  { date: recent(1), clicks: 6 },
                ]
              : [],
        })),
        {
          id: 'bit.ly/brand',
          long_url: 'https://example.com/brand',
          title: 'Brand',
          created_at: '2023-01-01T00:00:00+0000',
          group: 'Bg2',
          custom_bitlinks: ['https://go.bitly.test/spring'],
          clicks: [{ date: recent(5), clicks: 3 }],
        },
        {
          id: 'bit.ly/old',
          long_url: 'https://example.com/old',
          archived: true,
          created_at: '2022-01-01T00:00:00+0000',
          group: 'Bg2',
          clicks: [],
        },
      ];
      await svc.app.db('domains').insert({
        ulid: ulid(),
        org_id: b.org.id,
        host: 'go.bitly.test',
        type: 'custom',
        status: 'active',
      });
    });
    after(() => bitly.close());

    it('imports every group’s Bitlinks over every page, custom bitlinks on their own domain, and daily clicks as scans', async () => {
      const { imp, token } = await start(b, { source: 'bitly', credentials: { url: bitly.url, token: bitly.token } });
      expect(imp.status, imp.error_message).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({ links: 132 }); // 131 Bitlinks (archived left out) + 1 custom
      expect(bitly.requests.filter((r) => r.path.includes('search_after='))).to.have.length(1);
      const done = await confirm(b, imp.ulid, token);
      expect(done.status).to.equal('completed');
      expect(done.progress.scans_done).to.equal(13);
      const spring = await svc.app
        .db('qr_codes as c')
        .join('domains as d', 'd.id', 'c.domain_id')
        .where({ 'c.org_id': b.org.id, 'c.slug': 'impb/spring' })
        .first('d.host', 'c.created_at');
      expect(spring.host).to.equal('go.bitly.test');
      expect(spring.created_at.toISOString()).to.equal('2023-01-01T00:00:00.000Z');
      const b0 = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/b0' }).first('id');
      expect((await imported(b.org.id, Number(b0.id))).n).to.equal(10);
    });

    it('imports archived Bitlinks on request, and the links without history when the plan has no clicks (402)', async () => {
      bitly.clicksNeedUpgrade = true;
      const { imp, token } = await start(a, {
        source: 'bitly',
        credentials: { url: bitly.url, token: bitly.token },
        options: { archived: true },
      });
      expect(imp.preview.counts).to.deep.include({ links: 133, new: 133 });
      const done = await confirm(a, imp.ulid, token);
      expect(done.status, done.error_message).to.equal('completed');
      expect(done.progress.scans_done).to.equal(0);
    });
  });

  describe('Bitly (CSV export)', () => {
    it('imports the export’s Bitlinks with their custom bitlinks, dates, tags and click totals; archived rows on request only', async () => {
      const created = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
      const file = [
        'Title,Bitlink,Long URL,Custom Bitlinks,Date Created,Tags,Total Engagements,Archived',
        `Autumn,https://bit.ly/csvAut,https://example.com/autumn,https://go.bitly.test/autumn,${created},"fall,sale",1234,false`,
        `,bit.ly/csvOld,https://example.com/old,,${created},,9,true`,
        `Hostile,bit.ly/csvBad,javascript:alert(1),,${created},,,false`,
      ].join('\n');
      const { imp, token } = await start(b, { source: 'bitly', file });
      expect(imp.status, imp.error_message).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({ links: 3, failed: 1, scans_expected: 1234 });
      expect(
        imp.preview.mappings.map(
          (m: { short_code: string; source_domain: string }) => m.source_domain + '/' + m.short_code,
        ),
      ).to.deep.equal(['bit.ly/csvAut', 'go.bitly.test/autumn', 'bit.ly/csvBad']);
      const done = await confirm(b, imp.ulid, token);
      expect(done.status).to.equal('completed_with_errors');
      expect(done.progress).to.deep.include({ links_created: 2, links_failed: 1, scans_done: 1234 });
      const autumn = await svc.app
        .db('qr_codes as c')
        .join('domains as d', 'd.id', 'c.domain_id')
        .where({ 'c.org_id': b.org.id, 'c.slug': 'impb/autumn' })
        .first('d.host', 'c.name', 'c.created_at');
      expect(autumn).to.deep.include({ host: 'go.bitly.test', name: 'Autumn' });
      expect(autumn.created_at.toISOString()).to.equal(`${created.replace(' ', 'T')}.000Z`);
      const main = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/csvAut' }).first('id');
      expect((await imported(b.org.id, Number(main.id))).n).to.equal(1234);

      const again = await start(a, { source: 'bitly', file, options: { archived: true } });
      expect(again.imp.preview.counts).to.deep.include({ links: 4 });
    });

    it('refuses an export without a Bitlink column with the row named, and needs the file or a token', async () => {
      const { imp } = await start(b, { source: 'bitly', file: 'Title,Long URL\nx,https://example.com\n' });
      expect(imp.status).to.equal('failed');
      expect(imp.error_message).to.match(/Bitly CSV export needs a Bitlink.*row 1/);
      const res = await svc.post('/v1/imports', b.token, { source: 'bitly' });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.have.property('credentials.token');
    });
  });

  describe('Kutt (API v2)', () => {
    let kutt: KuttServer;
    before(async () => {
      kutt = await KuttServer.start();
      const created = new Date(Date.now() - 10 * 86_400_000).toISOString();
      kutt.links = Array.from({ length: 60 }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        address: `k${i}`,
        target: `https://example.com/k${i}`,
        domain: null,
        description: i === 0 ? 'First' : null,
        visit_count: i < 2 ? 5 : 0,
        created_at: created,
        expire_in: i === 0 ? '2031-01-01T00:00:00.000Z' : null,
        password: i === 1,
      }));
    });
    after(() => kutt.close());

    it('imports links over every page with their visit totals, once', async () => {
      const { imp, token } = await start(b, { source: 'kutt', credentials: { url: kutt.url, api_key: kutt.apiKey } });
      expect(imp.preview.counts).to.deep.include({ links: 60, new: 60, scans_expected: 10 });
      expect(imp.preview.unmappable.map((u: { short_code: string }) => u.short_code)).to.deep.equal(['k1']);
      const done = await confirm(b, imp.ulid, token);
      expect(done.progress).to.deep.include({ links_created: 60, scans_done: 10 });
      const k0 = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/k0' }).first();
      expect(k0.name).to.equal('First');
      expect(k0.expire_at.toISOString()).to.equal('2031-01-01T00:00:00.000Z');
      const again = await start(b, { source: 'kutt', credentials: { url: kutt.url, api_key: kutt.apiKey } });
      const second = await confirm(b, again.imp.ulid, again.token);
      expect(second.progress).to.deep.include({ links_matched: 60, scans_done: 0 });
    });
  });

  describe('YOURLS (database export)', () => {
    const t = (d: number, h = 10) =>
      new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10) + ` ${String(h).padStart(2, '0')}:00:00`;
    const dump = [
      '-- MySQL dump 10.13',
      'CREATE TABLE `yourls_url` (`keyword` varchar(100), `url` text, `title` text, `timestamp` timestamp, `ip` varchar(41), `clicks` int);',
      `INSERT INTO \`yourls_url\` VALUES ('y1','https://example.com/y1','It\\'s one','${t(9)}','1.2.3.4',3),('y2','https://example.com/y2?a=1&b=2',NULL,'${t(8)}','1.2.3.4',0);`,
      `INSERT INTO \`yourls_log\` (\`click_id\`, \`click_time\`, \`shorturl\`, \`referrer\`, \`user_agent\`, \`ip_address\`, \`country_code\`) VALUES (1,'${t(3)}','y1','direct','${UA_IPHONE}','5.6.7.8','FR'),(2,'${t(2)}','y1','https://news.example/a','${UA_DESKTOP}','5.6.7.8','DE'),(3,'${t(1)}','y1','direct','curl/8.0','5.6.7.8','');`,
    ].join('\n');

    it('imports keywords and every logged click from a MySQL dump', async () => {
      const { imp, token } = await start(b, { source: 'yourls', file: dump });
      expect(imp.status, imp.error_message).to.equal('staged');
      expect(imp.preview.counts).to.deep.include({ links: 2, new: 2, scans_expected: 3 });
      const done = await confirm(b, imp.ulid, token);
      expect(done.progress).to.deep.include({ links_created: 2, scans_done: 3 });
      const y1 = await svc.app.db('qr_codes').where({ org_id: b.org.id, slug: 'impb/y1' }).first();
      expect(y1.name).to.equal("It's one");
      const rs = await svc.app.ch.client.query({
        query: `SELECT country, referrer, device_type FROM ${svc.app.ch.database}.scan_events WHERE code_id = {c:UInt64} ORDER BY scanned_at`,
        query_params: { c: Number(y1.id) },
        format: 'JSONEachRow',
      });
      expect(await rs.json()).to.deep.equal([
        { country: 'FR', referrer: '', device_type: 'mobile' },
        { country: 'DE', referrer: 'news.example', device_type: 'desktop' },
        { country: '', referrer: '', device_type: 'bot' },
      ]);
    });

    it('reads the two tables as CSV files, and refuses a malformed dump clearly', async () => {
      const url = `keyword,url,title,timestamp,ip,clicks\nyc,https://example.com/yc,,${t(4)},1.1.1.1,1\n`;
      const log = `click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code\n1,${t(2)},yc,direct,${UA_DESKTOP.replace(/,/g, '')},1.1.1.1,US\n`;
      const { imp, token } = await start(a, { source: 'yourls', file: url, log_file: log });
      expect(imp.preview.counts).to.deep.include({ links: 1, scans_expected: 1 });
      expect((await confirm(a, imp.ulid, token)).progress.scans_done).to.equal(1);
      const bad = await start(a, { source: 'yourls', file: "INSERT INTO `yourls_url` VALUES ('x','https://x.com" });
      expect(bad.imp.status).to.equal('failed');
      expect(bad.imp.error_message).to.match(/SQL dump is malformed/);
    });
  });

  describe('Dub (API and CSV export)', () => {
    let dub: DubServer;
    const created = new Date(Date.now() - 20 * 86_400_000).toISOString();
    before(async () => {
      dub = await DubServer.start();
      dub.links = Array.from({ length: 150 }, (_, i) => ({
        id: `link_${i}`,
        domain: 'dub.sh',
        key: `d${i}`,
        url: `https://example.com/d${i}`,
        title: null,
        tags: i === 0 ? [{ id: 't1', name: 'launch', color: 'red' }] : [],
        createdAt: created,
        clicks: i === 0 ? 7 : 0,
      }));
    });
    after(() => dub.close());

    it('imports links over every page of the API with their click totals', async () => {
      dub.faults.push({ match: /page=2/, status: 429, headers: { 'Retry-After': '1' }, times: 1 });
      const { imp, token } = await start(b, { source: 'dub', credentials: { url: dub.url, token: dub.token } });
      expect(imp.preview.counts).to.deep.include({ links: 150, new: 150, scans_expected: 7 });
      const done = await confirm(b, imp.ulid, token);
      expect(done.progress).to.deep.include({ links_created: 150, scans_done: 7 });
    });

    it('imports the CSV export', async () => {
      const file = `Link ID,Short Link,URL,Clicks,Created At,Tags\nlnk_1,https://dub.sh/csv1,https://example.com/c1,2,${created},"a,b"\n`;
      const { imp, token } = await start(a, { source: 'dub', file });
      expect(imp.preview.mappings[0]).to.deep.include({ short_code: 'csv1', source_domain: 'dub.sh' });
      expect((await confirm(a, imp.ulid, token)).progress.scans_done).to.equal(2);
    });
  });

  it('keeps every organization to its own imports (another one’s is a 404) and needs imports.manage', async () => {
    const { imp } = await start(a, { source: 'csv', file: 'long_url,short_code\nhttps://x.com,iso\n' });
    expect((await svc.get(`/v1/imports/${imp.ulid}`, b.token)).status).to.equal(404);
    expect((await svc.get(`/v1/imports/${imp.ulid}/report`, b.token)).status).to.equal(404);
    expect((await svc.post(`/v1/imports/${imp.ulid}/confirm`, b.token, { confirm_token: 'x' })).status).to.equal(404);
    const viewer = await svc.createToken(a.org, { abilities: ['codes.view', 'codes.create'] });
    const res = await svc.post('/v1/imports', viewer, {
      source: 'csv',
      file: 'long_url,short_code\nhttps://x.com,v\n',
    });
    expect(res.status).to.equal(403);
    expect(res.body.required_ability).to.equal('imports.manage');
    expect((await svc.get('/v1/imports', viewer)).status).to.equal(403);
  });

  it('matches the links of an earlier import among the 10,000 links of a large preview in one query', async () => {
    const e = await svc.createOrg({ plan: 'business_monthly', slug: 'impe' });
    const { imp, token } = await start(e, { source: 'csv', file: 'long_url,short_code\nhttps://x.com,big7\n' });
    await confirm(e, imp.ulid, token);
    const earlier = await svc.app.db('imported_links').where({ org_id: e.org.id }).first();
    const keys = Array.from({ length: 10_000 }, (_, i) => ({ domain: earlier.source_domain, key: `/other${i}` }));
    keys[7] = { domain: earlier.source_domain, key: earlier.source_key };
    const seen = await importedLinks(svc.app.db, e.org, 'csv', keys);
    const id = `${earlier.source_domain}\n${earlier.source_key}`;
    expect([...seen.keys()]).to.deep.equal([id]);
    expect(seen.get(id)?.code_id).to.equal(Number(earlier.code_id));
    expect((await importedLinks(svc.app.db, e.org, 'shlink', keys)).size).to.equal(0);
  });

  it('lists an organization’s own imports newest first, page by page, and never another one’s', async () => {
    const c = await svc.createOrg({ plan: 'business_monthly', slug: 'impc' });
    const d = await svc.createOrg({ plan: 'business_monthly', slug: 'impd' });
    const made: string[] = [];
    for (const slug of ['l1', 'l2', 'l3']) {
      const res = await svc.post('/v1/imports', c.token, {
        source: 'csv',
        file: `long_url,short_code\nhttps://x.com,${slug}\n`,
      });
      made.push(res.body.data.ulid);
    }
    await svc.post('/v1/imports', d.token, { source: 'csv', file: 'long_url,short_code\nhttps://x.com,other\n' });
    await runJobs();
    const all = await svc.get('/v1/imports', c.token);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.data.map((i: { ulid: string }) => i.ulid)).to.deep.equal([...made].reverse());
    expect(all.body.data[0]).to.deep.include({ source: 'csv', status: 'staged', awaiting_confirmation: true });
    expect(all.body.data[0].progress.links_total).to.equal(1);
    const first = await svc.get('/v1/imports?limit=2', c.token);
    expect(first.body.data.map((i: { ulid: string }) => i.ulid)).to.deep.equal([made[2], made[1]]);
    const second = await svc.get(`/v1/imports?limit=2&cursor=${first.body.meta.next_cursor}`, c.token);
    expect(second.body.data.map((i: { ulid: string }) => i.ulid)).to.deep.equal([made[0]]);
    expect(second.body.meta.next_cursor).to.equal(null);
    expect((await svc.get('/v1/imports', d.token)).body.data).to.have.length(1);
    expect((await svc.get('/v1/imports?cursor=nonsense', c.token)).status).to.equal(422);
  });
});
