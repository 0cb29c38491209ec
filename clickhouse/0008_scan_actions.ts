// Scan actions: what a visitor did on a code's landing page after the scan that showed it (the
// vCard or .ics download, a link of a links page, a store badge, the website). Written by the
// redirect's scan buffer like scan_events, with the same deduplication of retried batches, and
// read by the per-code analytics' `actions` breakdown.
//
// Frozen text: a released migration never changes, so this file imports nothing but the type of its
// argument and writes out its DDL.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const COLUMNS = `
  action_id String,
  scanned_at DateTime64(3, 'UTC'),
  org_id UInt64,
  brand_id UInt64,
  domain_id UInt64,
  code_id UInt64,
  action LowCardinality(String),
  target UInt16,
  visitor_hash UInt64,
  is_bot UInt8`;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const days = Math.trunc(ctx.retentionDays);
  if (!(days >= 1)) throw new Error(`retentionDays must be a positive integer, got ${ctx.retentionDays}`);
  if (!ctx.cluster) {
    return [
      `CREATE TABLE IF NOT EXISTS ${db}.scan_actions (${COLUMNS}
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (org_id, code_id, scanned_at, action_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS non_replicated_deduplication_window = 10000`,
    ];
  }
  const on = ` ON CLUSTER ${ctx.cluster}`;
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.scan_actions_local${on} (${COLUMNS}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/scan_actions_local', '{replica}')
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (org_id, code_id, scanned_at, action_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS replicated_deduplication_window = 10000`,
    `CREATE TABLE IF NOT EXISTS ${db}.scan_actions${on} AS ${db}.scan_actions_local
ENGINE = Distributed(${ctx.cluster}, ${db}, scan_actions_local, cityHash64(org_id))`,
  ];
}
