// Recording a scan writes its one-day rollup rows and nothing more (issue 32, the cost of recording
// a scan): the longer spans (4, 16 and 64 days) of a day are rolled once that day is over, and
// scan_daily, which held the same rows as the one-day spans, is no longer written.
//
// Before: an insert into scan_events ran 0030's view into scan_daily, whose own view (0029) copied
// every daily row into scan_spans four times (spans of 1, 4, 16 and 64 days), each copy with its
// visitor state, then merged. Now one view (scan_spans_rollup_mv) runs 0030's `GROUP BY ROLLUP`
// and writes the result into scan_spans:
//
// - a row of a day that is not over yet (the day of the insert by ClickHouse's clock, or later) is
//   written as a one-day span only, with `pending = 1`: its longer spans are still to be written;
// - a row of an earlier day (a spill or journal replayed late, an import) is written into all four
//   span lengths at once, as 0029's view did, with `pending = 0`.
//
// The roll (server/analytics/span-roll.ts) then writes, for each finished day, the longer spans of
// that day's pending one-day rows, with a deduplication token of the day, and records the day in
// scan_span_rolls. Which rows a roll reads is decided by the clock, not by the roll: a row is
// pending only when its view ran before the end of its day (UTC, like the rows' days: not today(),
// which is the day of the server's time zone), so once a day is over no new pending
// row of it appears, and a roll that starts after the inserts in flight at midnight are done reads
// all of them. Readers use a longer span only when every day of it is at most the last day rolled
// (server/analytics/spans.ts); the one-day spans are always complete.
//
// `pending` is the last column of the sort key, so a pending row and a rolled row of the same span
// and value are never merged into one (whose flag would be either).
//
// Existing rows keep `pending = 0` (the column's default): 0029's view wrote their longer spans.
// scan_span_rolls starts at the day before the migration ran: the days up to it had every span
// written by 0029's view; today's scans from the migration on are pending and rolled tomorrow.
//
// Like 0029 and 0030, the views are replaced (dropped, then created): scans inserted in between
// would be missing from the rollups, so the migration runs at start-up before anything is written;
// with a shared server, apply it while the redirect is stopped. scan_daily is dropped: every row it
// held is also a one-day span (0004's view wrote it there), which is what its readers now read.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const DEDUPLICATION_WINDOW = 10000;

/** scan_events column -> the dimension name of its rollup rows (0002's ROLLUP_DIMENSIONS). */
const DIMENSIONS: [string, string][] = [
  ['country', 'country'],
  ['device_type', 'device'],
  ['referrer', 'referrer'],
  ['language', 'language'],
  ['provider', 'provider'],
];

/** The one-day rollup of the scans in `source`, as 0030's view computed it (its text, with day's rows). */
function dailySelect(source: string): string {
  const dims = [`('total', '')`, ...DIMENSIONS.map(([c, name]) => `('${name}', toString(${c}))`)].join(', ');
  return `SELECT k.1 AS org_id,
         multiIf(grouping(code_id) = 0, 'code', grouping(brand_id) = 0, 'brand', 'organization') AS scope,
         k.4 AS dimension, code_id, brand_id, k.2 AS day, k.3 AS is_bot, k.5 AS value,
         count() AS scans, uniqCombinedState(12)(visitor_hash) AS visitors
  FROM (
    SELECT tuple(org_id, toDate(scanned_at), is_bot, d.1, d.2) AS k, brand_id, code_id, visitor_hash
    FROM ${source}
    ARRAY JOIN [${dims}] AS d
  )
  GROUP BY ROLLUP(k, brand_id, code_id)
  HAVING grouping(k) = 0`;
}

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const spans = ctx.cluster ? 'scan_spans_local' : 'scan_spans';
  const events = ctx.cluster ? 'scan_events_local' : 'scan_events';
  const dedup = ctx.cluster
    ? `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`
    : `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;
  // One table for the whole cluster (not one per shard): every node reads the same days.
  const engine = ctx.cluster
    ? `ReplicatedMergeTree('/clickhouse/tables/${db}/scan_span_rolls', '{shard}-{replica}')`
    : 'MergeTree';
  const out = [
    `DROP VIEW IF EXISTS ${db}.scan_daily_rollup_mv${on}`,
    `DROP VIEW IF EXISTS ${db}.scan_spans_mv${on}`,
    `ALTER TABLE ${db}.${spans}${on}
  ADD COLUMN IF NOT EXISTS pending UInt8,
  MODIFY ORDER BY (org_id, scope, dimension, is_bot, span, start, code_id, brand_id, value, pending)`,
  ];
  if (ctx.cluster) {
    out.push(`ALTER TABLE ${db}.scan_spans${on} ADD COLUMN IF NOT EXISTS pending UInt8`);
  }
  out.push(
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_spans_rollup_mv${on} TO ${db}.${spans} AS
SELECT org_id, scope, dimension, code_id, brand_id, is_bot, span,
       day - (toUInt32(day) % bitShiftLeft(toUInt32(1), span)) AS start, value, scans, visitors,
       toUInt8(day >= toDate(now(), 'UTC')) AS pending
FROM (
  ${dailySelect(`${db}.${events}`)}
)
ARRAY JOIN if(day >= toDate(now(), 'UTC'), CAST([0] AS Array(UInt8)), CAST([0, 2, 4, 6] AS Array(UInt8))) AS span
SETTINGS force_grouping_standard_compatibility = 1`,
    `CREATE TABLE IF NOT EXISTS ${db}.scan_span_rolls${on} (
  day Date,
  rolled_at DateTime('UTC') DEFAULT now()
)
ENGINE = ${engine}
ORDER BY day
SETTINGS ${dedup}`,
    `INSERT INTO ${db}.scan_span_rolls (day) SETTINGS async_insert = 0, insert_deduplication_token = 'migration-0031'
SELECT toDate(now(), 'UTC') - 1`,
  );
  const daily = ctx.cluster ? ['scan_daily', 'scan_daily_local'] : ['scan_daily'];
  for (const t of daily) out.push(`DROP TABLE IF EXISTS ${db}.${t}${on}`);
  return out;
}
