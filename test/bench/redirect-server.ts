// The service side of `make bench-redirect`: boots the stores from the environment (DATABASE_URL,
// embedded chDB under DATA_DIR), creates an organization with two codes on the fallback origin
// (one for warm-up, one measured), the realistic mix's 1,000 codes and a vcard code (its landing page measured), serves the public redirect with scan recording on, and prints
// `LISTENING <port>`. On SIGTERM it drains (as the service does) and prints the measured code's
// scans in ClickHouse and the redirects served (redirects_count): `SCANS <count> <distinct> <served>`,
// and the same over the mix's codes (`MIXSCANS`); the GS1 code's line adds those of its scans whose
// row carries the resolution's GTIN and lot (`GS1 <count> <distinct> <served> <with GTIN and lot> <distinct>`).
//
// Diagnostics (not part of the benchmark's figures):
//   BENCH_PROBE=1        prints a PROBE line: event-loop delay, inserts (count, rows, time), CPU per
//                        thread (main user/sys, chDB's threads), GC time, all over the measured run
//   BENCH_TIME_HANDLE=1  adds the wall time per request inside the handler and inside res.end()
//   BENCH_SCANS=off      the scan row is built but not buffered (no ClickHouse work)
//   BENCH_JOURNAL=off    no scan journal (the baseline of what journaling every scan costs)
//   BENCH_EXPERIMENT=bare302  the handler is replaced by the bare 302, inside this process
//   BENCH_PROFILE=<file> a V8 CPU profile (what --cpu-prof records) of one measured row alone (the
//                        mix, or BENCH_PROFILE_ROW; redirect.ts sends SIGUSR2 before and after it),
//                        written to <file>; test/bench/flamegraph.ts makes it an SVG
import fs from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { ulid } from 'ulid';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { onShutdown } from '../../server/process.js';
import { startRedirectListener } from '../../server/redirect/listener.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';
import { examplePixelId } from '../../server/qr-codes/pixels.js';
import { cpuProfiler } from './cpu-profile.js';
import { mixSlug } from './traffic-mix.js';
import { BENCH_GS1_PRODUCT } from './traffic-mix.js';

const config = loadConfig(process.env, { enableWorker: false });
const log = createLogger(config.logLevel);
const app = await boot(config, log, { reconcileFallbacks: true });
const { org } = await createOrganization(app, {
  name: 'Bench',
  slug: 'bench',
  planCode: null,
  currency: 'EUR',
  ownerEmail: 'bench@example.com',
});
const domain = await app.db('domains').where({ type: 'fallback' }).first('id');
const ids: Record<string, number> = {};
const codeRow = (slug: string) => ({
  ulid: ulid(),
  org_id: org.id,
  domain_id: domain.id,
  slug: `bench/${slug}`,
  destination: JSON.stringify('https://example.com/landing?from=qr'),
});
for (const slug of ['warm', 'go']) {
  const [row] = await app.db('qr_codes').insert(codeRow(slug)).returning('id');
  ids[slug] = Number(row.id);
}
// The realistic mix's codes (traffic-mix.ts): bench/m0000 ... (BENCH_MIX_CODES, default 1,000).
const mixCodes = Number(process.env.BENCH_MIX_CODES ?? 1000);
for (let i = 0; i < mixCodes; i += 500) {
  const rows = Array.from({ length: Math.min(500, mixCodes - i) }, (_, j) => codeRow(mixSlug(i + j)));
  await app.db('qr_codes').insert(rows);
}
// The landing-page row: a vcard code, its page answered from the same cache as the redirect.
const [card] = await app
  .db('qr_codes')
  .insert({
    ulid: ulid(),
    org_id: org.id,
    domain_id: domain.id,
    slug: 'bench/card',
    type: 'vcard',
    destination: JSON.stringify(LANDING_CASES.vcard),
  })
  .returning('id');
