// GET /v1/scans/stream (docs/stream.md): every recorded scan once per subscriber, filters,
// isolation between organizations under load, refusals before the stream starts, heartbeats, the
// per-plan stream limit, resume with Last-Event-ID (also across a restart of the service), reset,
// the gap of a consumer that stops reading, and two API processes on one set of stores. Clients
// are the `eventsource` package and eventsource-parser, not our own parser.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { rowsOfHandedBatch } from '../../server/analytics/live-handoff.js';
import { actionsOfBatches, scansOfBatches } from '../../server/analytics/queries.js';
import { batchText } from '../../server/analytics/scan-spill.js';
import { ScanBuffer, type Batch } from '../../server/redirect/scan-buffer.js';
import { encodeScanRow } from '../../server/redirect/scan-rows.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { clickHouseTime, REDIRECT_SCAN_COLUMNS, SCAN_ACTION_COLUMNS } from '../../server/analytics/scan-event.js';
import { RAW_EXPORT_ACTION_COLUMNS, RAW_EXPORT_COLUMNS } from '../../server/analytics/service.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { makeBrand, redirectScanRow } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/poll.js';
import { RawEventStream, refusedStream, TestEventSource } from '../helpers/sse.js';
import { ANDROID, chRows, DESKTOP, fallbackDomainId, FALLBACK, hit, insertCode, IPHONE } from './redirect-fixtures.js';

const CURL = 'curl/8.5.0';
const ENV = { LIVE_STREAM_HEARTBEAT_MS: '300', LIVE_STREAM_BUFFER: '50' };

interface Code {
  id: number;
  ulid: string;
  path: string;
}

