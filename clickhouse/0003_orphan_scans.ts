// Orphan scans: requests for an unknown (or inactive) slug on a host we serve, kept for operators
// (printed codes with a typo, codes deleted while still in circulation). Written by the redirect's
// scan buffer like scan_events, with the same deduplication of retried batches.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';
import { dedupSetting, localEngine, onCluster } from './0001_scan_events.js';

export const ORPHAN_SCAN_COLUMNS = `
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
  const table = ctx.cluster ? 'orphan_scans_local' : 'orphan_scans';
  const out = [
    `CREATE TABLE IF NOT EXISTS ${db}.${table}${onCluster(ctx)} (${ORPHAN_SCAN_COLUMNS}
)
ENGINE = ${localEngine(ctx, 'MergeTree', table)}
PARTITION BY toYYYYMM(scanned_at)
ORDER BY (host, path, scanned_at, scan_id)
TTL toDateTime(scanned_at) + INTERVAL ${days} DAY
SETTINGS ${dedupSetting(ctx)}`,
  ];
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.orphan_scans${onCluster(ctx)} AS ${db}.orphan_scans_local
ENGINE = Distributed(${ctx.cluster}, ${db}, orphan_scans_local, cityHash64(host))`,
    );
  }
  return out;
}