ids.card = Number(card.id);
// The GS1 row: a gs1 product code, resolved by the GS1-Conformant resolver from the same cache.
const [gs1] = await app
  .db('qr_codes')
  .insert({
    ulid: ulid(),
    org_id: org.id,
    domain_id: domain.id,
    slug: 'bench/rice',
    type: 'gs1',
    destination: JSON.stringify(BENCH_GS1_PRODUCT),
  })
  .returning('id');
ids.gs1 = Number(gs1.id);
// The pixel page row: a code with two tracking pixels (Meta, GA4) and the default consent rule (the
// banner asks), answered from the same cache; the mix's codes have none (they stay the 302 row).
const [px] = await app
  .db('qr_codes')
  .insert({
    ...codeRow('px'),
    tracking_pixels: JSON.stringify([
      { provider: 'meta', id: examplePixelId('meta') },
      { provider: 'ga4', id: examplePixelId('ga4') },
    ]),
  })
  .returning('id');
ids.px = Number(px.id);
// Replacing the handler's prototype method is how the experiments reach inside the listener.
if (process.env.BENCH_EXPERIMENT === 'bare302') {
  const { RedirectHandler } = await import('../../server/redirect/handler.js');
  RedirectHandler.prototype.handle = function (_req, res) {
    res.writeHead(302, {
      Location: 'https://example.com/landing?from=qr',
      'Cache-Control': 'private, max-age=0',
      'Content-Length': 0,
    });
    res.end();
  };
}
const timing = { handle: 0, end: 0, n: 0 };
if (process.env.BENCH_TIME_HANDLE === '1') {
  const { RedirectHandler } = await import('../../server/redirect/handler.js');
  const http = await import('node:http');
  const handle = RedirectHandler.prototype.handle;
  RedirectHandler.prototype.handle = function (req, res) {
    const t0 = performance.now();
    const r = handle.call(this, req, res);
    timing.handle += performance.now() - t0;
    timing.n++;
    return r;
  };
  const end = http.ServerResponse.prototype.end;
  http.ServerResponse.prototype.end = function (this: never, ...args: never[]) {
    const t0 = performance.now();
    const r = (end as (...a: never[]) => unknown).apply(this, args);
    timing.end += performance.now() - t0;
    return r;
  } as never;
}
// BENCH_JOURNAL=off: the baseline without the scan journal, to measure what it costs.
const rd = await startRedirectListener(app, 0, '127.0.0.1', { journal: process.env.BENCH_JOURNAL !== 'off' });
const probe = process.env.BENCH_PROBE === '1';
if (process.env.BENCH_SCANS === 'off') rd.scans.push = () => undefined;
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
let cpuAtStart: Record<string, number> = {};
const gcMs: Record<string, number> = {};
let gcOn = false;
new PerformanceObserver((list) => {
  if (!gcOn) return;
  for (const e of list.getEntries()) {
    const kind =
      ({ 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak', 16: 'all' } as Record<number, string>)[
        (e as unknown as { detail: { kind: number } }).detail.kind
      ] ?? 'other';
    gcMs[kind] = (gcMs[kind] ?? 0) + e.duration;
    gcMs[kind + '#'] = (gcMs[kind + '#'] ?? 0) + 1;
  }
}).observe({ entryTypes: ['gc'] });
const profileFile = process.env.BENCH_PROFILE;
const profiler = profileFile ? cpuProfiler(200) : null;
let signals = 0;
if (probe || profiler) {
  process.on('SIGUSR2', () => {
    // the bench sends it when the measured run starts, and again when it ends (the profile only)
    if (profiler && signals++ === 0) {
      profiler.start();
    } else if (profiler) {
      void stopProfile();
      return;
    }
    if (!probe) return;
    loopDelay.enable();
    cpuAtStart = threadCpu();
    gcOn = true;
  });
}
process.stdout.write(`LISTENING ${rd.port}\n`);

/** CPU seconds per thread name (from /proc), so chDB's threads show apart from the event loop. */
function threadCpu(): Record<string, number> {
  const out: Record<string, number> = {};
  const tick = 100; // USER_HZ
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (tid === String(process.pid)) {
        out['main(user)'] = Number(f[11]) / tick;
        out['main(sys)'] = Number(f[12]) / tick;
      } else out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / tick;
    } catch {
      /* thread ended */
    }
  }
  return out;
}

