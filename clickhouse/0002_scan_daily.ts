// Daily rollup of scans, fed by a materialized view on scan_events.
//
// One row per organization, UTC day, bot flag, scope and (dimension, value). The view fans every
// event out into three scopes, the organization (brand_id = code_id = 0), its brand (brand_id, code_id
// = 0; brand 0 = codes without a brand) and its code, and within each into a ('total', '') row and
// one row per dimension (country, device, referrer, language, provider). So a code-day holds a few
// dozen rows however many scans it had, and an organization-wide question reads the organization's
// own rows instead of merging every code's.
//
// `scans` sums. `visitors` is a uniqCombined(12) state of visitor_hash: merged over any set of days it
// gives the distinct visitors of the whole range. It is exact up to a few hundred visitors and
// within about 2% beyond, and its large states are fixed 4096-cell sketches, so merging 90 days
// costs the same at any traffic (a plain `uniq` state grows to 64k hashes and merging those was
// 10-40x slower on 10M scans; see docs/analytics.md).
//
// Bots are kept with is_bot = 1 so analytics can leave them out (and could show them).
// Small granules: a query reads one scope's and dimension's rows, and aggregate states are costly
// to deserialize.
//
// Frozen text: a released migration never changes, so this file imports nothing but the type of its
// argument; the helpers below are copies of 0001's as they were when this was released.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const DEDUPLICATION_WINDOW = 10000;

function onCluster(ctx: ClickHouseMigrationContext): string {
  return ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
}

function localEngine(ctx: ClickHouseMigrationContext, kind: 'AggregatingMergeTree', table: string): string {
  if (!ctx.cluster) return kind;
  return `Replicated${kind}('/clickhouse/tables/{shard}/${ctx.database}/${table}', '{replica}')`;
}

function dedupSetting(ctx: ClickHouseMigrationContext): string {
  return ctx.cluster
    ? `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`
    : `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;
}

/** Dimension name in scan_daily -> scan_events column. 'total' is the undivided row. */
export const ROLLUP_DIMENSIONS = {
  country: 'country',
  device: 'device_type',
  referrer: 'referrer',
  language: 'language',
  provider: 'provider',
} as const;

/** Scope name -> (brand_id, code_id) of its rows, from the event's brand `b` and code `c`. */
export const ROLLUP_SCOPES = {
  organization: ['toUInt64(0)', 'toUInt64(0)'],
  brand: ['b', 'toUInt64(0)'],
  code: ['b', 'c'],
} as const;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const local = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const source = ctx.cluster ? 'scan_events_local' : 'scan_events';
  const dims: [string, string][] = [
    ['total', `''`],
    ...Object.entries(ROLLUP_DIMENSIONS).map(([name, column]): [string, string] => [name, `toString(${column})`]),
  ];
  const fanOut = Object.entries(ROLLUP_SCOPES)
    .flatMap(([scope, [brand, code]]) =>
      dims.map(([dim, value]) => `('${scope}', ${brand}, ${code}, '${dim}', ${value})`),
    )
    .join(',\n    ');
  const out = [
    `CREATE TABLE IF NOT EXISTS ${db}.${local}${onCluster(ctx)} (
  org_id UInt64,
  scope LowCardinality(String),
  dimension LowCardinality(String),
  code_id UInt64,
  brand_id UInt64,
  day Date,
  is_bot UInt8,
  value String,
  scans SimpleAggregateFunction(sum, UInt64),
  visitors AggregateFunction(uniqCombined(12), UInt64)
)
ENGINE = ${localEngine(ctx, 'AggregatingMergeTree', local)}
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, scope, dimension, code_id, brand_id, day, is_bot, value)
SETTINGS index_granularity = 1024, ${dedupSetting(ctx)}`,
    // The view's own inserts are deduplicated too (window on the target table), so a retried
    // batch with the same insert_deduplication_token is not counted twice in the rollup.
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_daily_mv${onCluster(ctx)} TO ${db}.${local} AS
SELECT org_id, r.1 AS scope, r.4 AS dimension, r.3 AS code_id, r.2 AS brand_id, day, is_bot, r.5 AS value,
       count() AS scans, uniqCombinedState(12)(v) AS visitors
FROM (
  SELECT org_id, toDate(scanned_at) AS day, brand_id AS b, code_id AS c, is_bot, visitor_hash AS v,
         country, device_type, referrer, language, provider
  FROM ${db}.${source}
)
ARRAY JOIN [
    ${fanOut}
  ] AS r
GROUP BY org_id, scope, dimension, code_id, brand_id, day, is_bot, value`,
  ];
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.scan_daily${onCluster(ctx)} AS ${db}.scan_daily_local
ENGINE = Distributed(${ctx.cluster}, ${db}, scan_daily_local, cityHash64(org_id, code_id))`,
    );
  }
  return out;
}
