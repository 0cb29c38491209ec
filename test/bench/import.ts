// make bench-import: an import of BENCH_IMPORT_LINKS links (10,000) with BENCH_IMPORT_VISITS visits
// (1,000,000) from a local Shlink server in another process (test/bench/import-source.ts), through
// POST /v1/imports' own path: the preview job, the confirm, the run job (codes, then every visit as
// a scan in ClickHouse) in graphile-worker, on embedded Postgres and chDB. Prints links/s and
// scans/s of each phase, the whole time (goal: under 2 minutes), and this process's resident memory
// sampled every second through the run and at each quarter of the visits (goal: flat, it does not
// grow with the visits imported).
// Baseline from the same run: the same pages read from the same server with plain fetch, one after
// the other as the importer reads them, nothing written: what the source alone costs.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createImport, confirmImport, readImport, type ImportOut } from '../../server/imports/service.js';
import { SHLINK_LINKS_PER_PAGE, SHLINK_VISITS_PER_PAGE } from '../../server/imports/sources/shlink.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { startWorker } from '../../workers/index.js';
import { exitIfGoalsMissed, machine, startChild, stopChild } from './lib.js';

const LINKS = Number(process.env.BENCH_IMPORT_LINKS ?? 10_000);
const VISITS = Number(process.env.BENCH_IMPORT_VISITS ?? 1_000_000);
const env = { BENCH_IMPORT_LINKS: String(LINKS), BENCH_IMPORT_VISITS: String(VISITS) };

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const rss = () => Math.round(process.memoryUsage().rss / 2 ** 20);
/** The V8 heap in use: what JavaScript holds, beside chDB's native memory (in rss, not here). */
const heap = () => Math.round(process.memoryUsage().heapUsed / 2 ** 20);
const n = (v: number) => Math.round(v).toLocaleString('en');
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** The goals missed (the whole import within 2 minutes, its memory flat): the process then exits non-zero. */
const missed: string[] = [];
/**
 * Flat memory: the resident memory as the scans pass half, three quarters and all of the visits is
 * within this share above what it was at the first quarter (by then chDB's buffers and the two
 * batches in flight are allocated), so it does not grow with the number of visits imported.
 */
const FLAT_GROWTH = 0.15;

console.log(`bench-import: ${n(LINKS)} links, ${n(VISITS)} visits; ${machine()}; load ${load()}`);
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-import-'));
// Run with node --cpu-prof (and --cpu-prof-dir), the source server is profiled too.
const profile = process.execArgv.filter((a) => a.startsWith('--cpu-prof'));
const source = await startChild(process.execPath, [...profile, '--import', 'tsx', 'test/bench/import-source.ts'], env);
const base = `http://127.0.0.1:${source.port}`;
const log = createLogger('warn');
const config = loadConfig(
  { ...process.env, LOG_LEVEL: 'warn' },
  { dataDir: path.join(root, 'svc'), importAllowPrivateSources: true, enableApi: false, enableRedirect: false },
);
const app = await boot(config, log, { reconcileFallbacks: true });

