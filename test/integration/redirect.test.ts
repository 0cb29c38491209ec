import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { startTestService, type TestService } from '../helpers/harness.js';
import { hashPassword } from '../../server/qr-codes/password.js';
import { countScanBatch, giveBackRedirects, reserveRedirects } from '../../server/qr-codes/scan-lookup.js';
import { RedirectCounters, STALE_SECONDS } from '../../server/redirect/counters.js';
import { ulid } from 'ulid';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { GONE_PAGES, NOT_FOUND_PAGE } from '../../server/redirect/pages.js';
import { notifyBarrier, redirectCacheMarker } from '../helpers/notify-barrier.js';
import {
  ANDROID,
  chRows,
  DESKTOP,
  FALLBACK,
  fallbackDomainId,
  hit,
  insertCode,
  insertCustomDomain,
  IPHONE,
  type CodeInput,
} from './redirect-fixtures.js';

describe('public redirect', function () {
  this.timeout(60_000);
  let svc: TestService;
  let rd: RedirectListener;
  let org: { id: number; slug: string };
  let fallbackId: number;
  let n = 0;

  before(async () => {
    // 127.0.0.1 is a trusted proxy here, so tests can pose as visitors from anywhere.
    svc = await startTestService({ api: false, config: { trustProxy: ['127.0.0.1'] } });
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', {
      flushMs: 50,
      counterFlushMs: 50,
      throttle: { maxAttempts: 3, windowMs: 60_000 },
    });
    const created = await svc.createOrg({ slug: 'acme' });
    org = { id: created.org.id, slug: created.org.slug };
    fallbackId = await fallbackDomainId(svc.app);
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });
  afterEach(() => svc.clock.reset());

  const code = async (over: Partial<CodeInput> = {}) => {
    const slug = over.slug ?? `c${++n}`;
    const id = await insertCode(svc.app, { orgId: org.id, orgSlug: org.slug, domainId: fallbackId, slug, ...over });
    return { id, path: `/${org.slug}/${slug}` };
  };
  const get = (path: string, headers: Record<string, string> = {}, host = FALLBACK) =>
    hit(rd.port, host, path, { headers });

  async function scansOf(codeId: number) {
    await rd.scans.flush();
    return chRows<Record<string, string | number>>(
      svc.app,
      `SELECT * FROM ${svc.app.ch.database}.scan_events WHERE code_id = {id:UInt64} ORDER BY scanned_at, scan_id`,
      { id: codeId },
    );
  }

  describe('resolution and status', () => {
    it('answers an active code on a fallback origin with a private 302 to its destination', async () => {
      const c = await code({ destination: 'https://example.com/a?x=1' });
      const res = await get(c.path);
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('https://example.com/a?x=1');
      expect(res.headers['cache-control']).to.equal('private, max-age=0');
      expect(res.body).to.equal('');
    });

    it('matches the org and code slug case-insensitively and ignores a trailing slash and query', async () => {
      const c = await code({ slug: 'MixedCase', destination: 'https://example.com/m' });
      const res = await get(`/${org.slug.toUpperCase()}/mixedcase/?utm=x`);
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('https://example.com/m');
      expect(c.id).to.be.a('number');
    });

    it('answers HEAD like GET without counting or recording it', async () => {
      const c = await code({ destination: 'https://example.com/head' });
      const res = await hit(rd.port, FALLBACK, c.path, { method: 'HEAD' });
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('https://example.com/head');
      expect(await scansOf(c.id)).to.have.length(0);
      await Promise.all([rd.counters.flush(), rd.scans.flush()]);
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(0);
    });

    it('serves a verified custom domain at /<slug> and only its own codes', async () => {
      const domainId = await insertCustomDomain(svc.app, org.id, 'go.acme.test');
      const own = await code({ slug: 'promo', domainId, destination: 'https://acme.test/promo' });
      expect((await get('/promo', {}, 'go.acme.test')).headers.location).to.equal('https://acme.test/promo');
      expect((await get('/promo', {}, 'go.acme.test:8080')).status).to.equal(302); // a port on the Host header
      // The fully qualified spelling with a trailing dot is the same host, with or without a port.
      expect((await get('/promo', {}, 'go.acme.test.')).headers.location).to.equal('https://acme.test/promo');
      expect((await get('/promo', {}, 'Go.Acme.Test.:8080')).headers.location).to.equal('https://acme.test/promo');
      // The custom-domain code is not served on the fallback origin, nor a fallback code on the domain.
      expect((await get(own.path)).status).to.equal(404);
      const fb = await code({ slug: 'fbonly' });
      expect((await get('/fbonly', {}, 'go.acme.test')).status).to.equal(404);
      expect((await get(fb.path)).status).to.equal(302);
    });

    it('does not serve a custom domain that is not verified', async () => {
      const domainId = await insertCustomDomain(svc.app, org.id, 'pending.acme.test', { status: 'pending' });
      await code({ slug: 'p1', domainId });
      expect((await get('/p1', {}, 'pending.acme.test')).status).to.equal(404);
    });

    it('answers an unknown host and an unknown slug with the 404 page', async () => {
      const unknownHost = await get(`/${org.slug}/whatever`, {}, 'nobody.test');
      expect(unknownHost.status).to.equal(404);
      const res = await get(`/${org.slug}/does-not-exist`);
      expect(res.status).to.equal(404);
      expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(res.body).to.include('<html lang="en">').and.include('This code is not available');
    });

    it('answers pipelined requests in order, 404 and 410 pages among redirects, each with its own headers and body', async () => {
      // 404 and 410 pages leave through the answer gate with the turn's redirects (whose scans are on
      // file first): one connection, every request sent before the first answer, so they share turns
      // of the event loop. This guards the answers' order and content; that the pages take the gate
      // is a matter of speed, which make bench-redirect measures.
      const live = await code({ destination: 'https://example.com/pipelined' });
      const paused = await code({ status: 'paused' });
      const expired = await code({ expire_at: new Date('2020-01-01T00:00:00Z') });
      const asks = [
        ['GET', `/${org.slug}/nope-1`],
        ['GET', live.path],
        ['HEAD', `/${org.slug}/nope-2`],
        ['GET', expired.path],
        ['GET', paused.path],
        ['GET', live.path],
        ['GET', `/${org.slug}/nope-3`],
      ] as const;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(rd.port, '127.0.0.1');
        let got = '';
        socket.setEncoding('latin1');
        socket.on('data', (c: string) => (got += c));
        socket.on('end', () => resolve(got));
        socket.on('error', reject);
        socket.write(
          asks
            .map(
              ([m, p], i) =>
                `${m} ${p} HTTP/1.1\r\nHost: ${FALLBACK}\r\n${i === asks.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
            )
            .join(''),
        );
      });
      // Each answer: its status line, headers, and as many body bytes as its Content-Length (none for HEAD).
      const answers: { status: number; headers: Record<string, string>; body: string }[] = [];
      let at = 0;
      for (const [method] of asks) {
        const end = raw.indexOf('\r\n\r\n', at);
        expect(end, `answer ${answers.length + 1} of ${asks.length}`).to.be.greaterThan(-1);
        const [statusLine, ...lines] = raw.slice(at, end).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
        );
        const length = method === 'HEAD' ? 0 : Number(headers['content-length']);
        answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(end + 4, end + 4 + length) });
        at = end + 4 + length;
      }
      expect(at, 'nothing after the last answer').to.equal(raw.length);
      expect(answers.map((a) => a.status)).to.deep.equal([404, 302, 404, 410, 404, 302, 404]);
      for (const i of [0, 2, 4, 6]) {
        expect(answers[i].headers['content-type']).to.equal('text/html; charset=utf-8');
        expect(Number(answers[i].headers['content-length'])).to.equal(NOT_FOUND_PAGE.length);
      }
      for (const i of [0, 4, 6]) expect(answers[i].body).to.equal(NOT_FOUND_PAGE.toString('latin1'));
      expect(answers[2].body).to.equal('');
      expect(answers[3].body).to.equal(GONE_PAGES.expired.toString('latin1'));
      for (const i of [1, 5]) {
        expect(answers[i].headers.location).to.equal('https://example.com/pipelined');
        expect(answers[i].body).to.equal('');
      }
      expect(await scansOf(live.id)).to.have.length(2);
    });

    for (const status of ['paused', 'archived']) {
      it(`answers a ${status} code with 404`, async () => {
        const c = await code({ status });
        expect((await get(c.path)).status).to.equal(404);
      });
    }

    it('answers a deleted code with 404 as soon as the deletion is notified', async () => {
      const c = await code();
      await notifyBarrier(svc.app, 'redirect_cache', redirectCacheMarker()); // the insert's own notification
      expect((await get(c.path)).status).to.equal(302); // now cached
      await svc.app.db('qr_codes').where({ id: c.id }).update({ deleted_at: new Date() });
      // The cache learns of the change through NOTIFY; the next lookup reads Postgres.
      await notifyBarrier(svc.app, 'redirect_cache', redirectCacheMarker());
      expect((await get(c.path)).status).to.equal(404);
    });

    it('keeps scans of unknown and inactive slugs on a known host as orphan scans', async () => {
      const c = await code({ status: 'paused' });
      await get(`/${org.slug}/never-printed`);
      await get(c.path);
      await rd.orphans.flush();
      const rows = await chRows<{ path: string; reason: string; host: string }>(
        svc.app,
        `SELECT path, reason, host FROM ${svc.app.ch.database}.orphan_scans WHERE path IN ({a:String}, {b:String}) ORDER BY path`,
        { a: `/${org.slug}/never-printed`, b: c.path },
      );
      expect(rows).to.deep.equal(
        [
          { path: `/${org.slug}/never-printed`, reason: 'unknown', host: FALLBACK },
          { path: c.path, reason: 'inactive', host: FALLBACK },
        ].sort((x, y) => (x.path < y.path ? -1 : 1)),
      );
    });

    it('follows a domain’s root and not-found redirects', async () => {
      await insertCustomDomain(svc.app, org.id, 'links.acme.test', {
        settings: { root_redirect: 'https://acme.test/', not_found_redirect: 'https://acme.test/missing' },
      });
      const root = await get('/', {}, 'links.acme.test');
      expect([root.status, root.headers.location]).to.deep.equal([302, 'https://acme.test/']);
      const missing = await get('/nope', {}, 'links.acme.test');
      expect([missing.status, missing.headers.location]).to.deep.equal([302, 'https://acme.test/missing']);
    });

    it('answers 410 before date_begin and from expire_at on', async () => {
      const soon = await code({ date_begin: new Date('2031-01-01T00:00:00Z') });
      const past = await code({ expire_at: new Date('2020-01-01T00:00:00Z') });
      const early = await get(soon.path);
      expect(early.status).to.equal(410);
      expect(early.body).to.include('not active yet');
      expect((await get(past.path)).status).to.equal(410);
      svc.clock.set('2031-01-01T00:00:00Z');
      expect((await get(soon.path)).status).to.equal(302);
    });

    it('serves exactly redirect_cap redirects, then 410, and writes the count to Postgres', async () => {
      const c = await code({ redirect_cap: 5 });
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await get(c.path)).status);
      expect(statuses).to.deep.equal([302, 302, 302, 302, 302, 410, 410]);
      await rd.counters.flush();
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(5);
    });

    it('counts redirects of uncapped codes into redirects_count', async () => {
      const c = await code();
      await Promise.all(Array.from({ length: 12 }, () => get(c.path)));
      await rd.scans.flush(); // counted from the scan batch, as it is sent
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(12);
    });

    it('counts a scan batch once per token, however often it is sent or replayed, capped codes included', async () => {
      const free = await code();
      const capped = await code({ redirect_cap: 100 });
      const token = ulid();
      const counts: [number, number][] = [
        [free.id, 3],
        [capped.id, 2],
      ];
      const countOf = async (id: number) =>
        Number((await svc.app.db('qr_codes').where({ id }).first('redirects_count')).redirects_count);
      // Two processes replaying the same journal at once, then a third time.
      await Promise.all([countScanBatch(svc.app.db, token, counts), countScanBatch(svc.app.db, token, counts)]);
      await countScanBatch(svc.app.db, token, counts);
      expect(await countOf(free.id)).to.equal(3);
      // Replayed without a holder: no reservation served them (or its holder was released).
      expect(await countOf(capped.id)).to.equal(2);
      await countScanBatch(svc.app.db, ulid(), [[free.id, 1]]);
      expect(await countOf(free.id)).to.equal(4);
    });

    it("settles a capped code's reservation with its holder's own batch, without counting it twice", async () => {
      const capped = await code({ redirect_cap: 1000 });
      const holder = { id: ulid(), host: 'test-host', pid: 1 };
      const countOf = async () =>
        Number((await svc.app.db('qr_codes').where({ id: capped.id }).first('redirects_count')).redirects_count);
      expect(await reserveRedirects(svc.app.db, holder, capped.id, 10)).to.deep.equal({ granted: 10, uncapped: false });
      expect(await countOf()).to.equal(10); // reserved redirects count at once: the cap holds
      await countScanBatch(svc.app.db, ulid(), [[capped.id, 4]], holder.id); // 4 served and sent
      expect(await countOf()).to.equal(10);
      await giveBackRedirects(svc.app.db, holder.id, [[capped.id, 6]]); // 6 unused, given back
      expect(await countOf()).to.equal(4);
      await giveBackRedirects(svc.app.db, holder.id, [[capped.id, 6]]); // nothing held any more
      expect(await countOf()).to.equal(4);
    });

    it("gives back a killed process's unused reservation, and counts its journaled scans once", async () => {
      const c = await code({ redirect_cap: 1000 });
      // A second redirect's counters, on the same stores: 40 served, sent and flushed (so its next
      // block is 10), then 3 more served from a new block and the process killed outright: its
      // journal holds the 3, its reservation the 7 it never used.
      const killed = new RedirectCounters(svc.app.db, svc.app.log);
      for (let i = 0; i < 40; i++) expect(await killed.take(c.id)).to.equal(true);
      await countScanBatch(svc.app.db, ulid(), [[c.id, 40]], killed.holder.id);
      await killed.flush();
      for (let i = 0; i < 3; i++) expect(await killed.take(c.id)).to.equal(true);
      const countOf = async () =>
        Number((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count);
      expect(await countOf()).to.equal(50);
      // Its journal replayed by another process, without a holder.
      await countScanBatch(svc.app.db, ulid(), [[c.id, 3]]);
      // Not seen for longer than STALE_SECONDS (a process that is gone): the next look releases it.
      await svc.app
        .db('redirect_reservations')
        .where({ holder: killed.holder.id })
        .update({
          seen_at: svc.app.db.raw(`now() - make_interval(secs => ?)`, [STALE_SECONDS + 1]),
        });
      const other = new RedirectCounters(svc.app.db, svc.app.log);
      await other.flush();
      expect(await countOf()).to.equal(43);
      expect(await svc.app.db('redirect_reservations').where({ holder: killed.holder.id })).to.deep.equal([]);
      await other.flush(); // a second look finds nothing more to release
      expect(await countOf()).to.equal(43);
      await other.close();
    });
  });

  describe('routing', () => {
    const routing = {
      rules: [
        { conditions: { device: ['mobile'], os: ['iOS'] }, destination: 'https://apps.apple.com/app/x' },
        { conditions: { os: ['Android'] }, destination: 'https://play.google.com/store/x' },
        { conditions: { country: ['US'] }, destination: 'https://example.com/us' },
        { conditions: { language: ['de'] }, destination: 'https://example.de/' },
      ],
    };

    it('routes by device and os, in rule order', async () => {
      const c = await code({ routing });
      // The iPhone visitor comes from the US too: the first rule wins.
      expect((await get(c.path, { 'User-Agent': IPHONE, 'X-Forwarded-For': '8.8.8.8' })).headers.location).to.equal(
        'https://apps.apple.com/app/x',
      );
      expect((await get(c.path, { 'User-Agent': ANDROID })).headers.location).to.equal(
        'https://play.google.com/store/x',
      );
    });

    it('routes by country from the GeoIP database and by language', async () => {
      const c = await code({ routing });
      expect((await get(c.path, { 'User-Agent': DESKTOP, 'X-Forwarded-For': '8.8.8.8' })).headers.location).to.equal(
        'https://example.com/us',
      );
      expect(
        (await get(c.path, { 'User-Agent': DESKTOP, 'Accept-Language': 'de-AT,de;q=0.9' })).headers.location,
      ).to.equal('https://example.de/');
      expect((await get(c.path, { 'User-Agent': DESKTOP })).headers.location).to.equal('https://example.com/landing');
    });

    it('keeps an A/B visitor on one variant and splits visitors roughly by weight', async () => {
      const c = await code({
        routing: {
          rules: [
            {
              variants: [
                { destination: 'https://a.example/', weight: 1 },
                { destination: 'https://b.example/', weight: 1 },
              ],
            },
          ],
        },
      });
      const seen: Record<string, number> = {};
      for (let i = 0; i < 200; i++) {
        const headers = { 'User-Agent': DESKTOP, 'X-Forwarded-For': `203.0.${i >> 8}.${i & 255}` };
        const first = (await get(c.path, headers)).headers.location!;
        expect((await get(c.path, headers)).headers.location).to.equal(first);
        seen[first] = (seen[first] ?? 0) + 1;
      }
      expect(Object.keys(seen).sort()).to.deep.equal(['https://a.example/', 'https://b.example/']);
      expect(seen['https://a.example/']).to.be.within(70, 130);
    });

    it('splits visitors by the weights stored with the code (9 to 1), not evenly', async () => {
      const c = await code({
        routing: {
          rules: [
            {
              variants: [
                { destination: 'https://often.example/', weight: 9 },
                { destination: 'https://rarely.example/', weight: 1 },
              ],
            },
          ],
        },
      });
      let often = 0;
      for (let i = 0; i < 200; i++) {
        const headers = { 'User-Agent': DESKTOP, 'X-Forwarded-For': `198.51.${i >> 8}.${i & 255}` };
        const res = await get(c.path, headers);
        expect(res.status).to.equal(302);
        if (res.headers.location === 'https://often.example/') often++;
        else expect(res.headers.location).to.equal('https://rarely.example/');
      }
      // 180 expected; an even split would give about 100.
      expect(often).to.be.within(160, 196);
    });

    it('redirects to an http:// destination as stored', async () => {
      const c = await code({ destination: 'http://plain.example/menu?table=4' });
      const res = await get(c.path);
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal('http://plain.example/menu?table=4');
    });

    it('applies the schedule in its time zone, with the fallback outside its windows', async () => {
      const c = await code({
        schedule: {
          enabled: true,
          timezone: 'Asia/Tokyo',
          windows: [{ days: ['mon'], start: '09:00', end: '12:00' }],
          fallback_destination: 'https://example.com/closed',
        },
      });
      svc.clock.set('2024-01-15T00:00:00Z'); // Monday 09:00 in Tokyo (UTC+9), still Sunday in UTC
      expect((await get(c.path)).headers.location).to.equal('https://example.com/landing');
      svc.clock.set('2024-01-14T23:59:59Z'); // Monday 08:59:59 in Tokyo
      expect((await get(c.path)).headers.location).to.equal('https://example.com/closed');
      svc.clock.set('2024-01-15T03:00:00Z'); // Monday 12:00 in Tokyo: the window has closed
      expect((await get(c.path)).headers.location).to.equal('https://example.com/closed');
    });

    it('appends utm parameters without overriding the destination’s own', async () => {
      const c = await code({
        destination: 'https://example.com/p?utm_source=own#frag',
        utm_params: { utm_source: 'qr', utm_medium: 'print' },
      });
      expect((await get(c.path)).headers.location).to.equal(
        'https://example.com/p?utm_source=own&utm_medium=print#frag',
      );
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const other = await startTestService({ api: false });
      const r2 = await startRedirectListener(other.app, 0, '127.0.0.1', { flushMs: 50 });
      try {
        const o = await other.createOrg({ slug: 'beta' });
        const id = await insertCode(other.app, {
          orgId: o.org.id,
          orgSlug: 'beta',
          domainId: await fallbackDomainId(other.app),
          slug: 'geo',
          routing: { rules: [{ conditions: { country: ['US'] }, destination: 'https://example.com/us' }] },
        });
        const res = await hit(r2.port, FALLBACK, '/beta/geo', { headers: { 'X-Forwarded-For': '8.8.8.8' } });
        expect(res.headers.location).to.equal('https://example.com/landing');
        expect(id).to.be.a('number');
      } finally {
        await r2.close();
        await other.close();
      }
    });
  });

  describe('password', () => {
    let c: { id: number; path: string };
    before(async () => {
      c = await code({ destination: 'https://example.com/secret', password_hash: await hashPassword('open sesame') });
    });
    const post = (password: string, ip: string, extra: Record<string, string> = {}) =>
      hit(rd.port, FALLBACK, c.path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': ip, ...extra },
        body: new URLSearchParams({ password }).toString(),
      });

    it('shows an accessible form instead of redirecting', async () => {
      const res = await get(c.path);
      expect(res.status).to.equal(200);
      expect(res.body)
        .to.include('<form method="post"')
        .and.include('<label for="password">')
        .and.include('type="password"');
      expect(res.headers.location).to.equal(undefined);
    });

    it('answers a wrong password with the form and an error, and records no scan', async () => {
      const res = await post('wrong', '198.51.100.1');
      expect(res.status).to.equal(401);
      expect(res.body).to.include('role="alert"').and.include('not correct');
      expect(await scansOf(c.id)).to.have.length(0);
    });

    it('redirects on the right password and sets a signed cookie that later visits use', async () => {
      const res = await post('open sesame', '198.51.100.2');
      expect(res.status).to.equal(303);
      expect(res.headers.location).to.equal('https://example.com/secret');
      const cookie = res.headers['set-cookie']![0];
      expect(cookie).to.match(
        new RegExp(`^qr_pw_${c.id}=\\d+\\.[A-Za-z0-9_-]+; Max-Age=900; Path=/; HttpOnly; SameSite=Lax$`),
      );
      const pair = cookie.split(';')[0];
      const again = await get(c.path, { Cookie: pair });
      expect([again.status, again.headers.location]).to.deep.equal([302, 'https://example.com/secret']);
      const forged = await get(c.path, { Cookie: pair.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')) });
      expect(forged.status).to.equal(200);
      expect(await scansOf(c.id)).to.have.length(2);
    });

    it('refuses an expired cookie', async () => {
      const res = await post('open sesame', '198.51.100.3');
      const pair = res.headers['set-cookie']![0].split(';')[0];
      svc.clock.advance(16 * 60_000);
      expect((await get(c.path, { Cookie: pair })).status).to.equal(200);
    });

    it('throttles wrong answers per visitor: after 3 misses even the right password waits', async () => {
      const ip = '198.51.100.77';
      for (let i = 0; i < 3; i++) expect((await post('nope', ip)).status).to.equal(401);
      const blocked = await post('open sesame', ip);
      expect(blocked.status).to.equal(429);
      expect(Number(blocked.headers['retry-after'])).to.be.within(1, 60);
      // Another visitor is not affected.
      expect((await post('open sesame', '198.51.100.78')).status).to.equal(303);
      // The window passes.
      svc.clock.advance(61_000);
      expect((await post('open sesame', ip)).status).to.equal(303);
    });
  });

  describe('a password form over 4 KB', () => {
    let c: { id: number; path: string };
    before(async () => {
      c = await code({ destination: 'https://example.com/big', password_hash: await hashPassword('open sesame') });
    });
    const big = new URLSearchParams({ password: 'x'.repeat(5000) }).toString();

    /** A raw POST: the body sent in chunks of 1 KB (chunked when no length is declared), or after 100 Continue. */
    function postRaw(opts: { declare: boolean; expect100?: boolean; ip: string }) {
      return new Promise<{ status: number; body: string; continued: boolean; connection?: string }>(
        (resolve, reject) => {
          let continued = false;
          const headers: Record<string, string> = {
            Host: FALLBACK,
            'Content-Type': 'application/x-www-form-urlencoded',
            'X-Forwarded-For': opts.ip,
          };
          if (opts.declare) headers['Content-Length'] = String(Buffer.byteLength(big));
          if (opts.expect100) headers.Expect = '100-continue';
          const req = http.request(
            { host: '127.0.0.1', port: rd.port, path: c.path, method: 'POST', headers, agent: false },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (body += chunk));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, body, continued, connection: res.headers.connection }),
              );
            },
          );
          req.on('error', reject);
          const send = () => {
            for (let i = 0; i < big.length; i += 1024) req.write(big.slice(i, i + 1024));
            req.end();
          };
          if (opts.expect100) {
            req.on('continue', () => {
              continued = true;
              send();
            });
            req.flushHeaders();
          } else send();
        },
      );
    }

    it('answers 413 (not a reset connection) to a declared length, a chunked body, and before 100 Continue', async () => {
      const declared = await postRaw({ declare: true, ip: '198.51.100.90' });
      expect(declared.status).to.equal(413);
      expect(declared.body).to.include('too large');
      const chunked = await postRaw({ declare: false, ip: '198.51.100.90' });
      expect(chunked.status).to.equal(413);
      const early = await postRaw({ declare: true, expect100: true, ip: '198.51.100.90' });
      expect([early.status, early.continued, early.connection]).to.deep.equal([413, false, 'close']);
      expect(await scansOf(c.id)).to.have.length(0);
    });

    it('counts no attempt for a refused form: the right password still opens at once', async () => {
      const ip = '198.51.100.91';
      for (let i = 0; i < 4; i++) expect((await postRaw({ declare: false, ip })).status).to.equal(413);
      const right = await hit(rd.port, FALLBACK, c.path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': ip },
        body: new URLSearchParams({ password: 'open sesame' }).toString(),
      });
      expect(right.status).to.equal(303);
    });
  });

  describe('prelander and escaping', () => {
    it('shows the interstitial with the message, a countdown and the way on, and records the scan', async () => {
      const c = await code({
        destination: 'https://example.com/next?a=1&b=2',
        prelander_enabled: true,
        prelander_seconds: 4,
        prelander_message: 'Welcome!',
      });
      const res = await get(c.path);
      expect(res.status).to.equal(200);
      expect(res.body).to.include('<p>Welcome!</p>');
      expect(res.body).to.include('<span id="count">4</span>');
      expect(res.body).to.include('<meta http-equiv="refresh" content="4;url=https://example.com/next?a=1&amp;b=2">');
      expect(res.body).to.include('href="https://example.com/next?a=1&amp;b=2"');
      expect(res.body).to.not.match(/<(script|link|img)[^>]+src=/);
      expect(await scansOf(c.id)).to.have.length(1);
    });

    it('escapes user-provided text in pages', async () => {
      const c = await code({
        destination: 'https://example.com/x?q="><script>alert(1)</script>',
        prelander_enabled: true,
        prelander_seconds: 1,
        prelander_message: '<img src=x onerror=alert(1)> & "quotes"',
      });
      const res = await get(c.path);
      expect(res.body).to.include('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
      expect(res.body).to.not.include('<img src=x');
      expect(res.body).to.not.include('"><script>alert(1)');
    });
  });

  describe('the scan event', () => {
    it('records one event per served redirect with the visitor’s facts and no raw address', async () => {
      const domainId = await insertCustomDomain(svc.app, org.id, 'scan.acme.test');
      const [brand] = await svc.app
        .db('brands')
        .insert({ ulid: 'BRAND' + Date.now(), org_id: org.id, name: 'B', slug: 'b' })
        .returning('id');
      const c = await code({
        slug: 'ev',
        domainId,
        brandId: Number(brand.id),
        routing: {
          rules: [
            { conditions: { country: ['FR'] }, destination: 'https://fr.example/' },
            { conditions: { os: ['iOS'] }, destination: 'https://ios.example/' },
          ],
        },
      });
      const res = await get(
        '/ev',
        {
          'User-Agent': IPHONE,
          'X-Forwarded-For': '8.8.8.8',
          'Accept-Language': 'pt-BR,pt;q=0.9',
          Referer: 'https://news.example.org/story?id=3',
        },
        'scan.acme.test',
      );
      expect(res.headers.location).to.equal('https://ios.example/');
      const rows = await scansOf(c.id);
      expect(rows).to.have.length(1);
      // UInt64 columns come back from chDB as JSON numbers.
      const { scan_id, scanned_at, visitor_hash, batch, ...rest } = rows[0];
      expect(scan_id).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      // clickhouse/0012: the token of the batch the scan was stored in (the live stream reads by it).
      expect(String(batch)).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(String(scanned_at)).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
      expect(String(visitor_hash)).to.match(/^[1-9]\d*$/);
      expect(rest).to.deep.equal({
        org_id: org.id,
        brand_id: Number(brand.id),
        domain_id: domainId,
        code_id: c.id,
        country: 'US',
        device_type: 'mobile',
        os: 'iOS',
        browser: 'Mobile Safari',
        referrer: 'news.example.org',
        language: 'pt',
        provider: 'Google LLC',
        asn: 15169,
        is_bot: 0,
        matched_rule: 1,
        source: 'redirect', // clickhouse/0010: served here, not imported
        import_source: '',
        // clickhouse/0026: the GS1 dimensions, '' for a scan that is no GS1 resolution.
        gtin: '',
        cpv: '',
        lot: '',
        serial: '',
        link_type_asked: '',
        link_type_served: '',
      });
      const all = JSON.stringify(rows);
      expect(all).to.not.include('8.8.8.8');
    });

    it('records a fallback-origin scan with domain 0, brand 0, no rule, and bots flagged', async () => {
      const c = await code();
      await get(c.path, { 'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' });
      const [row] = await scansOf(c.id);
      expect(row).to.include({
        domain_id: 0,
        brand_id: 0,
        matched_rule: -1,
        is_bot: 1,
        device_type: 'bot',
        country: '',
        asn: 0,
      });
    });
  });
});
