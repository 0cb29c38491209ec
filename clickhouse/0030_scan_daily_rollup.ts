// A cheaper scan_daily view (issue 32, the cost of recording a scan): scan_daily_rollup_mv replaces
// scan_daily_mv (0002). The same rows: 0002 copied every scan 18 times (3 scopes x 6 dimensions, with
// its strings) and grouped the copies; this one copies it 6 times (one per dimension), aggregates the
// code scope once and merges those states into the brand and organization scopes with
// `GROUP BY ROLLUP` (a rollup merges the finer set's aggregated rows, a few per code, instead of
// aggregating the scans again).
//
// Not GROUP BY GROUPING SETS with one set per scope and dimension (18 sets, tried first): it was as
// cheap per scan at 10,000-scan batches but cost about 70 ms more CPU per insert (one aggregation
// pipeline per set), so a replay of many small spilled batches took several times longer; that is
// why test/integration/redirect-ingest.test.ts's outage test missed its 10 s deadline with it at
// load 15-20 (docs/performance.md, "Recording a scan").
//
// Which scope a row belongs to is told by grouping() (standard semantics: 1 when the column is not
// in the row's set), not by the ids: brand_id 0 is also the brand of codes without one. A column
// outside a row's set holds 0, which is what 0002 wrote (code_id = 0 at the brand scope, brand_id =
// code_id = 0 at the organization scope). The rollup's empty set (no keys) is left out.
//
// The old view is dropped before the new one is created, so scans inserted in between would be
// missing from the rollups: the migration runs at start-up before anything is written; with a
// shared server, apply it while the redirect is stopped (as 0004 and 0029).
//
// Frozen text once released: imports nothing but the type of its argument.
import type { ClickHouseMigrationContext } from '../server/stores/migrate.js';

/** scan_events column -> the dimension name of its scan_daily rows (0002's ROLLUP_DIMENSIONS). */
const DIMENSIONS: [string, string][] = [
  ['country', 'country'],
  ['device_type', 'device'],
  ['referrer', 'referrer'],
  ['language', 'language'],
  ['provider', 'provider'],
];

function dailySelect(source: string): string {
  const dims = [`('total', '')`, ...DIMENSIONS.map(([c, name]) => `('${name}', toString(${c}))`)].join(', ');
  // k: the keys every row has; ROLLUP(k, brand_id, code_id) aggregates the finest set (code) once and
  // merges it into the brand and organization sets, then the empty set, which is left out.
  return `SELECT k.1 AS org_id,
       multiIf(grouping(code_id) = 0, 'code', grouping(brand_id) = 0, 'brand', 'organization') AS scope,
       k.4 AS dimension, code_id, brand_id, k.2 AS day, k.3 AS is_bot, k.5 AS value,
       count() AS scans, uniqCombinedState(12)(visitor_hash) AS visitors
FROM (
  SELECT tuple(org_id, toDate(scanned_at), is_bot, d.1, d.2) AS k, brand_id, code_id, visitor_hash
  FROM ${source}
  ARRAY JOIN [${dims}] AS d
)
GROUP BY ROLLUP(k, brand_id, code_id)
HAVING grouping(k) = 0
SETTINGS force_grouping_standard_compatibility = 1`;
}

export function statements(ctx: ClickHouseMigrationContext): string[] {
  const db = ctx.database;
  const on = ctx.cluster ? ` ON CLUSTER ${ctx.cluster}` : '';
  const daily = ctx.cluster ? 'scan_daily_local' : 'scan_daily';
  const events = ctx.cluster ? 'scan_events_local' : 'scan_events';
  return [
    `DROP VIEW IF EXISTS ${db}.scan_daily_mv${on}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.scan_daily_rollup_mv${on} TO ${db}.${daily} AS
${dailySelect(`${db}.${events}`)}`,
  ];
}
