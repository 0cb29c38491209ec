// Synthetic scans for demo data and benchmarks, generated inside ClickHouse in large batches.
// Distributions are shaped like real traffic (demo-traffic.ts): a few codes get most scans,
// traffic grows over the period with weekly and daily rhythms, visitors come back (a visitor
// keeps their country, device, language and network), and ~2% are bots. Deterministic for a
// given seed, so benchmark runs are comparable.
import { ulid } from 'ulid';
import { insertSelect, insertText, type ClickHouseHandle } from '../stores/clickhouse.js';
import { COUNTRIES, DEVICES, REFERRERS } from './demo-traffic.js';
import { longerSpansOf, pendingOf, SPAN_COLUMNS } from './span-roll.js';
import { ROLLUP_DIMENSIONS } from '../../clickhouse/0002_scan_daily.js';
import { clickHouseTime, SCAN_EVENT_COLUMNS, type ScanEvent as ScanEventRow } from './scan-event.js';

const DAY_MS = 86_400_000;

/** A generated scan, scanned_at in epoch milliseconds. */
export type ScanEvent = ScanEventRow<number>;

/** Writes events as one insert (JSONEachRow); for tests and small batches. */
export async function insertScanEvents(ch: ClickHouseHandle, events: ScanEvent[]): Promise<void> {
  if (!events.length) return;
  await insertText(ch.client, {
    table: `${ch.database}.scan_events`,
    body: events.map((e) => JSON.stringify({ ...e, scanned_at: clickHouseTime(e.scanned_at) })).join('\n'),
    format: 'JSONEachRow',
    dedupToken: ulid(),
  });
}

/** A string as a ClickHouse SQL literal. */
const lit = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const strings = (xs: string[]): string => `[${xs.map(lit).join(', ')}]`;
const numbers = (xs: number[]): string => `[${xs.join(', ')}]`;

/**
 * A weighted pick (1-based) for a uniform draw in [0, 1): `multiIf` over the cumulative weights.
 * (`arrayFirstIndex` over a constant array copies the array for every row: ten times slower.)
 */
