// Print runs (part of make bench-render): an export of BENCH_EXPORT_CODES codes (default 10,000) as
// SVG through the real job (runExport: render, ZIP, 1 MiB chunks into Postgres), timed, with the
// process's RSS sampled every 50 ms and, run with --expose-gc, the live heap (after a full GC)
// every 500 ms. Run first at a fifth of the size: memory is flat when what stays alive does not
// grow with the images. Baseline from the same run: the same codes rendered by the engine alone
// (renderCodeImage, no ZIP, no Postgres writes). Goal: 10,000 SVGs in at most 60 s with flat memory
// (FLAT_GROWTH); exits non-zero when it is missed.
//   BENCH_EXPORT_CODES=10000 BENCH_EXPORT_FORMAT=svg make bench-render
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { runExport } from '../../server/qr-code-exports/job.js';
import { createExport } from '../../server/qr-code-exports/service.js';
import type { ExportFormat } from '../../server/qr-code-exports/schema.js';
import { renderCodeImage } from '../../server/qr-codes/image.js';
import { findCodes } from '../../server/qr-codes/repository.js';
import { createCodes } from '../../server/qr-codes/service.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { exitIfGoalsMissed, machine } from './lib.js';

const CODES = Number(process.env.BENCH_EXPORT_CODES ?? 10_000);
const FORMAT = (process.env.BENCH_EXPORT_FORMAT ?? 'svg') as ExportFormat;
const MiB = 2 ** 20;

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-export-'));
await fs.chmod(root, 0o755);
const log = createLogger('warn');
const pg = await startEmbeddedPostgres({
  dataDir: root,
  port: 0,
  database: 'qr',
  log,
  ephemeral: process.env.BENCH_EPHEMERAL === '1',
});
const config = loadConfig(
  { ...process.env, LOG_LEVEL: 'warn' },
  { dataDir: path.join(root, 'svc'), exportMaxCodes: CODES },
);
const app = await boot(config, log, { databaseUrl: pg.url, clickhouse: false, reconcileFallbacks: true });

interface Run {
  codes: number;
  seconds: number;
  bytes: number;
  rssStart: number;
  rssPeak: number;
  heapPeak: number;
  /** RSS at 25%, 50%, 75% of the run's samples. */
  rssAt: number[];
  /** Live heap and buffers after a full GC at 25%, 50%, 75% and the end (empty without --expose-gc). */
  liveAt: number[];
}

/**
 * Flat memory: the full run's live heap after GC at 50, 75 and 100% at most this much above its value
 * at 25% (with --expose-gc, as make bench-render runs it; without, its RSS at 50 and 75% against 25%).
 */
const FLAT_GROWTH = 0.25;

