// Raw scan events, one row per served redirect (columns fixed by docs/scan-event-contract.md).
// Single server / chDB: a MergeTree. With a cluster: a ReplicatedMergeTree `scan_events_local` on
// every node and a Distributed `scan_events` over it, so readers and the redirect's writer use the
// same name either way.
//
// Frozen text: a released migration never changes (test/unit/clickhouse-ddl pins the DDL it
// produces). The live definition of the columns is server/analytics/scan-event.ts, checked against
// this one by the same test.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const COLUMNS = `
  scan_id String,
  scanned_at DateTime64(3, 'UTC'),
  org_id UInt64,
  brand_id UInt64,
  domain_id UInt64,
  code_id UInt64,
  visitor_hash UInt64,
  country LowCardinality(String),
  device_type LowCardinality(String),
  os LowCardinality(String),
  browser LowCardinality(String),
  referrer String,
  language LowCardinality(String),
  provider LowCardinality(String),
  asn UInt32,
  is_bot UInt8,
  matched_rule Int16`;

/** How many recent insert blocks are remembered, so a retried batch with the same insert_deduplication_token is a no-op. */
const DEDUPLICATION_WINDOW = 10000;

function onCluster(ctx: ClickHouseMigrationContext): string {
  return ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
}

/** The engine clause of a table that is local to one node (replicated when there is a cluster). */
function localEngine(
  ctx: ClickHouseMigrationContext,
  kind: 'MergeTree' | 'AggregatingMergeTree',
  table: string,
): string {
  if (!ctx.cluster) return kind;
  return `Replicated${kind}('/clickhouse/tables/{shard}/${ctx.database}/${table}', '{replica}')`;
}

/** Deduplication of retried inserts: replicated tables do it by default; plain MergeTree needs the window set. */
function dedupSetting(ctx: ClickHouseMigrationContext): string {
  return ctx.cluster
    ? `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`
    : `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;
}

/**
 * A raw event table kept for ctx.retentionDays and partitioned by month: a MergeTree `name`, or
 * with a cluster a replicated `<name>_local` per node and a Distributed `name` over it sharded by
 * `shardKey`, so readers and writers use the same name either way.
 */
function eventTableStatements(
  ctx: ClickHouseMigrationContext,
  t: { name: string; columns: string; orderBy: string; shardKey: string },
): string[] {
  const db = ctx.database;
  const days = Math.trunc(ctx.retentionDays);
  if (!(days >= 1)) throw new Error(`retentionDays must be a positive integer, got ${ctx.retentionDays}`);
  const table = ctx.cluster ? `${t.name}_local` : t.name;
  const out = [
    `CREATE TABLE IF NOT EXISTS ${db}.${table}${onCluster(ctx)} (${t.columns}
)
ENGINE = ${localEngine(ctx, 'MergeTree', table)}
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (${t.orderBy})
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS ${dedupSetting(ctx)}`,
  ];
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.${t.name}${onCluster(ctx)} AS ${db}.${table}
ENGINE = Distributed(${ctx.cluster}, ${db}, ${table}, ${t.shardKey})`,
    );
  }
  return out;
}

export function statements(ctx: ClickHouseMigrationContext): string[] {
  // Sharded by code: one code's events stay on one shard (raw export pages read one node), while
  // a large organization still spreads over the cluster.
  return eventTableStatements(ctx, {
    name: 'scan_events',
    columns: COLUMNS,
    orderBy: 'org_id, code_id, scanned_at, scan_id',
    shardKey: 'cityHash64(org_id, code_id)',
  });
}