function pick(weights: number[], draw: string): string {
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  const branches = weights.slice(0, -1).map((w, i) => `${draw} < ${(acc += w) / total}, ${i + 1}`);
  return branches.length ? `multiIf(${branches.join(', ')}, ${weights.length})` : '1';
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export interface DemoCode {
  id: number;
  ulid: string;
  slug: string;
  brandId: number;
}

export interface SyntheticScanOptions {
  orgId: number;
  domainId: number;
  codes: DemoCode[];
  total: number;
  days: number;
  nowMs: number;
  batchSize: number;
  seed: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The SELECT that makes scans `n` of a seed inside ClickHouse, over `numbers(start, count)`: every
 * draw is cityHash64 of (seed, n, draw), so the rows depend on the seed and n alone. A visitor's
 * attributes are drawn from (seed, visitor), so they stay the same across the visitor's scans.
 */
function syntheticSelect(o: SyntheticScanOptions, start: number, count: number): string {
  const u = (k: number) => `(cityHash64(${o.seed}, number, ${k}) / 18446744073709551616.)`;
  const uv = (k: number) => `(cityHash64(${o.seed}, 'visitor', visitor, ${k}) / 18446744073709551616.)`;
  // Code popularity: Zipf-like, shuffled so brands differ (as before the generator moved here).
  const codeWeights = o.codes.map((_, i) => 1 / (1 + ((i * 7) % o.codes.length)) ** 1.1);
  // Day weights: growth over the period and quieter weekends; today is only partly over.
  const todayMs = Math.floor(o.nowMs / DAY_MS) * DAY_MS;
  const firstDayMs = todayMs - (o.days - 1) * DAY_MS;
  const dayStarts: number[] = [];
  const dayWeights: number[] = [];
  for (let d = 0; d < o.days; d++) {
    const dayMs = firstDayMs + d * DAY_MS;
    const weekday = new Date(dayMs).getUTCDay();
    const weekend = weekday === 0 || weekday === 6 ? 0.7 : 1;
    dayStarts.push(dayMs);
    dayWeights.push((1 + d / o.days) * weekend * (dayMs === todayMs ? (o.nowMs - todayMs) / DAY_MS : 1));
  }
  // About one visitor per three scans; a power law makes some visitors come back often.
  const visitors = Math.max(1, Math.round(o.total / 3));
  // A visitor's network and device are each one draw over the joint distributions (country and
  // operator; device, OS and browser), flat constant arrays: cheaper per row than nested ones.
  const networks = COUNTRIES.flatMap(([country, w, p]) => {
    const sum = p.providers.reduce((a, [, , pw]) => a + pw, 0);
    return p.providers.map(([name, asn, pw]) => ({ country, language: p.language, name, asn, w: (w * pw) / sum }));
  });
  const agents = DEVICES.flatMap(([d, w]) => {
    const os = d.os.reduce((a, [, x]) => a + x, 0);
    const br = d.browser.reduce((a, [, x]) => a + x, 0);
    return d.os.flatMap(([o1, ow]) =>
      d.browser.map(([b, bw]) => ({ type: d.type, os: o1, browser: b, w: (w * ow * bw) / (os * br) })),
    );
  });
  const chars = `[${[...CROCKFORD].map((c) => `'${c}'`).join(', ')}]`;
  // Crockford base32 of the low `n` * 5 bits of a UInt64, most significant first. A scan_id is a
  // ULID: the time in 10 such characters, then 16 hex digits (all of them Crockford characters).
  const base32 = (value: string, n: number) =>
    `arrayStringConcat(arrayMap(i -> ${chars}[bitAnd(bitShiftRight(${value}, 5 * (${n - 1} - i)), 31) + 1], range(${n})))`;
  return `
WITH
  ${u(1)} AS u1,
  ${u(2)} AS u2,
  ${u(7)} AS u7,
  ${pick(codeWeights, 'u1')} AS ci,
  ${pick(dayWeights, 'u2')} AS di,
  ${numbers(dayStarts)}[di] AS day_ms,
  toInt64(day_ms + (toInt64(((${u(3)} + ${u(4)}) / 2) * ${DAY_MS}) + ${2 * 3_600_000}) % ${DAY_MS}) AS raw_ms,
  if(raw_ms > ${o.nowMs}, ${o.nowMs} - toInt64(${u(5)} * greatest(1, ${o.nowMs} - day_ms)), raw_ms) AS ms,
  toUInt64(floor(${visitors} * pow(${u(6)}, 2))) AS visitor,
  ${uv(1)} AS v1,
  ${uv(2)} AS v2,
  ${pick(
    networks.map((n) => n.w),
    'v1',
  )} AS nw,
  ${pick(
    agents.map((a) => a.w),
    'v2',
  )} AS ag,
  ${strings(agents.map((a) => a.type))}[ag] AS device,
  cityHash64(${o.seed}, number, 9) AS id_bits
SELECT
  concat(${base32('toUInt64(ms)', 10)}, hex(id_bits)) AS scan_id,
  fromUnixTimestamp64Milli(ms, 'UTC') AS scanned_at,
  ${o.orgId} AS org_id,
  ${numbers(o.codes.map((c) => c.brandId))}[ci] AS brand_id,
  ${o.domainId} AS domain_id,
  ${numbers(o.codes.map((c) => c.id))}[ci] AS code_id,
  cityHash64(${o.seed}, 'visitor', visitor) AS visitor_hash,
  ${strings(networks.map((n) => n.country))}[nw] AS country,
  device AS device_type,
  ${strings(agents.map((a) => a.os))}[ag] AS os,
  ${strings(agents.map((a) => a.browser))}[ag] AS browser,
  ${strings(REFERRERS.map(([r]) => r))}[${pick(
    REFERRERS.map(([, w]) => w),
    'u7',
  )}] AS referrer,
  if(${uv(3)} < 0.8, ${strings(networks.map((n) => n.language))}[nw], 'en') AS language,
  ${strings(networks.map((n) => n.name))}[nw] AS provider,
  ${numbers(networks.map((n) => n.asn))}[nw] AS asn,
  device = 'bot' AS is_bot,
  if(${u(8)} < 0.1, 0, -1) AS matched_rule
FROM numbers_mt(${start}, ${count})`;
}

/**
 * Writes `total` synthetic scans of the given codes into scan_events, generated inside ClickHouse
 * (`INSERT ... SELECT` over `numbers()`, batch by batch): no row passes through Node. Deterministic
 * for a seed.
 *
 * On a single server (chDB included) the rows go to a staging table first, which no materialized
 * view watches, and their partitions are then attached to scan_events; scan_spans gets the rows
 * the view would have written (attachWithRollup). The view would otherwise
 * aggregate every insert block on its own: a block of demo traffic spans 90 days and every code,
 * so it barely shrinks, and it fans every row out into three scopes (36 s of CPU per million scans
 * here, against about 10 s this way). With a cluster the rows are inserted into scan_events directly.
 */
export async function writeSyntheticScans(ch: ClickHouseHandle, o: SyntheticScanOptions): Promise<void> {
  const db = ch.database;
  const staging = ch.cluster ? null : `${db}.scan_events_seed_${o.orgId}_${o.seed}`;
  if (staging) {
    await ch.client.command({ query: `DROP TABLE IF EXISTS ${staging}` });
    await ch.client.command({ query: `CREATE TABLE ${staging} AS ${db}.scan_events` });
  }
  try {
    let done = 0;
    while (done < o.total) {
      const n = Math.min(o.batchSize, o.total - done);
      // A deterministic token per batch: re-running a failed seed with the same seed does not double it.
      await insertSelect(ch.client, {
        table: staging ?? `${db}.scan_events`,
        columns: SCAN_EVENT_COLUMNS,
        select: syntheticSelect(o, done, n),
        dedupToken: `demo-${o.orgId}-${o.seed}-${o.total}-${done}`,
      });
      done += n;
      o.onProgress?.(done, o.total);
    }
    if (staging) await attachWithRollup(ch, staging);
  } finally {
    if (staging) await ch.client.command({ query: `DROP TABLE IF EXISTS ${staging}` });
  }
}

/**
 * Moves the staging table's partitions into scan_events and writes the rollup rows the view would
 * have written (clickhouse/0031): the one-day spans of the code scope from the raw rows (one row
 * per dimension value), then those of the brand and organization scopes by merging the code
 * scope's rows, far fewer than the raw ones (the view fans every raw row out into all three scopes:
 * three times the work), all in a staging table of their own; then the one-day spans into
 * scan_spans, and the longer spans of the finished days (a day not over yet is pending and rolled
 * with the redirect's scans, span-roll.ts).
 */
async function attachWithRollup(ch: ClickHouseHandle, staging: string): Promise<void> {
  const db = ch.database;
  const [table] = staging.split('.').slice(-1);
  const rs = await ch.client.query({
    query: `SELECT DISTINCT partition_id AS p FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active ORDER BY p`,
    query_params: { db, t: table },
    format: 'JSONEachRow',
  });
  const partitions = (await rs.json<{ p: string }>()).map((r) => r.p);
  const dimensions = [
    `('total', '')`,
    ...Object.entries(ROLLUP_DIMENSIONS).map(([name, column]) => `('${name}', toString(${column}))`),
  ].join(', ');
  const days = `${staging}_spans`;
  const run = (query: string) => ch.client.command({ query });
  await run(`DROP TABLE IF EXISTS ${days}`);
  await run(`CREATE TABLE ${days} AS ${db}.scan_spans`);
  try {
    for (const p of partitions) {
      if (!/^[0-9]{6}$/.test(p)) throw new Error(`unexpected partition id ${p}`);
      await run(`ALTER TABLE ${db}.scan_events ATTACH PARTITION ID '${p}' FROM ${staging}`);
      await run(`INSERT INTO ${days} SETTINGS async_insert = 0
SELECT org_id, 'code' AS scope, r.1 AS dimension, c AS code_id, b AS brand_id, is_bot, toUInt8(0) AS span, day AS start,
       r.2 AS value, count() AS scans, uniqCombinedState(12)(v) AS visitors, ${pendingOf('day')} AS pending
FROM (SELECT org_id, toDate(scanned_at) AS day, brand_id AS b, code_id AS c, is_bot, visitor_hash AS v,
             ${Object.values(ROLLUP_DIMENSIONS).join(', ')}
        FROM ${staging} WHERE _partition_id = '${p}')
ARRAY JOIN [${dimensions}] AS r
GROUP BY org_id, scope, dimension, code_id, brand_id, is_bot, start, value`);
    }
    await run(`INSERT INTO ${days} SETTINGS async_insert = 0
SELECT org_id, r.1 AS scope, dimension, toUInt64(0) AS code_id, r.2 AS brand_id, is_bot, span, start, value,
       sum(scans) AS scans, uniqCombinedMergeState(12)(visitors) AS visitors, pending
FROM (SELECT org_id, dimension, brand_id AS b, is_bot, span, start, value, scans, visitors, pending
        FROM ${days} WHERE scope = 'code')
ARRAY JOIN [('brand', b), ('organization', toUInt64(0))] AS r
GROUP BY org_id, scope, dimension, code_id, brand_id, is_bot, span, start, value, pending`);
    await run(`INSERT INTO ${db}.scan_spans SETTINGS async_insert = 0 SELECT * FROM ${days}`);
    await insertSelect(ch.client, {
      table: `${db}.scan_spans`,
      columns: SPAN_COLUMNS,
      select: longerSpansOf(days, 'pending = 0'),
    });
  } finally {
    await run(`DROP TABLE IF EXISTS ${days}`);
  }
}
