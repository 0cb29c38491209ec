// GS1 resolutions: one row per scan of a gs1 code (the scan itself is in scan_events under the same
// scan_id), with the GTIN, its key qualifiers and the link type asked for and served, the dimensions
// of GS1 Digital Link analytics (per product, per lot, per link type). Written by the redirect's scan
// buffer like scan_events, with the same deduplication of retried batches.
//
// Frozen text: a released migration never changes, so this file imports nothing but the type of its
// argument and writes out its DDL.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const COLUMNS = `
  scan_id String,
  scanned_at DateTime64(3, 'UTC'),
  org_id UInt64,
  brand_id UInt64,
  domain_id UInt64,
  code_id UInt64,
  gtin String,
  cpv String,
  lot String,
  serial String,
  link_type_asked LowCardinality(String),
  link_type_served LowCardinality(String),
  visitor_hash UInt64,
  is_bot UInt8`;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const days = Math.trunc(ctx.retentionDays);
  if (!(days >= 1)) throw new Error(`retentionDays must be a positive integer, got ${ctx.retentionDays}`);
  if (!ctx.cluster) {
    return [
      `CREATE TABLE IF NOT EXISTS ${db}.gs1_resolutions (${COLUMNS}
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (org_id, gtin, scanned_at, scan_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS non_replicated_deduplication_window = 10000`,
    ];
  }
  const on = ` ON CLUSTER ${ctx.cluster}`;
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.gs1_resolutions_local${on} (${COLUMNS}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/gs1_resolutions_local', '{replica}')
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (org_id, gtin, scanned_at, scan_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS replicated_deduplication_window = 10000`,
    `CREATE TABLE IF NOT EXISTS ${db}.gs1_resolutions${on} AS ${db}.gs1_resolutions_local
ENGINE = Distributed(${ctx.cluster}, ${db}, gs1_resolutions_local, cityHash64(org_id))`,
  ];
}