describe('live scan stream (GET /v1/scans/stream)', function () {
  this.timeout(180_000);
  let svc: TestService;
  let redirect: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallbackId: number;
  let n = 0;
  const open: { close(): void }[] = [];

  const start = async (over: Parameters<typeof startTestService>[0] = {}) => {
    svc = await startTestService({ env: ENV, ...over });
    redirect = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 100, tlsPort: null });
  };

  before(async () => {
    await start();
    a = await svc.createOrg({ slug: 'stream-a' });
    b = await svc.createOrg({ slug: 'stream-b' });
    fallbackId = await fallbackDomainId(svc.app);
  });
  afterEach(() => {
    while (open.length) open.pop()!.close();
  });
  after(async () => {
    while (open.length) open.pop()!.close();
    await svc?.close();
  });

  const code = async (org: TestOrg, brandId: number | null = null): Promise<Code> => {
    const slug = `s${++n}`;
    const id = await insertCode(svc.app, {
      orgId: org.org.id,
      orgSlug: org.org.slug,
      domainId: fallbackId,
      slug,
      brandId,
    });
    const row = await svc.app.db('qr_codes').where({ id }).first('ulid');
    return { id, ulid: row.ulid, path: `/${org.org.slug}/${slug}` };
  };
  const scan = async (c: Code, ua = IPHONE) => {
    const r = await hit(redirect.port, FALLBACK, c.path, { headers: { 'User-Agent': ua, 'Accept-Language': 'de-DE' } });
    expect(r.status).to.equal(302);
  };
  const url = (query = '') => `${svc.url}/v1/scans/stream${query}`;
  const source = (token: string, query = '') => {
    const s = new TestEventSource(url(query), token);
    open.push(s);
    return s;
  };
  const raw = async (token: string, query = '', headers: Record<string, string> = {}) => {
    const s = await RawEventStream.open(url(query), { Authorization: `Bearer ${token}`, ...headers });
    open.push(s);
    return s;
  };
  /** Until the hub serves the stream (the first event of the retry field or a heartbeat). */
  const connected = (s: TestEventSource) => waitFor(() => s.opened > 0);
  const storedIds = async (orgId: number, codeId?: number) =>
    (
      await chRows<{ scan_id: string }>(
        svc.app,
        `SELECT scan_id FROM ${svc.app.ch.database}.scan_events WHERE org_id = {org:UInt64}
         ${codeId ? 'AND code_id = {code:UInt64}' : ''} ORDER BY scan_id`,
        { org: orgId, code: codeId ?? 0 },
      )
    ).map((r) => r.scan_id);

  it('sends every scan of the organization once to every subscriber, with the raw export fields, the code and its brand', async () => {
    const brand = await makeBrand(svc.app, a.org, { name: 'Launch', slug: 'launch' });
    const c1 = await code(a, brand.id);
    const c2 = await code(a);
    const s1 = source(a.token);
    const s2 = source(a.token);
    await connected(s1);
    await connected(s2);
    for (let i = 0; i < 15; i++) {
      await Promise.all([scan(c1, i % 2 ? ANDROID : IPHONE), scan(c2, DESKTOP)]);
    }
    await waitFor(() => s1.scans().length >= 30 && s2.scans().length >= 30, Boolean, 20_000);
    await redirect.scans.flush();
    const stored = [...(await storedIds(a.org.id, c1.id)), ...(await storedIds(a.org.id, c2.id))].sort();
    for (const s of [s1, s2]) {
      const ids = s.scans().map((e) => e.data.scan_id);
      expect(new Set(ids).size, 'no scan twice').to.equal(ids.length);
      expect([...ids].sort()).to.deep.equal(stored);
      // Event ids are unique and increase in the stream's order (batch, then scan id).
      const eventIds = s.scans().map((e) => e.id!);
      expect(new Set(eventIds).size).to.equal(eventIds.length);
    }
    const first = s1.scans().find((e) => e.data.code_ulid === c1.ulid)!.data;
    expect(first).to.include({
      code_ulid: c1.ulid,
      slug: `${a.org.slug}/${c1.path.split('/')[2]}`,
      brand_ulid: brand.ulid,
      brand_name: 'Launch',
      language: 'de',
      bot: false,
      matched_rule: null,
    });
    // The raw export's fields in its order, then the code's.
    expect(Object.keys(first)).to.deep.equal([
      ...RAW_EXPORT_COLUMNS,
      'code_ulid',
      'slug',
      'brand_ulid',
      'brand_name',
      'bot',
    ]);
    expect(s1.scans().find((e) => e.data.code_ulid === c2.ulid)!.data).to.include({
      brand_ulid: null,
      device_type: 'desktop',
    });
  });

  it('filters by code, brand and domain, and leaves bots out unless include_bots=true', async () => {
    const brand = await makeBrand(svc.app, a.org, { name: 'Filter', slug: 'filter' });
    const branded = await code(a, brand.id);
    const other = await code(a);
    const domain = await svc.app.db('domains').where({ id: fallbackId }).first('ulid');
    const byCode = source(a.token, `?code_ulid=${branded.ulid}`);
    const byBrand = source(a.token, `?brand_ulid=${brand.ulid}`);
    const byDomain = source(a.token, `?domain_ulid=${domain.ulid}`);
    const withBots = source(a.token, '?include_bots=true');
    const plain = source(a.token);
    for (const s of [byCode, byBrand, byDomain, withBots, plain]) await connected(s);
    await scan(branded);
    await scan(other);
    await scan(branded, CURL);
    await scan(other, CURL);
    await waitFor(() => withBots.scans().length >= 4 && plain.scans().length >= 2, Boolean, 20_000);
    await waitFor(() => byCode.scans().length >= 1 && byBrand.scans().length >= 1 && byDomain.scans().length >= 2);
    expect(withBots.scans().filter((e) => e.data.bot)).to.have.length(2);
    expect(plain.scans().map((e) => e.data.bot)).to.deep.equal([false, false]);
    expect(byCode.scans().map((e) => e.data.code_ulid)).to.deep.equal([branded.ulid]);
    expect(byBrand.scans().map((e) => e.data.code_ulid)).to.deep.equal([branded.ulid]);
    expect(
      byDomain
        .scans()
        .map((e) => e.data.code_ulid)
        .sort(),
    ).to.deep.equal([branded.ulid, other.ulid].sort());
  });

  it('never sends a scan of another organization, under load from both', async () => {
    const ca = await code(a);
    const cb = await code(b);
    const sa = source(a.token);
    const sb = source(b.token);
    await connected(sa);
    await connected(sb);
    const load = async (c: Code, k: number) => {
      for (let i = 0; i < k; i++) await scan(c, [IPHONE, ANDROID, DESKTOP][i % 3]);
    };
    await Promise.all([load(ca, 60), load(cb, 40), load(ca, 60), load(cb, 40)]);
    await waitFor(() => sa.scans().length >= 120 && sb.scans().length >= 80, Boolean, 30_000);
    expect(sa.scans().every((e) => e.data.code_ulid === ca.ulid)).to.equal(true);
    expect(sb.scans().every((e) => e.data.code_ulid === cb.ulid)).to.equal(true);
    expect(sa.scans()).to.have.length(120);
    expect(sb.scans()).to.have.length(80);
    expect(
      sb
        .scans()
        .map((e) => e.data.scan_id)
        .sort(),
    ).to.deep.equal(await storedIds(b.org.id, cb.id));
  });

  it('sends each action on a landing page as an `action` event after its scan: filters, bots, isolation and resume apply', async () => {
    const domain = await svc.app.db('domains').where({ id: fallbackId }).first('ulid');
    const slug = `links${++n}`;
    const made = await svc.post('/v1/qr-codes', a.token, {
      slug,
      type: 'links',
      destination: LANDING_CASES.links,
      domain_ulid: domain.ulid,
    });
    expect(made.status, made.text).to.equal(201);
    const page = new URL(made.body.data.public_url).pathname;
    const other = await code(a);
    const all = source(a.token);
    const bots = source(a.token, `?code_ulid=${made.body.data.ulid}&include_bots=true`);
    const elsewhere = source(a.token, `?code_ulid=${other.ulid}`);
    const foreign = source(b.token);
    for (const s of [all, bots, elsewhere, foreign]) await connected(s);
    const visit = async (query: string, ua = IPHONE) =>
      expect(
        (await hit(redirect.port, FALLBACK, `${page}${query}`, { headers: { 'User-Agent': ua } })).status,
      ).to.be.oneOf([200, 302]);
    await visit('');
    // Scans and actions are stored by buffers of their own: the actions follow the view once it is sent.
    await waitFor(() => all.scans().some((e) => e.data.code_ulid === made.body.data.ulid), Boolean, 20_000);
    await visit('?qr_action=link&i=1');
    await visit('?qr_action=link&i=0', CURL);
    await visit('?qr_action=link&i=0');
    await waitFor(() => all.actions().length >= 2 && bots.actions().length >= 3, Boolean, 20_000);
    await redirect.actions.flush();
    const stored = await chRows<{ action_id: string; target: number }>(
      svc.app,
      `SELECT action_id, target FROM ${svc.app.ch.database}.scan_actions WHERE org_id = {org:UInt64} AND is_bot = 0 ORDER BY action_id`,
      { org: a.org.id },
    );
    expect(all.actions().map((e) => e.data.action_id)).to.deep.equal(stored.map((r) => r.action_id));
    const [first] = all.actions();
    expect(first.data).to.deep.include({
      action: 'link',
      target: 1,
      label: 'Link 2',
      code_ulid: made.body.data.ulid,
      slug: `${a.org.slug}/${slug}`,
      brand_ulid: null,
      brand_name: null,
      bot: false,
    });
    expect(Object.keys(first.data)).to.deep.equal([
      ...RAW_EXPORT_ACTION_COLUMNS,
      'label',
      'code_ulid',
      'slug',
      'brand_ulid',
      'brand_name',
    ]);
    expect(first.id).to.match(new RegExp(`^\\d+-${first.data.action_id}$`));
    // The page view is the scan, sent before the actions; its visitor is the actions' visitor.
    const viewScan = all.scans().find((e) => e.data.code_ulid === made.body.data.ulid)!;
    expect(viewScan.data.visitor_id).to.equal(first.data.visitor_id);
    expect(all.events.indexOf(viewScan)).to.be.below(all.events.indexOf(first));
    expect(bots.actions().map((e) => e.data.bot)).to.deep.equal([false, true, false]);
    await waitFor(() => elsewhere.opened > 0);
    expect(elsewhere.actions()).to.deep.equal([]);
    expect(foreign.actions()).to.deep.equal([]);
    expect(foreign.scans()).to.deep.equal([]);

    // A resume from the page view's scan replays the actions after it, in order, then live ones.
    const resumed = await raw(a.token, `?code_ulid=${made.body.data.ulid}`, { 'Last-Event-ID': viewScan.id! });
    await waitFor(() => resumed.events.filter((e) => e.event === 'action').length >= 2, Boolean, 20_000);
    await visit('?qr_action=link&i=1');
    await waitFor(() => resumed.events.filter((e) => e.event === 'action').length >= 3, Boolean, 20_000);
    const replayed = resumed.events.filter((e) => e.event === 'action');
    expect(replayed.slice(0, 2).map((e) => e.id)).to.deep.equal(
      all
        .actions()
        .slice(0, 2)
        .map((e) => e.id),
    );
    expect(replayed[2].data).to.include({ action: 'link', target: 1 });
    expect(resumed.events.some((e) => e.event === 'reset' || e.event === 'scan')).to.equal(false);
  });

  it('refuses unknown filters, another organization’s code, a malformed Last-Event-ID and a missing ability before the stream starts', async () => {
    const cb = await code(b);
    const auth = { Authorization: `Bearer ${a.token}` };
    const unknown = await refusedStream(url('?range=7'), auth);
    expect(unknown.status).to.equal(422);
    expect(unknown.body).to.include({ code: 'validation_failed' });
    expect(unknown.body.errors).to.have.property('range');
    const foreign = await refusedStream(url(`?code_ulid=${cb.ulid}`), auth);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('not_found');
    const malformed = await refusedStream(url(), { ...auth, 'Last-Event-ID': 'yesterday' });
    expect(malformed.status).to.equal(422);
    expect(malformed.body.errors).to.have.property('Last-Event-ID');
    expect((await refusedStream(url(), {})).status).to.equal(401);
    const narrow = await svc.createToken(a.org, { abilities: ['codes.view'] });
    const forbidden = await refusedStream(url(), { Authorization: `Bearer ${narrow}` });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body).to.include({ code: 'forbidden', required_ability: 'analytics.view' });
    const viewer = await svc.createToken(a.org, { role: 'viewer', abilities: ['analytics.view'] });
    const s = await raw(viewer);
    expect(s.status).to.equal(200);
  });

  it('sends the retry delay at once and a heartbeat comment at the configured interval', async () => {
    const s = await raw(a.token);
    await waitFor(() => s.comments.filter((c) => c.includes('heartbeat')).length >= 2, Boolean, 10_000);
    expect(s.retry).to.equal(3000);
  });

  it('allows the plan’s number of concurrent streams per organization and refuses one more with 429', async () => {
    const org = await svc.createOrg({ slug: 'stream-limit', plan: 'starter_monthly', balanceMinor: 10_000 });
    const first = await raw(org.token);
    const second = await raw(org.token);
    const refused = await refusedStream(url(), { Authorization: `Bearer ${org.token}` });
    expect(refused.status).to.equal(429);
    expect(refused.body).to.include({ code: 'rate_limited' });
    expect(refused.body.retry_after).to.be.a('number');
    expect(refused.headers.get('retry-after')).to.equal(String(refused.body.retry_after));
    // Another organization is not held back by this one's streams.
    expect((await raw(b.token)).status).to.equal(200);
    first.close();
    await waitFor(async () => (await svc.app.db('scan_stream_sessions').where({ org_id: org.org.id })).length === 1);
    const again = await raw(org.token);
    expect(again.status).to.equal(200);
    second.close();
  });

  it('resumes after a Last-Event-ID with every scan missed, in order, before the live ones; an unknown or old id gets a reset', async () => {
    const c = await code(a);
    const s = source(a.token, `?code_ulid=${c.ulid}`);
    await connected(s);
    for (let i = 0; i < 5; i++) await scan(c);
    await waitFor(() => s.scans().length >= 5, Boolean, 20_000);
    s.close();
    const last = s.scans()[4].id!;
    for (let i = 0; i < 7; i++) await scan(c, ANDROID);
    await redirect.scans.flush();
    await waitFor(async () => (await storedIds(a.org.id, c.id)).length === 12);
    const resumed = await raw(a.token, `?code_ulid=${c.ulid}`, { 'Last-Event-ID': last });
    await waitFor(() => resumed.scans().length >= 7, Boolean, 20_000);
    await scan(c, DESKTOP);
    await waitFor(() => resumed.scans().length >= 8, Boolean, 20_000);
    const seen = [...s.scans(), ...resumed.scans()].map((e) => e.data.scan_id);
    expect([...seen].sort()).to.deep.equal(await storedIds(a.org.id, c.id));
    expect(resumed.scans()[7].data.device_type).to.equal('desktop');
    expect(
      resumed
        .scans()
        .slice(0, 7)
        .every((e) => e.data.os === 'Android'),
    ).to.equal(true);
    expect(resumed.events.some((e) => e.event === 'reset')).to.equal(false);

    const [seq] = last.split('-');
    const unknown = await raw(a.token, '', { 'Last-Event-ID': `999999999-${ulid()}` });
    await waitFor(() => unknown.events.length >= 1);
    expect(unknown.events[0].event).to.equal('reset');
    await svc.app
      .db('scan_stream_batches')
      .where({ seq: Number(seq) })
      .update({ stored_at: new Date(Date.now() - 25 * 3_600_000) });
    const old = await raw(a.token, '', { 'Last-Event-ID': last });
    await waitFor(() => old.events.length >= 1);
    expect(old.events[0].event).to.equal('reset');
  });

  it('tells a consumer that stopped reading how many scans it missed and where the raw export has them, and goes on', async () => {
    const c = await code(a);
    const s = await raw(a.token, `?code_ulid=${c.ulid}`);
    await waitFor(() => s.retry !== undefined);
    s.pause();
    // Enough events to fill the socket buffers on both sides and the stream's 50 events, stored in
    // four flushes: the first is taken whole (the client was not behind), the later ones find it behind.
    const total = 20_000;
    const now = Date.now();
    for (let flush = 0; flush < 4; flush++) {
      for (let i = flush * 5000; i < (flush + 1) * 5000; i++) {
        const at = now + i;
        redirect.scans.push(redirectScanRow(at, { org_id: a.org.id, code_id: c.id, device_type: 'mobile' }));
      }
      await redirect.scans.flush();
      const stored = (flush + 1) * 5000;
      await waitFor(async () => (await storedIds(a.org.id, c.id)).length === stored, Boolean, 60_000);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const accounted = () =>
      s.scans().length + s.events.filter((e) => e.event === 'gap').reduce((sum, e) => sum + e.data.missed, 0);
    // Read again a while later: every scan is either delivered or counted in a gap, none twice.
    await new Promise((r) => setTimeout(r, 2000));
    s.resume();
    await waitFor(accounted, (v) => v >= total, 60_000);
    expect(accounted()).to.equal(total);
    const gapAt = s.events.findIndex((e) => e.event === 'gap');
    expect(gapAt).to.be.above(0);
    const gap = s.events[gapAt].data;
    const before = s.events.slice(0, gapAt).filter((e) => e.event === 'scan').length;
    expect(gap.missed).to.be.above(0);
    expect(gap.codes).to.have.length(1);
    expect(gap.codes[0]).to.include({ code_ulid: c.ulid, missed: gap.missed });
    const stored = await storedIds(a.org.id, c.id);
    // In the stream's order (the scans were made in scan_id order), none twice.
    const ids = s.scans().map((e) => e.data.scan_id);
    expect(ids).to.deep.equal([...new Set(ids)].sort());
    // The raw export from the gap's cursor starts exactly at the first missed scan.
    const page = await svc.get(gap.codes[0].raw_export + '&limit=5', a.token);
    expect(page.status).to.equal(200);
    expect(page.body.data.rows[0].scan_id).to.equal(stored[before]);
    // Live scans flow again after the gap.
    await scan(c);
    await waitFor(() => s.events.slice(gapAt + 1).some((e) => e.event === 'scan'), Boolean, 20_000);
  });

  it('delivers a burst of scans far larger than the stream’s buffer whole to a client that keeps up', async () => {
    const c = await code(a);
    const s = await raw(a.token, `?code_ulid=${c.ulid}`);
    await waitFor(() => s.retry !== undefined);
    // 2,000 scans in one flush: forty times the buffer (50), stored and read as one batch.
    const now = Date.now();
    for (let i = 0; i < 2000; i++) {
      const at = now + i;
      redirect.scans.push(redirectScanRow(at, { org_id: a.org.id, code_id: c.id }));
    }
    await redirect.scans.flush();
    await waitFor(
      () => s.scans().length,
      (n) => n >= 2000,
      60_000,
    );
    const ids = s.scans().map((e) => e.data.scan_id);
    expect(ids).to.deep.equal(await storedIds(a.org.id, c.id));
    expect(s.events.filter((e) => e.event === 'gap')).to.deep.equal([]);
  });

  it('gives subscribers with equal and different filters exactly their events from one shared read, and a gap only to the one that stops reading', async () => {
    const org = await svc.createOrg({ slug: 'stream-shared', plan: 'enterprise_monthly' });
    const brand = await makeBrand(svc.app, org.org, { name: 'Shared', slug: 'shared' });
    const branded = await code(org, brand.id);
    const other = await code(org);
    // Pairs with equal filters (their events are encoded once and shared) beside overlapping filters.
    const [withBots, stalled, plain, plainTwin, byCode, byBrand] = await Promise.all(
      [
        '?include_bots=true',
        '?include_bots=true',
        '',
        '',
        `?code_ulid=${branded.ulid}&include_bots=true`,
        `?brand_ulid=${brand.ulid}`,
      ].map((q) => raw(org.token, q)),
    );
    const all = [withBots, stalled, plain, plainTwin, byCode, byBrand];
    await waitFor(() => all.every((s) => s.retry !== undefined));
    stalled.pause();
    // Three flushes of 3,000 scans (codes and bots interleaved), each stored and read as one batch:
    // the first (with 3 KB referrers: 9 MB) fills the stalled client's socket buffers and its 50
    // events, the later ones find it behind.
    const flushes = 3;
    const perFlush = 3000;
    const now = Date.now();
    const rows = Array.from({ length: flushes * perFlush }, (_, i) => {
      const code = i % 3 ? branded : other;
      return redirectScanRow(now + i, {
        org_id: org.org.id,
        code_id: code.id,
        brand_id: code === branded ? brand.id : 0,
        domain_id: fallbackId,
        is_bot: i % 4 === 0 ? 1 : 0,
        referrer: i < perFlush ? `https://example.com/${'r'.repeat(3000)}` : '',
      });
    });
    for (let flush = 0; flush < flushes; flush++) {
      for (const r of rows.slice(flush * perFlush, (flush + 1) * perFlush)) redirect.scans.push(r);
      await redirect.scans.flush();
      await waitFor(
        () => withBots.scans().length,
        (n) => n >= (flush + 1) * perFlush,
        60_000,
      );
    }
    const idsOf = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).map((r) => r.scan_id);
    const expected = new Map([
      [withBots, idsOf(() => true)],
      [plain, idsOf((r) => r.is_bot === 0)],
      [plainTwin, idsOf((r) => r.is_bot === 0)],
      [byCode, idsOf((r) => r.code_id === branded.id)],
      [byBrand, idsOf((r) => r.brand_id === brand.id && r.is_bot === 0)],
    ]);
    for (const [s, ids] of expected) {
      await waitFor(
        () => s.scans().length,
        (n) => n >= ids.length,
        60_000,
      );
      expect(s.scans().map((e) => e.data.scan_id)).to.deep.equal(ids);
      expect(s.events.filter((e) => e.event === 'gap')).to.deep.equal([]);
    }
    // The stalled twin of `withBots`: every scan delivered or counted in its gap, in order, none twice.
    stalled.resume();
    const accounted = () =>
      stalled.scans().length + stalled.events.filter((e) => e.event === 'gap').reduce((n, e) => n + e.data.missed, 0);
    await waitFor(accounted, (n) => n >= rows.length, 60_000);
    expect(accounted()).to.equal(rows.length);
    const gaps = stalled.events.filter((e) => e.event === 'gap');
    expect(gaps).to.have.length.above(0);
    expect(gaps[0].data.missed).to.be.above(0);
    const got = stalled.scans().map((e) => e.data.scan_id);
    expect(got).to.deep.equal(rows.map((r) => r.scan_id).filter((id) => got.includes(id)));
    expect(new Set(got).size).to.equal(got.length);
  });

  it('hands a batch stored in this process to its hub as its row objects, exactly the rows ClickHouse reads back (text escapes, bots, actions)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'scan-stream-handoff-'));
    const stored: Batch[] = [];
    const buffer = (table: string, columns: readonly string[], encode?: (r: object) => string, keep = true) =>
      new ScanBuffer<object>({
        client: svc.app.ch.client,
        table: `${svc.app.ch.database}.${table}`,
        columns: columns as readonly never[],
        encode,
        spillDir: dir,
        log: svc.app.log,
        stored: async (batch) => void stored.push(batch),
        keepRows: () => keep,
      });
    const scans = buffer('scan_events', REDIRECT_SCAN_COLUMNS, encodeScanRow as (r: object) => string);
    const actions = buffer('scan_actions', SCAN_ACTION_COLUMNS);
    try {
      const at = Date.now();
      const time = (i: number) => clickHouseTime(at + i);
      const odd = ['tab\there', 'back\\slash', 'new\nline\r', 'nul\0', 'é ü 漢字 😀', ''];
      odd.forEach((text, i) =>
        scans.push(
          redirectScanRow(at + i, {
            org_id: i % 3 ? a.org.id : b.org.id,
            brand_id: i,
            domain_id: fallbackId,
            code_id: 1000 + i,
            visitor_hash: i % 2 ? '18446744073709551615' : String(i),
            country: 'DE',
            os: text,
            referrer: text,
            provider: text,
            language: 'de',
            is_bot: (i % 2) as 0 | 1,
            matched_rule: i - 1,
            // A GS1 resolution's dimensions ride in the same row (not in the stream's events).
            gtin: i % 2 ? '09506000134352' : '',
            lot: text,
            link_type_asked: i % 2 ? 'gs1:pip' : '',
          }) as never,
        ),
      );
      for (let i = 0; i < 3; i++)
        actions.push({
          action_id: ulid(at + i),
          scanned_at: time(i),
          org_id: a.org.id,
          brand_id: 0,
          domain_id: fallbackId,
          code_id: 2000 + i,
          action: i ? 'link' : 'vcard',
          target: i,
          visitor_hash: String(7 + i),
          is_bot: 0,
        });
      await scans.flush();
      await actions.flush();
      expect(stored.map((batch) => batch.rows)).to.deep.equal([odd.length, 3]);
      const [scanBatch, actionBatch] = stored;
      // The escapes really are in what was inserted.
      expect(batchText(scanBatch)).to.include('\\t').and.include('\\\\').and.include('\\n').and.include('\\0');
      const orgs = [a.org.id, b.org.id];
      const read = { orgIds: orgs, tokens: [scanBatch.token], fromMs: at - 60_000, toMs: at + 60_000 };
      const byId = <T extends { scan_id?: string; action_id?: string }>(rows: T[]) =>
        rows.sort((x, y) => ((x.scan_id ?? x.action_id)! < (y.scan_id ?? y.action_id)! ? -1 : 1));
      const handed = (batch: Batch, kind: 'scan' | 'action', of = orgs) =>
        byId(
          (rowsOfHandedBatch({ seq: 1, token: batch.token, kind, rows: batch.objects! }, new Set(of)) ?? []).map(
            ({ kind: _, ...r }: { kind: string }) => r as { scan_id?: string; action_id?: string },
          ),
        );
      const back = byId(await scansOfBatches(svc.app.ch, read));
      expect(back).to.have.length(odd.length);
      expect(handed(scanBatch, 'scan')).to.deep.equal(back);
      // Only the organizations asked for.
      expect(handed(scanBatch, 'scan', [b.org.id])).to.deep.equal(back.filter((r) => r.org_id === b.org.id));
      const backActions = byId(await actionsOfBatches(svc.app.ch, { ...read, tokens: [actionBatch.token] }));
      expect(backActions).to.have.length(3);
      expect(handed(actionBatch, 'action')).to.deep.equal(backActions);
      // A row not as the redirect writes it (a time in epoch ms): the hub reads the batch back instead.
      const rows = [...scanBatch.objects!];
      rows[0] = { ...rows[0], scanned_at: at };
      expect(rowsOfHandedBatch({ seq: 1, token: scanBatch.token, kind: 'scan', rows }, new Set(orgs))).to.equal(null);
      // A buffer asked to keep no objects hands none (the hub then reads the batch back).
      const plain = buffer('scan_events', REDIRECT_SCAN_COLUMNS, encodeScanRow as (r: object) => string, false);
      plain.push(redirectScanRow(at, { org_id: a.org.id }) as never);
      await plain.flush();
      await plain.close();
      expect(stored).to.have.length(3);
      expect(stored[2].objects).to.equal(undefined);
    } finally {
      await scans.close();
      await actions.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('makes the redirect send its scans sooner while a stream is open anywhere (LIVE_STREAM_FLUSH_MS)', async () => {
    // Another process on the same stores whose redirect would otherwise flush every 10 minutes.
    const other = await startTestService({ env: { ...ENV, LIVE_STREAM_FLUSH_MS: '100' }, stores: svc.stores });
    const slow = await startRedirectListener(other.app, 0, '127.0.0.1', { flushMs: 600_000, tlsPort: null });
    try {
      const c = await code(a);
      const s = source(a.token, `?code_ulid=${c.ulid}`);
      await connected(s);
      const r = await hit(slow.port, FALLBACK, c.path, { headers: { 'User-Agent': IPHONE } });
      expect(r.status).to.equal(302);
      await waitFor(() => s.scans().length >= 1, Boolean, 20_000);
      expect(s.scans().map((e) => e.data.scan_id)).to.deep.equal(await storedIds(a.org.id, c.id));
    } finally {
      await slow.close();
      await other.close();
    }
  });

  it('serves the same scans from a second API process on the same stores, each subscriber once', async () => {
    const second = await startTestService({ env: ENV, stores: svc.stores });
    const batches = async (app: TestService['app'], source: string) =>
      (await app.metrics.liveStreamBatches.get()).values.find((v) => v.labels.source === source)?.value ?? 0;
    try {
      const c = await code(a);
      const s1 = source(a.token, `?code_ulid=${c.ulid}`);
      const s2 = new TestEventSource(`${second.url}/v1/scans/stream?code_ulid=${c.ulid}`, a.token);
      open.push(s2);
      await connected(s1);
      await connected(s2);
      for (let i = 0; i < 20; i++) await scan(c);
      await waitFor(() => s1.scans().length >= 20 && s2.scans().length >= 20, Boolean, 20_000);
      const stored = await storedIds(a.org.id, c.id);
      expect(
        s1
          .scans()
          .map((e) => e.data.scan_id)
          .sort(),
      ).to.deep.equal(stored);
      expect(
        s2
          .scans()
          .map((e) => e.data.scan_id)
          .sort(),
      ).to.deep.equal(stored);
      expect(s2.scans().map((e) => e.id)).to.deep.equal(s1.scans().map((e) => e.id));
      // This process stored the scans and handed them to its own hub; the second read them back:
      // both sent the same events.
      expect(s2.scans().map((e) => e.data)).to.deep.equal(s1.scans().map((e) => e.data));
      expect(await batches(svc.app, 'handed')).to.be.above(0);
      expect(await batches(second.app, 'read_back')).to.be.above(0);
      expect(await batches(second.app, 'handed')).to.equal(0);
    } finally {
      open.pop()!.close();
      await second.close();
    }
  });

  it('resumes across a restart of the service: the EventSource reconnects with its Last-Event-ID and misses nothing', async () => {
    const c = await code(a);
    const s = source(a.token, `?code_ulid=${c.ulid}`);
    await connected(s);
    for (let i = 0; i < 4; i++) await scan(c);
    await waitFor(() => s.scans().length >= 4, Boolean, 20_000);
    const port = Number(new URL(svc.url).port);
    const stores = svc.stores;
    await svc.close();
    await start({ stores, apiPort: port });
    for (let i = 0; i < 6; i++) await scan(c, ANDROID);
    await redirect.scans.flush();
    await waitFor(() => s.scans().length >= 10, Boolean, 30_000);
    expect(s.opened).to.be.at.least(2);
    expect(
      s
        .scans()
        .map((e) => e.data.scan_id)
        .sort(),
    ).to.deep.equal(await storedIds(a.org.id, c.id));
  });
});
