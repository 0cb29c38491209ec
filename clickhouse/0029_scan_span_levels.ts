// Fewer span rows per scan (issue 32, the cost of recording a scan): scan_spans keeps spans of 1, 4,
// 16 and 64 days (span 0, 2, 4 and 6) instead of every power of two from 1 to 64 days (0004).
//
// The view on scan_daily copied each daily row into seven spans; writing those rows with their
// visitor states, and merging them afterwards, was about half of what recording a scan cost
// ClickHouse. Four copies instead of seven; a range is then covered by a few more spans (at most 4
// for 7 days, 12 for 30 and 15 for 90, against 3, 8 and 10: server/analytics/spans.ts), and since a
// visitor state merged from any spans that cover the same days is the same set of visitors, every
// answer is the same.
//
// The view is replaced (dropped, then created with the four lengths): scans inserted in between
// would be missing from the spans, so, like 0004, the migration runs at start-up before anything is
// written; with a shared server, apply it while the redirect is stopped. The rows of the lengths no
// longer read (2, 8 and 32 days) are deleted by a mutation in the background; nothing reads them
// in the meantime.
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

/** log2 of the lengths of the spans kept, in days: 1, 4, 16 and 64. */
export const SPAN_LEVELS = [0, 2, 4, 6] as const;

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const local = ctx.cluster ? 'scan_spans_local' : 'scan_spans';
  const source = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const levels = SPAN_LEVELS.join(', ');
  return [
    `DROP VIEW IF EXISTS ${db}.scan_spans_mv${on}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_spans_mv${on} TO ${db}.${local} AS
SELECT org_id, scope, dimension, code_id, brand_id, is_bot, span,
       day - (toUInt32(day) % bitShiftLeft(toUInt32(1), span)) AS start, value, scans, visitors
FROM ${db}.${source}
ARRAY JOIN CAST([${levels}] AS Array(UInt8)) AS span`,
    `ALTER TABLE ${db}.${local}${on} DELETE WHERE span NOT IN (${levels})`,
  ];
}
