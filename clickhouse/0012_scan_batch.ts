// The live scan stream (server/analytics/live.ts, docs/stream.md) reads the rows of one stored
// batch back by the batch's token. Every scan batch is inserted with its
// insert_deduplication_token (server/redirect/scan-buffer.ts); the column takes that token from the
// insert's own settings, so no writer changes and a batch replayed from a journal or spill file
// keeps the token it was first sealed with. Rows written before this migration read as '' (or an
// insert without a token). A bloom filter index lets `batch IN (...)` skip the granules of other
// batches within an organization's range.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const local = ctx.cluster ? `${db}.scan_events_local` : `${db}.scan_events`;
  const tables = ctx.cluster ? [local, `${db}.scan_events`] : [local];
  const out = tables.map(
    (t) => `ALTER TABLE ${t}${on}
  ADD COLUMN IF NOT EXISTS batch String DEFAULT getSetting('insert_deduplication_token')`,
  );
  out.push(`ALTER TABLE ${local}${on}
  ADD INDEX IF NOT EXISTS scan_events_batch batch TYPE bloom_filter(0.001) GRANULARITY 1`);
  return out;
}