async function stopProfile(): Promise<void> {
  if (!profiler || !profileFile || signals !== 2) return;
  signals++;
  await profiler.stop(profileFile);
}

onShutdown(log, async () => {
  if (probe) {
    loopDelay.disable();
    const ms = (ns: number) => (ns / 1e6).toFixed(1);
    const st = rd.scans.stats;
    const cpu = Object.entries(threadCpu())
      .map(([k, v]) => [k, v - (cpuAtStart[k] ?? 0)] as const)
      .filter(([, v]) => v >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}=${v.toFixed(1)}s`)
      .join(' ');
    process.stdout.write(
      `PROBE loop delay p50 ${ms(loopDelay.percentile(50))} p99 ${ms(loopDelay.percentile(99))} max ${ms(loopDelay.max)} ms; ` +
        `inserts ${st.batches} (${Math.round(st.inserted / Math.max(1, st.batches))} rows avg, ${(st.insertMs / Math.max(1, st.batches)).toFixed(0)} ms avg, ${st.insertMsMax.toFixed(0)} ms max); ${timing.n ? `handle ${((timing.handle * 1000) / timing.n).toFixed(1)} µs (of which res.end ${((timing.end * 1000) / timing.n).toFixed(1)} µs) wall per request; ` : ''}cpu ${cpu}; gc ${Object.entries(
          gcMs,
        )
          .map(([k, v]) => `${k}=${Math.round(v)}`)
          .join(' ')}\n`,
    );
  }
  await rd.close();
  /** Codes' scans in ClickHouse (count, distinct scan_id) and their redirects_count: `<c> <u> <served>`. */
  const scansOf = async (codeIds: number[]): Promise<string> => {
    const rs = await app.ch.client.query({
      query: `SELECT count() AS c, uniqExact(scan_id) AS u FROM ${app.ch.database}.scan_events WHERE code_id IN {ids:Array(UInt64)}`,
      query_params: { ids: codeIds },
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ c: string; u: string }>();
    // redirects_count is counted by a separate path (counters.ts, flushed at close): the served figure.
    const served = await app.db('qr_codes').whereIn('id', codeIds).sum({ n: 'redirects_count' }).first();
    return `${row.c} ${row.u} ${Number(served?.n ?? 0)}`;
  };
  const mixIds = (await app.db('qr_codes').where('org_id', org.id).whereLike('slug', 'bench/m%').pluck('id')).map(
    Number,
  );
  process.stdout.write(`SCANS ${await scansOf([ids.go])} spilled=${rd.scans.stats.spilledRows}\n`);
  process.stdout.write(`MIXSCANS ${await scansOf(mixIds)} codes=${mixIds.length}\n`);
  process.stdout.write(`PAGES ${await scansOf([ids.card])}\n`);
  // The GS1 row's scans that carry the resolution's dimensions in their own row (the product's GTIN, a lot).
  const rs = await app.ch.client.query({
    query: `SELECT count() AS c, uniqExact(scan_id) AS u FROM ${app.ch.database}.scan_events
             WHERE code_id = {id:UInt64} AND gtin = {gtin:String} AND lot != '' AND link_type_served != ''`,
    query_params: { id: ids.gs1, gtin: BENCH_GS1_PRODUCT.gtin },
    format: 'JSONEachRow',
  });
  const [resolutions] = await rs.json<{ c: string; u: string }>();
  process.stdout.write(`GS1 ${await scansOf([ids.gs1])} ${resolutions.c} ${resolutions.u}\n`);
  process.stdout.write(`PIXELS ${await scansOf([ids.px])}\n`);
  const { hits, misses, filtered } = rd.cache.stats;
  const dropped = (await app.metrics.orphanScansDropped.get()).values[0]?.value ?? 0;
  process.stdout.write(
    `CACHE hits=${hits} misses=${misses} filtered=${filtered} orphans=${rd.orphans.stats.inserted} dropped=${dropped}\n`,
  );
  await app.close();
});
