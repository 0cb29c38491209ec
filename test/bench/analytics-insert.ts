// What recording a scan costs ClickHouse: `tsx test/bench/analytics-insert.ts [--batches 8]
// [--rows 20000] [--codes 1000]`. Inserts the same batches of scans (one day, spread over `--codes`
// codes in a fifth as many brands, dimension values spread like demo traffic), TabSeparated as the
// redirect writes them (with their batch's deduplication token), into databases of one embedded
// chDB, one after the other: scan_events alone with the columns the redirect writes (0001 and the
// GS1 dimensions of 0026; the baseline), with the `batch` column and its bloom-filter index (0012),
// with the scan_daily view (0002), with the scan_spans view on top (0004), with the imported-scans
// view (0010, which every insert runs and which keeps no redirect's row), with the spans of four
// lengths instead of seven (0029), with scan_daily's view rolling the code scope up (0030), and with
// one view writing the one-day spans only, the longer ones rolled once the day is over (0031: every
// migration that touches scan_events' inserts), and prints the CPU per scan of each (all of chDB's
// threads: the process's CPU time, from the first insert until the setup's background merges are
// done) and the difference from the setup before. The statements of each setup are applied in their
// migrations' order. Then what 0031's roll of the day costs (once a day, not once per batch) and
// whether its spans, once rolled, are those 0030's views wrote.
//
// The defaults are the redirect benchmark's mix (1,000 codes) and the batch SCAN_FLUSH_MS (3 s) of
// it brings to one process (about 20,000 scans): the rollup rows of a batch grow with the codes and
// values it holds, so fewer codes or larger batches cost less per scan (`--rows 5000 --batches 20`
// was the one-second batch before 2026-11-28, `--codes 25 --rows 10000` the figures before that). Exits
// non-zero when every migration together costs more than the goal (GOAL_US, 12 us per scan) or the
// rolled spans differ from the views'.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { statements as scanEvents } from '../../clickhouse/0001_scan_events.js';
import { statements as scanDaily } from '../../clickhouse/0002_scan_daily.js';
import { statements as scanSpans } from '../../clickhouse/0004_scan_spans.js';
import { statements as importedScans } from '../../clickhouse/0010_imported_scans.js';
import { statements as scanBatch } from '../../clickhouse/0012_scan_batch.js';
import { statements as spanLevels } from '../../clickhouse/0029_scan_span_levels.js';
import { statements as dailyRollup } from '../../clickhouse/0030_scan_daily_rollup.js';
import { statements as scanGs1 } from '../../clickhouse/0026_scan_gs1_dimensions.js';
import { statements as spanRoll } from '../../clickhouse/0031_scan_span_roll.js';
import { rollDay } from '../../server/analytics/span-roll.js';
import { NO_GS1, REDIRECT_SCAN_COLUMNS } from '../../server/analytics/scan-event.js';
import { encodeScanRow } from '../../server/redirect/scan-rows.js';
import { insertText, openClickHouse } from '../../server/stores/clickhouse.js';
import { exitIfGoalsMissed } from './lib.js';

const { values: args } = parseArgs({
  options: {
    batches: { type: 'string', default: '8' },
    rows: { type: 'string', default: '20000' },
    codes: { type: 'string', default: '1000' },
  },
});
const BATCHES = Number(args.batches);
const ROWS = Number(args.rows);
/** Codes the scans are spread over (a fifth as many brands, at least one): more codes, more rollup rows per batch. */
const CODES = Number(args.codes);
const BRANDS = Math.max(1, Math.round(CODES / 5));

const pick = <T>(xs: T[], u: number): T => xs[Math.floor(u * u * xs.length)];
const list = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const countries = list('C', 30);
const devices = ['mobile', 'desktop', 'tablet', 'bot'];
const referrers = ['', ...list('ref', 9)];
const languages = list('l', 15);
const providers = list('p', 40);

/** The day every batch's scans fall on (today, UTC), fixed once so the roll reads the same day. */
const DAY_MS = Date.now() - (Date.now() % 86_400_000);

