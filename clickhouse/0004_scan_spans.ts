// Rollup of scan_daily over aligned spans of 1, 2, 4, ... 64 days, fed by a materialized view on
// scan_daily (a cascade: the scan_daily view's output blocks, already grouped, are what it reads).
//
// A range of days is a union of a few aligned spans (server/analytics/spans.ts: at most 3 for 7 days,
// 8 for 30, 10 for 90), so a 90-day question merges at most 10 visitor states per group instead of
// 90: deserializing and merging uniqCombined states is where analytics requests spent their time
// (docs/analytics.md).
// `span` is log2 of the span's length in days (0: one day, the daily rows themselves), `start` its
// first day, a multiple of 2^span days since 1970-01-01. Each scan_daily row goes into one span of
// each length: seven rows (span 0 repeats the daily row, so one table answers a whole request).
//
// The order key leads with the scope and dimension, then is_bot, span and start, then the ids: one
// scope's rows for the spans of a range are a few short ranges of the key, and so are all the
// children (brands or codes) of a scope for each span. Small granules, also by size: the visitor
// states are kilobytes each and every state of a granule that is read is deserialized. One
// partition per year: a 90-day question reads one or two parts per branch, not four months'.
//
// The migration fills the table from scan_daily once (the view only sees later inserts). It runs at
// start-up before anything is written; with a shared server, apply it while the redirect is stopped.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const DEDUPLICATION_WINDOW = 10000;

/** log2 of the longest span, in days (64). */
export const MAX_SPAN = 6;

function onCluster(ctx: ClickHouseMigrationContext): string {
  return ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
}

/** The span of each length that contains the day of a scan_daily row. */
const START = 'day - (toUInt32(day) % bitShiftLeft(toUInt32(1), span)) AS start';
const SPANS = `ARRAY JOIN range(toUInt8(${MAX_SPAN + 1})) AS span`;

/**
 * The view copies each row's sum and visitor state into its seven spans as they are, with no GROUP
 * BY: rows of the same span are merged by the table's merges and by the queries' own aggregation.
 * That halves what the view costs an insert (test/bench/analytics-insert.ts).
 */
function viewOf(source: string): string {
  return `SELECT org_id, scope, dimension, code_id, brand_id, is_bot, span, ${START}, value, scans, visitors
FROM ${source}
${SPANS}`;
}

/** The same rows grouped, for the one-time fill: fewer rows to write. */
function grouped(source: string): string {
  return `SELECT org_id, scope, dimension, code_id, brand_id, is_bot, span, ${START}, value,
       sum(scans) AS scans, uniqCombinedMergeState(12)(visitors) AS visitors
FROM ${source}
${SPANS}
GROUP BY org_id, scope, dimension, code_id, brand_id, is_bot, span, start, value`;
}

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const local = ctx.cluster ? 'scan_spans_local' : 'scan_spans';
  const source = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const engine = ctx.cluster
    ? `ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/${db}/${local}', '{replica}')`
    : 'AggregatingMergeTree';
  const dedup = ctx.cluster
    ? `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`
    : `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;
  const out = [
    `CREATE TABLE IF NOT EXISTS ${db}.${local}${onCluster(ctx)} (
  org_id UInt64,
  scope LowCardinality(String),
  dimension LowCardinality(String),
  code_id UInt64,
  brand_id UInt64,
  is_bot UInt8,
  span UInt8,
  start Date,
  value String,
  scans SimpleAggregateFunction(sum, UInt64),
  visitors AggregateFunction(uniqCombined(12), UInt64)
)
ENGINE = ${engine}
PARTITION BY toYear(start)
ORDER BY (org_id, scope, dimension, is_bot, span, start, code_id, brand_id, value)
SETTINGS index_granularity = 256, index_granularity_bytes = 65536, ${dedup}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_spans_mv${onCluster(ctx)} TO ${db}.${local} AS
${viewOf(`${db}.${source}`)}`,
  ];
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.scan_spans${onCluster(ctx)} AS ${db}.scan_spans_local
ENGINE = Distributed(${ctx.cluster}, ${db}, scan_spans_local, cityHash64(org_id, code_id))`,
    );
  }
  // The rollup so far, once, through the Distributed tables on a cluster (every shard's rows).
  out.push(`INSERT INTO ${db}.scan_spans SETTINGS async_insert = 0
${grouped(`${db}.scan_daily`)}`);
  return out;
}