try {
  // Baseline: every page the importer reads, with plain fetch.
  const get = async (p: string) => {
    const res = await fetch(base + p, { headers: { 'X-Api-Key': 'bench-key' } });
    if (!res.ok) throw new Error(`${p}: ${res.status}`);
    return res.json() as Promise<Record<string, { data: { shortCode: string }[]; pagination: { pagesCount: number } }>>;
  };
  let t = performance.now();
  let readVisits = 0;
  for (let page = 1, pages = 1; page <= pages; page++) {
    const body = await get(
      `/rest/v3/short-urls?page=${page}&itemsPerPage=${SHLINK_LINKS_PER_PAGE}&orderBy=dateCreated-ASC`,
    );
    pages = body.shortUrls.pagination.pagesCount;
    for (const s of body.shortUrls.data) {
      await get(`/rest/v3/short-urls/${s.shortCode}/redirect-rules`);
      for (let vp = 1, vps = 1; vp <= vps; vp++) {
        const v = await get(
          `/rest/v3/short-urls/${s.shortCode}/visits?page=${vp}&itemsPerPage=${SHLINK_VISITS_PER_PAGE}`,
        );
        vps = v.visits.pagination.pagesCount;
        readVisits += v.visits.data.length;
      }
    }
  }
  const baselineMs = performance.now() - t;
  console.log(
    `baseline, the source alone (plain fetch of every page, nothing written): ${secs(baselineMs)}, ${n(readVisits / (baselineMs / 1000))} visits/s; load ${load()}`,
  );

  const { org } = await createOrganization(app, {
    name: 'Bench import',
    slug: 'bench-import',
    planCode: 'enterprise_monthly',
    currency: 'EUR',
    ownerEmail: 'bench@example.com',
  });
  const worker = await startWorker(app);
  const samples: number[] = [];
  const heapSamples: number[] = [];
  const sampler = setInterval(() => {
    samples.push(rss());
    heapSamples.push(heap());
  }, 1000);
  const wait = async (ulid: string, done: (i: ImportOut) => boolean, each?: (i: ImportOut) => void) => {
    for (;;) {
      const imp = await readImport(app, org, ulid);
      each?.(imp);
      if (done(imp)) return imp;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  try {
    t = performance.now();
    const created = await createImport(
      app,
      org,
      { source: 'shlink', credentials: { url: base, api_key: 'bench-key' } },
      { tokenId: null },
    );
    const staged = await wait(created.data.ulid, (i) => i.status !== 'previewing');
    if (staged.status !== 'staged') throw new Error(`preview ${staged.status}: ${staged.error_message}`);
    const previewMs = performance.now() - t;
    console.log(
      `preview: ${secs(previewMs)}, ${n(LINKS / (previewMs / 1000))} links/s; rss ${rss()} MiB; load ${load()}`,
    );

    t = performance.now();
    await confirmImport(app, org, staged.ulid, created.confirmToken);
    let linksMs = 0;
    const rssAfterLinks: number[] = [];
    /** Resident memory as the scans pass each quarter of the visits (flat: no growth with the visits). */
    const rssByQuarter: (number | undefined)[] = [undefined, undefined, undefined, undefined];
    const done = await wait(
      staged.ulid,
      (i) => ['completed', 'completed_with_errors', 'failed'].includes(i.status),
      (i) => {
        if (!linksMs && i.progress.links_done >= i.progress.links_total && i.progress.links_total > 0) {
          linksMs = performance.now() - t;
          rssAfterLinks.push(rss());
        }
        const quarter = Math.min(4, Math.floor((4 * i.progress.scans_done) / VISITS));
        for (let q = 0; q < quarter; q++) rssByQuarter[q] ??= rss();
      },
    );
    const runMs = performance.now() - t;
    if (done.status === 'failed') throw new Error(`run failed: ${done.error_message}`);
    const scansMs = runMs - linksMs;
    console.log(
      `run, codes: ${n(done.progress.links_created)} in ${secs(linksMs)}, ${n(done.progress.links_created / (linksMs / 1000))} links/s`,
    );
    console.log(
      `run, scans: ${n(done.progress.scans_done)} in ${secs(scansMs)}, ${n(done.progress.scans_done / (scansMs / 1000))} scans/s` +
        ` (${(baselineMs / scansMs).toFixed(2)} of the baseline's speed reading the same pages)`,
    );
    const whole = previewMs + runMs;
    if (whole > 120_000) missed.push('the whole import took more than 2 minutes');
    console.log(
      `whole import: ${secs(whole)} (goal ≤ 120 s: ${whole <= 120_000 ? 'met' : 'NOT met'}); status ${done.status}; load ${load()}`,
    );
    const lastRun = (all: number[]) => all.slice(-Math.max(1, Math.round(runMs / 1000)));
    const during = lastRun(samples);
    const heapDuring = lastRun(heapSamples);
    console.log(
      `resident memory of the service process through the run: min ${Math.min(...during)} MiB, max ${Math.max(...during)} MiB, ` +
        `after the codes ${rssAfterLinks[0] ?? '?'} MiB, at the end ${rss()} MiB; ` +
        `V8 heap in use min ${Math.min(...heapDuring)} MiB, max ${Math.max(...heapDuring)} MiB`,
    );
    const first = rssByQuarter[0] ?? 0;
    const flat = rssByQuarter.every((r) => r !== undefined && r <= first * (1 + FLAT_GROWTH));
    if (!flat) missed.push('memory not flat');
    console.log(
      `resident memory as the scans passed 25% / 50% / 75% / 100% of the visits: ${rssByQuarter.map((r) => r ?? '?').join(' / ')} MiB` +
        ` (goal flat, each at most ${FLAT_GROWTH * 100}% above the first: ${flat ? 'met' : 'NOT met'})`,
    );
    if (done.progress.scans_done !== VISITS)
      throw new Error(`expected ${VISITS} scans, got ${done.progress.scans_done}`);
  } finally {
    clearInterval(sampler);
    await worker.stop();
  }
} finally {
  await app.close();
  await stopChild(source.child);
  await fs.rm(root, { recursive: true, force: true });
}
exitIfGoalsMissed(missed);
process.exit(0);
