// A cheaper insert path for scans (issue 32): what recording a scan costs ClickHouse's CPU.
//
// 1. scan_inbox (single server or chDB; not with a cluster): a Null table with scan_events' columns,
//    LowCardinality(String) written as plain String, and a view that writes every block it receives
//    into scan_events. Parsing a LowCardinality column from text builds a value column per field
//    (2-4 us per scan of 17 columns here); converting a whole String column of a block into
//    LowCardinality is done once per block. The inbox stores nothing itself; a retried batch with
//    the same insert_deduplication_token is dropped by scan_events' (and the rollups') own
//    deduplication window, as before. insertText sends rows meant for scan_events through the inbox
//    when the database has one (server/stores/clickhouse.ts).
// 2. scan_daily_sets_mv replaces scan_daily_mv (0002): the same rows, aggregated with GROUPING SETS
//    (one set per scope and dimension, 18 in all) instead of an ARRAY JOIN that copied every scan
//    18 times with its strings before grouping. A column outside a row's grouping set holds its
//    default (0 or ''), which is what 0002 wrote: brand_id = code_id = 0 at the organization scope,
//    code_id = 0 at the brand scope, and the value is the one dimension column in the set (''
//    for 'total'). grouping() tells which set a row comes from (1 = the column is not in the set).
//
// The old view is dropped before the new one is created, so scans inserted in between would be
// missing from the rollup: the migration runs at start-up before anything is written; with a shared
// server, apply it while the redirect is stopped (as 0004).
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

/** scan_events' columns as the inbox takes them (0001's, LowCardinality(String) as String). */
const INBOX_COLUMNS: [string, string][] = [
  ['scan_id', 'String'],
  ['scanned_at', "DateTime64(3, 'UTC')"],
  ['org_id', 'UInt64'],
  ['brand_id', 'UInt64'],
  ['domain_id', 'UInt64'],
  ['code_id', 'UInt64'],
  ['visitor_hash', 'UInt64'],
  ['country', 'String'],
  ['device_type', 'String'],
  ['os', 'String'],
  ['browser', 'String'],
  ['referrer', 'String'],
  ['language', 'String'],
  ['provider', 'String'],
  ['asn', 'UInt32'],
  ['is_bot', 'UInt8'],
  ['matched_rule', 'Int16'],
];

/** scan_events column -> the dimension name of its scan_daily rows (0002). */
const DIMENSIONS: [string, string][] = [
  ['country', 'country'],
  ['device_type', 'device'],
  ['referrer', 'referrer'],
  ['language', 'language'],
  ['provider', 'provider'],
];

/** The ids that identify each scope's rows, besides org_id (0002's scopes). */
const SCOPES: [string, string[]][] = [
  ['organization', []],
  ['brand', ['brand_id']],
  ['code', ['brand_id', 'code_id']],
];

function dailySelect(source: string): string {
  const columns = DIMENSIONS.map(([c]) => c);
  const sets = SCOPES.flatMap(([, ids]) =>
    [null, ...columns].map((d) => `(${['org_id', 'day', 'is_bot', ...ids, ...(d ? [d] : [])].join(', ')})`),
  );
  // One bit per argument, the first argument the highest: 1 when the column is not in the row's set.
  const g = `grouping(brand_id, code_id, ${columns.join(', ')})`;
  const bit = (i: number) => `bitTest(${g}, ${columns.length + 1 - i}) = 0`;
  return `SELECT org_id,
       multiIf(${bit(1)}, 'code', ${bit(0)}, 'brand', 'organization') AS scope,
       multiIf(${DIMENSIONS.map(([, name], i) => `${bit(2 + i)}, '${name}'`).join(', ')}, 'total') AS dimension,
       code_id, brand_id, day, is_bot,
       concat(${columns.map((c) => `toString(${c})`).join(', ')}) AS value,
       count() AS scans, uniqCombinedState(12)(visitor_hash) AS visitors
FROM (
  SELECT org_id, brand_id, code_id, toDate(scanned_at) AS day, is_bot, visitor_hash, ${columns.join(', ')}
  FROM ${source}
)
GROUP BY GROUPING SETS (
  ${sets.join(',\n  ')}
)
SETTINGS force_grouping_standard_compatibility = 1`;
}

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const daily = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const events = ctx.cluster ? 'scan_events_local' : 'scan_events';
  const out = [
    `DROP VIEW IF EXISTS ${db}.scan_daily_mv${on}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_daily_sets_mv${on} TO ${db}.${daily} AS
${dailySelect(`${db}.${events}`)}`,
  ];
  if (!ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.scan_inbox (
  ${INBOX_COLUMNS.map(([name, type]) => `${name} ${type}`).join(',\n  ')}
)
ENGINE = Null`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_inbox_mv TO ${db}.scan_events AS
SELECT ${INBOX_COLUMNS.map(([name]) => name).join(', ')} FROM ${db}.scan_inbox`,
    );
  }
  return out;
}
