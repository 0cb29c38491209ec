// Daily rollup of scans, fed by a materialized view on scan_events. One row per organization,
// brand, code, UTC day, bot flag and (dimension, value): the view fans every event out into a
// 'total' row and one row per dimension (country, device, referrer, language, provider), so a
// code-day holds a few dozen rows however many scans it had. `scans` sums, `visitors` is a
// uniq state of visitor_hash, merged over any set of days (uniques over a whole range).
// Bots are kept with is_bot = 1 so analytics can leave them out (and could show them).
// Small granules: a query reads one dimension's rows, and aggregate states are costly to
// deserialize, so reading whole 8192-row granules of neighbouring dimensions would dominate.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';
import { dedupSetting, localEngine, onCluster } from './0001_scan_events.js';

/** Dimension name in scan_daily -> scan_events column. 'total' is the undivided row. */
export const ROLLUP_DIMENSIONS = {
  country: 'country',
  device: 'device_type',
  referrer: 'referrer',
  language: 'language',
  provider: 'provider',
} as const;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const local = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const source = ctx.cluster ? 'scan_events_local' : 'scan_events';
  const fanOut = [
    `('total', '')`,
    ...Object.entries(ROLLUP_DIMENSIONS).map(([name, column]) => `('${name}', toString(${column}))`),
  ].join(', ');
  const out = [
    `CREATE TABLE IF NOT EXISTS ${db}.${local}${onCluster(ctx)} (
  org_id UInt64,
  day Date,
  dimension LowCardinality(String),
  code_id UInt64,
  brand_id UInt64,
  is_bot UInt8,
  value String,
  scans SimpleAggregateFunction(sum, UInt64),
  visitors AggregateFunction(uniq, UInt64)
)
ENGINE = ${localEngine(ctx, 'AggregatingMergeTree', local)}
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, dimension, day, code_id, brand_id, is_bot, value)
SETTINGS index_granularity = 1024, ${dedupSetting(ctx)}`,
    // The view's own inserts are deduplicated too (window on the target table), so a retried
    // batch with the same insert_deduplication_token is not counted twice in the rollup.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_daily_mv${onCluster(ctx)} TO ${db}.${local} AS
SELECT org_id, toDate(scanned_at) AS day, dim.1 AS dimension, code_id, brand_id, is_bot, dim.2 AS value,
       count() AS scans, uniqState(visitor_hash) AS visitors
FROM ${db}.${source}
ARRAY JOIN [${fanOut}] AS dim
GROUP BY org_id, day, dimension, code_id, brand_id, is_bot, value`,
  ];
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.scan_daily${onCluster(ctx)} AS ${db}.scan_daily_local
ENGINE = Distributed(${ctx.cluster}, ${db}, scan_daily_local, cityHash64(org_id, code_id))`,
    );
  }
  return out;
}
