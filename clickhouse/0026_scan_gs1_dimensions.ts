// GS1 Digital Link dimensions in the scan's own row: a resolution of a gs1 code (docs/gs1.md) is one
// scan_events row that also carries the GTIN, its key qualifiers and the link type asked for and
// served, where until now a second row in gs1_resolutions (clickhouse/0015, same scan_id) held them.
// Every other scan, and every row written before this migration, reads '' through the defaults.
// These columns are not part of the scan event contract's fields (the raw export does not read them).
// gs1_resolutions keeps the dimensions of the resolutions recorded before (analytics read both,
// server/analytics/queries.ts), until its TTL has aged them out.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const tables = ctx.cluster ? [`${db}.scan_events_local`, `${db}.scan_events`] : [`${db}.scan_events`];
  return tables.map(
    (t) => `ALTER TABLE ${t}${on}
  ADD COLUMN IF NOT EXISTS gtin LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS cpv LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS lot String DEFAULT '',
  ADD COLUMN IF NOT EXISTS serial String DEFAULT '',
  ADD COLUMN IF NOT EXISTS link_type_asked LowCardinality(String) DEFAULT '',
  ADD COLUMN IF NOT EXISTS link_type_served LowCardinality(String) DEFAULT ''`,
  );
}