let seed = 1;
const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
function batch(i: number): string {
  const lines: string[] = [];
  for (let r = 0; r < ROWS; r++) {
    const code = 1 + Math.floor(next() * next() * CODES);
    const device = pick(devices, next());
    lines.push(
      encodeScanRow({
        scan_id: `01JQ${String(i * ROWS + r).padStart(22, '0')}`,
        scanned_at: new Date(DAY_MS + Math.floor(next() * 86_400_000)).toISOString().replace('T', ' ').slice(0, 23),
        org_id: 1,
        brand_id: 1 + (code % BRANDS),
        domain_id: 1,
        code_id: code,
        visitor_hash: String(Math.floor(next() * 1e6)),
        country: pick(countries, next()),
        device_type: device,
        os: '',
        browser: '',
        referrer: pick(referrers, next()),
        language: pick(languages, next()),
        provider: pick(providers, next()),
        asn: 0,
        is_bot: device === 'bot' ? 1 : 0,
        matched_rule: -1,
        ...NO_GS1,
      }),
    );
  }
  return lines.join('');
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-insert-'));
const ch = await openClickHouse({
  clickhouseUrl: null,
  clickhouseDatabase: 'x',
  clickhouseCluster: null,
  dataDir: dir,
});
/** Until a database's background merges are done (at most 30 s). */
async function mergesDone(database: string): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const rs = await ch.client.query({
      query: `SELECT count() AS n FROM system.merges WHERE database = {db:String}`,
      query_params: { db: database },
      format: 'JSONEachRow',
    });
    if (Number((await rs.json<{ n: string }>())[0].n) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
/** The goals missed: the process then exits non-zero. */
const missed: string[] = [];
try {
  // Each setup's migrations by number, applied in that order (0010 and 0012 alter scan_events).
  const events = { 1: scanEvents, 26: scanGs1 };
  const batchIndex = { ...events, 12: scanBatch };
  const daily = { ...batchIndex, 2: scanDaily };
  const spans = { ...daily, 4: scanSpans };
  const imported = { ...spans, 10: importedScans };
  const levels = { ...imported, 29: spanLevels };
  const setups = {
    'scan_events only': events,
    '+ batch column, index (0012)': batchIndex,
    '+ scan_daily view (0002)': daily,
    '+ scan_spans view (0004)': spans,
    '+ imported-scans view (0010)': imported,
    '4 span lengths, not 7 (0029)': levels,
    'daily view by ROLLUP (0030)': { ...levels, 30: dailyRollup },
    'longer spans rolled (0031)': { ...levels, 30: dailyRollup, 31: spanRoll },
  };
  const migrated = Object.keys(setups) as (keyof typeof setups)[];
  const all: Record<
    string,
    Record<number, (ctx: { database: string; cluster: null; retentionDays: number }) => string[]>
  > = setups;
  const names = Object.keys(all);
  const cpu = new Map<string, number>(names.map((n) => [n, 0]));
  for (const [i, name] of names.entries()) {
    const database = `bench_insert_${i}`;
    await ch.client.command({ query: `CREATE DATABASE ${database}` });
    const migrations = Object.entries(all[name]).sort(([a], [b]) => Number(a) - Number(b));
    for (const [, m] of migrations)
      for (const query of m({ database, cluster: null, retentionDays: 400 })) await ch.client.command({ query });
  }
  console.log(
    `Insert cost: ${BATCHES} batches of ${ROWS.toLocaleString('en')} scans of ${CODES.toLocaleString('en')} codes in ` +
      `${BRANDS.toLocaleString('en')} brands into each setup, one setup after ` +
      'the other, each counted until its background merges are done',
  );
  const bodies = Array.from({ length: BATCHES }, (_, b) => Buffer.from(batch(b)));
  let roll = '';
  /** A rollup's figures per scope and dimension (scans and merged uniques), to compare two databases. */
  const rollups = async (database: string) =>
    JSON.stringify(
      await (
        await ch.client.query({
          query: `SELECT scope, dimension, sum(scans) AS scans, uniqCombinedMerge(12)(visitors) AS uniques
                    FROM ${database}.scan_spans GROUP BY scope, dimension ORDER BY scope, dimension`,
          format: 'JSONEachRow',
        })
      ).json(),
    );
  const cpuNow = () => {
    const c = process.cpuUsage();
    return c.user + c.system;
  };
  for (const [i, name] of names.entries()) {
    const database = `bench_insert_${i}`;
    const c0 = cpuNow();
    for (const [b, body] of bodies.entries()) {
      await insertText(ch.client, {
        table: `${database}.scan_events`,
        columns: REDIRECT_SCAN_COLUMNS,
        body,
        format: 'TabSeparated',
        dedupToken: `b${b}`,
      });
    }
    // The merges the inserts left are part of what they cost (all of chDB's threads).
    await mergesDone(database);
    cpu.set(name, cpuNow() - c0);
    if (name === 'longer spans rolled (0031)') {
      // The day's pending one-day rows into their longer spans: what the roll does once the day is over.
      const r0 = cpuNow();
      const t0 = performance.now();
      await rollDay({ ...ch, database }, new Date(DAY_MS).toISOString().slice(0, 10));
      await mergesDone(database);
      const us = (cpuNow() - r0) / (BATCHES * ROWS);
      const same =
        (await rollups(database)) === (await rollups(`bench_insert_${names.indexOf('daily view by ROLLUP (0030)')}`));
      roll =
        `  0031's roll of the day (once a day, after it is over): ${((cpuNow() - r0) / 1000).toFixed(0)} ms CPU, ` +
        `${(performance.now() - t0).toFixed(0)} ms, ${us.toFixed(1)} us per scan of this day; ` +
        `the same spans as 0030's views wrote: ${same ? 'yes' : 'NO'}`;
      if (!same) missed.push("0031's rolled spans differ from those 0030's views wrote");
    }
  }
  const perScan = (name: string) => cpu.get(name)! / (BATCHES * ROWS);
  let previous: number | undefined;
  console.log(
    `  load (uptime): ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const name of migrated) {
    const us = perScan(name);
    const d = previous === undefined ? 0 : us - previous;
    const delta = previous === undefined ? '' : `   (${d >= 0 ? '+' : '-'}${Math.abs(d).toFixed(1)} us per scan)`;
    console.log(`  ${name.padEnd(28)} ${us.toFixed(1).padStart(6)} us CPU per scan${delta}`);
    previous = us;
  }
  const now = perScan(migrated[migrated.length - 1]);
  console.log(roll);
  const goal = Number(process.env.GOAL_US ?? 12);
  console.log(`  goal: <= ${goal} us per scan with every migration: ${now <= goal ? 'met' : 'NOT met'}`);
  if (now > goal) missed.push(`recording a scan costs ${now.toFixed(1)} us > ${goal} us`);
} finally {
  await ch.close();
  await fs.rm(dir, { recursive: true, force: true });
}
exitIfGoalsMissed(missed);