const gc = (globalThis as { gc?: () => void }).gc;
const live = () => {
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

async function exportRun(
  org: Awaited<ReturnType<typeof createOrganization>>['org'],
  ulids: string[],
  measureLive = false,
): Promise<Run> {
  const created = await createExport(
    app,
    org,
    { code_ulids: ulids, format: FORMAT },
    { tokenId: null, source: 'bench' },
  );
  const id = (await app.db('qr_code_exports').where({ ulid: created.ulid }).first('id')).id as number;
  const samples: number[] = [];
  let heapPeak = 0;
  const sample = () => {
    const m = process.memoryUsage();
    samples.push(m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed + m.external + m.arrayBuffers);
  };
  const lives: number[] = [];
  sample();
  const timer = setInterval(sample, 50);
  // A full GC every second slows the run down: only the memory run does it, its time is not reported.
  const liveTimer = measureLive ? setInterval(() => lives.push(live()), 1000) : undefined;
  const started = performance.now();
  await runExport(app, id);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  clearInterval(liveTimer);
  sample();
  const row = await app.db('qr_code_exports').where({ id }).first();
  if (row.status !== 'completed' || row.done !== ulids.length)
    throw new Error(`export ended ${row.status}, ${row.done}`);
  const at = (f: number) => samples[Math.floor((samples.length - 1) * f)];
  return {
    codes: ulids.length,
    seconds,
    bytes: Number(row.zip_bytes),
    rssStart: samples[0],
    rssPeak: Math.max(...samples),
    heapPeak,
    rssAt: [at(0.25), at(0.5), at(0.75)],
    liveAt: lives.length ? [0.25, 0.5, 0.75, 1].map((f) => lives[Math.floor((lives.length - 1) * f)]) : [],
  };
}

/** The goals missed: the process then exits non-zero. */
const missed: string[] = [];
try {
  const { org } = await createOrganization(app, {
    name: 'Print shop',
    slug: 'print-shop',
    planCode: 'enterprise_monthly',
    currency: 'EUR',
    ownerEmail: 'owner@print.example',
  });
  const domain = (await app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid as string;
  const ulids: string[] = [];
  for (let i = 0; i < CODES; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, CODES - i) }, (_, j) => ({
      slug: `table-${i + j}`,
      destination: `https://menu.example.com/tables/${i + j}?lang=en`,
      domain_ulid: domain,
    }));
    for (const c of await createCodes(app, org, rows)) ulids.push(c.ulid);
  }

  // Baseline: the engine alone on the same codes.
  const rows = [];
  for (let i = 0; i < ulids.length; i += 1000) rows.push(...(await findCodes(app.db, org, ulids.slice(i, i + 1000))));
  const baseStart = performance.now();
  for (const code of rows) await renderCodeImage(app, org, code, { format: FORMAT }, true);
  const baseSeconds = (performance.now() - baseStart) / 1000;

  const small = await exportRun(org, ulids.slice(0, Math.max(1, Math.floor(CODES / 5))));
  const full = await exportRun(org, ulids);
  const smallLive = gc ? await exportRun(org, ulids.slice(0, small.codes), true) : null;
  const fullLive = gc ? await exportRun(org, ulids, true) : null;
  const mib = (v: number) => `${(v / MiB).toFixed(1)} MiB`;
  const line = (r: Run) =>
    `${String(r.codes).padStart(6)} codes: ${r.seconds.toFixed(1)} s (${((r.seconds * 1000) / r.codes).toFixed(2)} ms/code), ` +
    `ZIP ${mib(r.bytes)}; RSS ${mib(r.rssStart)} at start, ${r.rssAt.map(mib).join(' / ')} at 25/50/75%, ` +
    `peak ${mib(r.rssPeak)} (+${mib(r.rssPeak - r.rssStart)}); JS heap + buffers peak ${mib(r.heapPeak)}`;
  const liveLine = (r: Run | null) =>
    r ? `${String(r.codes).padStart(6)} codes: ${r.liveAt.map(mib).join(' / ')} at 25/50/75/100%` : '';
  process.stdout.write(
    `\nbench-render, print runs  machine: ${machine()}  load average ${os.loadavg()[0].toFixed(1)}\n\n` +
      `export as ${FORMAT} (render, ZIP, 1 MiB chunks into Postgres):\n  ${line(small)}\n  ${line(full)}\n` +
      (gc
        ? `live heap and buffers after a full GC, once a second (separate runs, slowed by the GCs):\n  ${liveLine(smallLive)}\n  ${liveLine(fullLive)}\n`
        : 'run with node --expose-gc for the live heap after GC\n') +
      `baseline, the engine alone on the same ${rows.length} codes: ${baseSeconds.toFixed(1)} s ` +
      `(${((baseSeconds * 1000) / rows.length).toFixed(2)} ms/code)\n` +
      `goal: ${CODES} SVGs in at most 60 s with flat memory\n`,
  );
  const memory = fullLive ? fullLive.liveAt : full.rssAt;
  const flat = memory.every((m) => m <= memory[0] * (1 + FLAT_GROWTH));
  const inTime = full.seconds <= 60;
  process.stdout.write(
    `  time: ${full.seconds.toFixed(1)} s ${inTime ? 'met' : 'NOT met'}; memory (${fullLive ? 'live heap after GC' : 'RSS'} ` +
      `at most ${FLAT_GROWTH * 100}% above its first sample): ${flat ? 'met' : 'NOT met'}\n\n`,
  );
  if (!inTime) missed.push(`${CODES} SVGs took more than 60 s`);
  if (!flat) missed.push('memory not flat');
} finally {
  await app.close();
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
exitIfGoalsMissed(missed);
