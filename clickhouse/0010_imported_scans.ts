// Imported scans (server/imports/): history brought from another link service lands in scan_events
// like any scan, so it flows into scan_daily and scan_spans and every analytics answer. Two columns
// tell it apart: `source` ('redirect' for a served redirect, 'import' for an imported one) and
// `import_source` (the service it came from: csv, shlink, bitly, kutt, yourls, dub; '' otherwise).
// Rows written before this migration read as 'redirect' through the column default.
//
// Imported scans are never new traffic: alerts read scan_daily minus scan_daily_imported (the same
// counts for imported scans only, fed by a view that keeps source = 'import'), and the scans.batch
// webhook reads raw events with source = 'redirect'.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

const DEDUPLICATION_WINDOW = 10000;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const events = ctx.cluster ? [`${db}.scan_events_local`, `${db}.scan_events`] : [`${db}.scan_events`];
  const out = events.map(
    (t) => `ALTER TABLE ${t}${on}
  ADD COLUMN IF NOT EXISTS source LowCardinality(String) DEFAULT 'redirect',
  ADD COLUMN IF NOT EXISTS import_source LowCardinality(String) DEFAULT ''`,
  );
  const local = ctx.cluster ? 'scan_daily_imported_local' : 'scan_daily_imported';
  const engine = ctx.cluster
    ? `ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/${db}/${local}', '{replica}')`
    : 'SummingMergeTree';
  const dedup = ctx.cluster
    ? `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`
    : `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;
  out.push(
    `CREATE TABLE IF NOT EXISTS ${db}.${local}${on} (
  org_id UInt64,
  code_id UInt64,
  day Date,
  is_bot UInt8,
  scans UInt64
)
ENGINE = ${engine}
PARTITION BY toYYYYMM(day)
ORDER BY (org_id, code_id, day, is_bot)
SETTINGS ${dedup}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_daily_imported_mv${on} TO ${db}.${local} AS
SELECT org_id, code_id, toDate(scanned_at) AS day, is_bot, count() AS scans
FROM ${events[0]}
WHERE source = 'import'
GROUP BY org_id, code_id, day, is_bot`,
  );
  if (ctx.cluster) {
    out.push(
      `CREATE TABLE IF NOT EXISTS ${db}.scan_daily_imported${on} AS ${db}.${local}
ENGINE = Distributed(${ctx.cluster}, ${db}, ${local}, cityHash64(org_id, code_id))`,
    );
  }
  return out;
}
