// The live scan stream (server/analytics/live.ts, docs/stream.md) sends landing-page actions too,
// and reads the rows of a stored batch of scan_actions back by the batch's token, as it reads
// scan_events since clickhouse/0012: the column takes the token from the insert's own settings
// (insert_deduplication_token, set by the redirect's scan buffer on every batch, replays included),
// so no writer changes. Rows written before this migration read as ''. A bloom filter index lets
// `batch IN (...)` skip the granules of other batches within an organization's range.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const local = ctx.cluster ? `${db}.scan_actions_local` : `${db}.scan_actions`;
  const tables = ctx.cluster ? [local, `${db}.scan_actions`] : [local];
  const out = tables.map(
    (t) => `ALTER TABLE ${t}${on}
  ADD COLUMN IF NOT EXISTS batch String DEFAULT getSetting('insert_deduplication_token')`,
  );
  out.push(`ALTER TABLE ${local}${on}
  ADD INDEX IF NOT EXISTS scan_actions_batch batch TYPE bloom_filter(0.001) GRANULARITY 1`);
  return out;
}
