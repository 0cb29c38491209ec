// Orphan scans: requests for an unknown (or inactive) slug on a host we serve, kept for operators
// (printed codes with a typo, codes deleted while still in circulation). Written by the redirect's
// scan buffer like scan_events, with the same deduplication of retried batches.
//
// Frozen text: a released migration never changes, so this file imports nothing but the type of its
// argument and writes out the DDL it produced when it was released (0001's event-table shape).
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const COLUMNS = `
  scan_id String,
  scanned_at DateTime64(3, 'UTC'),
  org_id UInt64,
  domain_id UInt64,
  host String,
  path String,
  reason LowCardinality(String),
  visitor_hash UInt64,
  country LowCardinality(String),
  device_type LowCardinality(String),
  referrer String,
  is_bot UInt8`;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const days = Math.trunc(ctx.retentionDays);
  if (!(days >= 1)) throw new Error(`retentionDays must be a positive integer, got ${ctx.retentionDays}`);
  if (!ctx.cluster) {
    return [
      `CREATE TABLE IF NOT EXISTS ${db}.orphan_scans (${COLUMNS}
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (host, path, scanned_at, scan_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS non_replicated_deduplication_window = 10000`,
    ];
  }
  const on = ` ON CLUSTER ${ctx.cluster}`;
  return [
    `CREATE TABLE IF NOT EXISTS ${db}.orphan_scans_local${on} (${COLUMNS}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/orphan_scans_local', '{replica}')
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (host, path, scanned_at, scan_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS replicated_deduplication_window = 10000`,
    `CREATE TABLE IF NOT EXISTS ${db}.orphan_scans${on} AS ${db}.orphan_scans_local
ENGINE = Distributed(${ctx.cluster}, ${db}, orphan_scans_local, cityHash64(host))`,
  ];
}
