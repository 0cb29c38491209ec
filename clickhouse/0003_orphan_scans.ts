// Orphan scans: requests for an unknown (or inactive) slug on a host we serve, kept for operators
// (printed codes with a typo, codes deleted while still in circulation). Written by the redirect's
// scan buffer like scan_events, with the same deduplication of retried batches.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';
import { eventTableStatements } from './0001_scan_events.js';

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
  return eventTableStatements(ctx, {
    name: 'orphan_scans',
    columns: ORPHAN_SCAN_COLUMNS,
    orderBy: 'host, path, scanned_at, scan_id',
    shardKey: 'cityHash64(host)',
  });
}
