// Fault tests of the scan ingest and of coherence between processes: ClickHouse going away while
// redirects are served, draining on close under load, spill files replayed exactly once across
// restarts, and two application contexts on one Postgres.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import type { AppContext } from '../../server/context.js';
import { createLogger } from '../../server/logger.js';
import { ORPHAN_SCAN_COLUMNS as ORPHAN_COLUMNS } from '../../server/analytics/scan-event.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import type { OrphanRow } from '../../server/redirect/scan-rows.js';
import { ScanBuffer } from '../../server/redirect/scan-buffer.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { notifyBarrier, redirectCacheMarker } from '../helpers/notify-barrier.js';
import { testLogLevel } from '../helpers/stores.js';
import { waitFor } from '../helpers/poll.js';
import { chRows, fallbackDomainId, hit, insertCode } from './redirect-fixtures.js';

const FALLBACK = 'localhost:3001';

describe('redirect scan ingest and coherence', function () {
  this.timeout(120_000);
  let svc: TestService;
  let org: { id: number; slug: string };
  let fallbackId: number;
  let n = 0;

  before(async () => {
    svc = await startTestService({ api: false });
    const created = await svc.createOrg({ slug: 'ingest' });
    org = { id: created.org.id, slug: created.org.slug };
    fallbackId = await fallbackDomainId(svc.app);
  });
  after(async () => {
    await svc?.close();
  });

  const table = () => `${svc.app.ch.database}.scan_events`;
  const code = async (over: { redirect_cap?: number; destination?: string } = {}) => {
    const slug = `i${++n}`;
    const id = await insertCode(svc.app, { orgId: org.id, orgSlug: org.slug, domainId: fallbackId, slug, ...over });
    return { id, path: `/${org.slug}/${slug}` };
  };
  const counts = async (codeId: number) => {
    const [row] = await chRows<{ c: number; u: number }>(
      svc.app,
      `SELECT count() AS c, uniqExact(scan_id) AS u FROM ${table()} WHERE code_id = {id:UInt64}`,
      { id: codeId },
    );
    return { c: Number(row.c), u: Number(row.u) };
  };
  const detach = () => svc.app.ch.client.command({ query: `DETACH TABLE ${table()}` });
  const attach = () => svc.app.ch.client.command({ query: `ATTACH TABLE ${table()}` });

  /** Sends requests with `concurrency` workers until stop() says so; returns how many got a 302. */
  function stream(port: number, p: string, concurrency: number, stop: () => boolean): Promise<number> {
    let ok = 0;
    const worker = async () => {
      while (!stop()) {
        try {
          const res = await hit(port, FALLBACK, p);
          if (res.status === 302) ok++;
        } catch {
          return; // the listener closed
        }
      }
    };
    return Promise.all(Array.from({ length: concurrency }, worker)).then(() => ok);
  }

  it('keeps every redirect served while ClickHouse is unavailable, exactly once, when it is back', async () => {
    const spillDir = path.join(svc.app.config.dataDir, 'spill-outage');
    const rd = await startRedirectListener(svc.app, 0, '127.0.0.1', {
      flushMs: 30,
      insertAttempts: 2,
      backoffMs: 10,
      spillDir,
    });
    try {
      const c = await code();
      let phase = 0;
      const served = stream(rd.port, c.path, 8, () => phase === 3);
      await waitFor(
        async () => rd.scans.stats.inserted,
        (v) => v >= 50,
      );
      await detach();
      phase = 1;
      await waitFor(
        async () => rd.scans.stats.spilledRows,
        (v) => v >= 100,
      );
      await attach();
      phase = 2;
      await waitFor(
        async () => rd.scans.stats.replayedRows,
        (v) => v > 0,
      );
      phase = 3;
      const ok = await served;
      await rd.scans.settled();
      const got = await waitFor(
        () => counts(c.id),
        (v) => v.c >= ok,
      );
      expect(rd.scans.stats.spilledRows).to.be.at.least(100);
      expect(rd.scans.stats.replayedRows).to.be.above(0); // caught up while still serving
      expect(got).to.deep.equal({ c: ok, u: ok });
      expect(await fs.readdir(spillDir)).to.deep.equal([]);
    } finally {
      await attach().catch(() => undefined);
      await rd.close();
    }
  });

  it('stores text with tabs, newlines, backslashes, NUL and non-ASCII exactly as pushed (TabSeparated inserts)', async () => {
    const buffer = new ScanBuffer<OrphanRow>({
      client: svc.app.ch.client,
      table: `${svc.app.ch.database}.orphan_scans`,
      columns: ORPHAN_COLUMNS,
      spillDir: path.join(svc.app.config.dataDir, 'spill-text'),
      log: svc.app.log,
    });
    const odd = 'a\tb\nc\\d\re\0f Ünïcödé ✓ \'q\' "dq" \\t';
    const row: OrphanRow = {
      scan_id: 'TEXTROUNDTRIP0000000000001',
      scanned_at: new Date().toISOString().slice(0, 23).replace('T', ' '), // within the retention TTL
      org_id: 0,
      domain_id: 0,
      host: `host-${odd}`,
      path: `/${odd}`,
      reason: 'unknown',
      visitor_hash: '9007199254740991',
      country: '',
      device_type: 'other',
      referrer: odd,
      is_bot: 1,
    };
    buffer.push(row);
    await buffer.close();
    const got = await chRows<Record<string, unknown>>(
      svc.app,
      `SELECT host, path, referrer, toString(visitor_hash) AS visitor_hash, is_bot FROM ${svc.app.ch.database}.orphan_scans WHERE scan_id = {id:String}`,
      { id: row.scan_id },
    );
    expect(got).to.deep.equal([
      { host: row.host, path: row.path, referrer: odd, visitor_hash: '9007199254740991', is_bot: 1 },
    ]);
  });

  it('drains the buffer on close under load: every 302 answered is in scan_events once', async () => {
    // No timed flush: everything still buffered at close must be drained by close().
    const rd = await startRedirectListener(svc.app, 0, '127.0.0.1', {
      flushMs: 600_000,
      spillDir: path.join(svc.app.config.dataDir, 'spill-drain'),
    });
    const c = await code();
    let stopped = false;
    const served = stream(rd.port, c.path, 16, () => stopped);
    await waitFor(
      async () => rd.scans.pending,
      (v) => v >= 300,
    );
    const closing = rd.close();
    stopped = true;
    await closing;
    const ok = await served;
    expect(ok).to.be.at.least(300);
    expect(await counts(c.id)).to.deep.equal({ c: ok, u: ok });
  });

  it('sends a batch every SCAN_FLUSH_MS, or sooner once SCAN_BATCH_MAX_ROWS rows wait', async () => {
    const other = await startTestService({
      api: false,
      stores: svc.stores,
      env: { SCAN_FLUSH_MS: '60000', SCAN_BATCH_MAX_ROWS: '100' },
    });
    const rd = await startRedirectListener(other.app, 0, '127.0.0.1', {
      spillDir: path.join(svc.app.config.dataDir, 'spill-batch-size'),
    });
    const c = await code();
    try {
      expect(rd.scans.flushInterval).to.equal(60_000);
      for (let i = 0; i < 99; i++) expect((await hit(rd.port, FALLBACK, c.path)).status).to.equal(302);
      // 99 rows wait for the minute; the hundredth makes the batch leave.
      expect(rd.scans.pending).to.equal(99);
      expect((await hit(rd.port, FALLBACK, c.path)).status).to.equal(302);
      expect(rd.scans.pending).to.equal(0);
      await waitFor(
        () => counts(c.id),
        (v) => v.c === 100,
      );
      expect(await counts(c.id)).to.deep.equal({ c: 100, u: 100 });
      expect((await hit(rd.port, FALLBACK, c.path)).status).to.equal(302);
      expect(rd.scans.pending).to.equal(1);
    } finally {
      await rd.close();
      await other.close();
    }
    // close() sent the last one.
    expect(await counts(c.id)).to.deep.equal({ c: 101, u: 101 });
  });

  it('replays a spill file once across two restarts, even when a replayed file comes back', async () => {
    const spillDir = path.join(svc.app.config.dataDir, 'spill-restarts');
    const opts = { flushMs: 30, insertAttempts: 1, backoffMs: 5, spillDir };
    const c = await code();

    // Life 1: ClickHouse is down; what is served ends up in the spill file at close.
    await detach();
    let first: RedirectListener | null = await startRedirectListener(svc.app, 0, '127.0.0.1', opts);
    try {
      for (let i = 0; i < 40; i++) expect((await hit(first.port, FALLBACK, c.path)).status).to.equal(302);
      await first.close();
      expect(first.scans.stats.spilledRows).to.equal(40);
      first = null;
    } finally {
      await first?.close();
      await attach();
    }
    const files = await fs.readdir(spillDir);
    expect(files).to.have.length.at.least(1);
    const saved = await Promise.all(files.map(async (f) => [f, await fs.readFile(path.join(spillDir, f))] as const));

    // Life 2: replays at start, deletes the file.
    const second = await startRedirectListener(svc.app, 0, '127.0.0.1', opts);
    await second.scans.settled();
    expect(await counts(c.id)).to.deep.equal({ c: 40, u: 40 });
    expect(await fs.readdir(spillDir)).to.deep.equal([]);
    await second.close();

    // A crash between the inserts and the delete would leave the file behind: put it back.
    for (const [f, data] of saved) await fs.writeFile(path.join(spillDir, f), data);
    const third = await startRedirectListener(svc.app, 0, '127.0.0.1', opts);
    await third.scans.settled();
    expect(third.scans.stats.replayedRows).to.equal(40);
    expect(await counts(c.id)).to.deep.equal({ c: 40, u: 40 });
    expect(await fs.readdir(spillDir)).to.deep.equal([]);
    await third.close();
  });

  describe('two application contexts on one Postgres', () => {
    let other: AppContext;
    let a: RedirectListener;
    let b: RedirectListener;

    before(async () => {
      const dataDir = path.join(svc.app.config.dataDir, 'second-process');
      const config = loadConfig(
        { LOG_LEVEL: testLogLevel() },
        {
          dataDir,
          databaseUrl: svc.app.databaseUrl,
          clickhouseDatabase: svc.app.ch.database,
          redirectPort: 0,
          enableWorker: false,
        },
      );
      other = await boot(config, createLogger(config.logLevel), {
        databaseUrl: svc.app.databaseUrl,
        sharedClickHouse: svc.app.ch,
        migrate: false,
      });
      a = await startRedirectListener(svc.app, 0, '127.0.0.1', {
        flushMs: 50,
        counterFlushMs: 200,
        spillDir: path.join(svc.app.config.dataDir, 'spill-a'),
      });
      b = await startRedirectListener(other, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 200 });
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await other?.close();
    });

    /** Every notification committed so far has reached process b (its cache acted on it). */
    const notifiedToB = () => notifyBarrier(other, 'redirect_cache', redirectCacheMarker());

    it('serves a change made through one process from the other once it is notified', async () => {
      const c = await code({ destination: 'https://example.com/v1' });
      await notifiedToB(); // the insert's own notification
      expect((await hit(b.port, FALLBACK, c.path)).headers.location).to.equal('https://example.com/v1');
      const hitsBefore = b.cache.stats.hits;
      expect((await hit(b.port, FALLBACK, c.path)).headers.location).to.equal('https://example.com/v1');
      expect(b.cache.stats.hits).to.be.above(hitsBefore); // served from b's cache

      await svc.app
        .db('qr_codes')
        .where({ id: c.id })
        .update({ destination: JSON.stringify('https://example.com/v2'), updated_at: new Date() });
      await notifiedToB();
      expect((await hit(b.port, FALLBACK, c.path)).headers.location).to.equal('https://example.com/v2');

      await svc.app.db('qr_codes').where({ id: c.id }).update({ status: 'paused' });
      await notifiedToB();
      expect((await hit(b.port, FALLBACK, c.path)).status).to.equal(404);
    });

    it('serves a code created after its slug was looked up (a cached miss) once it is notified', async () => {
      const p = `/${org.slug}/late`;
      expect((await hit(b.port, FALLBACK, p)).status).to.equal(404);
      await insertCode(svc.app, { orgId: org.id, orgSlug: org.slug, domainId: fallbackId, slug: 'late' });
      await notifiedToB();
      expect((await hit(b.port, FALLBACK, p)).status).to.equal(302);
    });

    it('does not notify for counter flushes', async () => {
      const c = await code();
      const key = `${org.slug}/${c.path.split('/').pop()}`;
      const received: string[] = [];
      await other.notify.subscribe(
        'redirect_cache',
        (payload) => received.push(payload),
        () => undefined,
      );
      await notifiedToB(); // the insert's own notification
      await hit(b.port, FALLBACK, c.path);
      const from = received.length;
      await hit(a.port, FALLBACK, c.path);
      await Promise.all([a.scans.flush(), b.scans.flush()]);
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(2);
      // Anything the flush notified arrives before a marker sent after it.
      await notifiedToB();
      const afterFlush = received.slice(from);
      expect(afterFlush).to.have.length(1);
      expect(afterFlush[0]).to.not.include(key);
      expect(JSON.parse(afterFlush[0])).to.have.property('marker');
    });

    it('holds redirect_cap across both processes', async () => {
      const c = await code({ redirect_cap: 25 });
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => hit(i % 2 ? a.port : b.port, FALLBACK, c.path).then((r) => r.status)),
      );
      expect(results.filter((s) => s === 302)).to.have.length(25);
      expect(results.filter((s) => s === 410)).to.have.length(35);
      await Promise.all([a.counters.flush(), b.counters.flush()]);
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(25);
    });

    it('gives back unused reservations so redirects_count is exact after a flush', async () => {
      const c = await code({ redirect_cap: 1000 });
      for (let i = 0; i < 30; i++) await hit(i % 2 ? a.port : b.port, FALLBACK, c.path);
      await Promise.all([a.counters.flush(), b.counters.flush()]);
      expect((await svc.app.db('qr_codes').where({ id: c.id }).first('redirects_count')).redirects_count).to.equal(30);
    });
  });
});
