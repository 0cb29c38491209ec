// One function per ClickHouse query. Values travel only as typed query_params ({org:UInt64});
// the only text put into SQL is the database name (a checked identifier) and fixed clauses.
// Table names are the same on a single server and on a cluster (there they are Distributed).
import type { ScanAction, ScanEvent } from './scan-event.js';
import type { ClickHouseHandle } from '../stores/clickhouse.js';
import { rolledThrough } from './span-roll.js';
import { spansOf } from './spans.js';

export type RollupDimension =
  | 'country'
  | 'device'
  | 'referrer'
  | 'language'
  | 'provider'
  | 'consent'
  | 'os'
  | 'browser'
  | 'action'
  | 'gtin'
  | 'lot';

/**
 * The GS1 resolutions in scope as (value, visitor, day) rows: those whose scan row carries the GTIN
 * (clickhouse/0026), and those recorded before in gs1_resolutions, whose scan rows carry ''.
 */
function gs1Rows(db: string, where: string, value: string, more: string): string {
  return ['scan_events', 'gs1_resolutions']
    .map(
      (table) =>
        `SELECT ${value} AS value, visitor_hash AS visitor, toString(toDate(scanned_at)) AS day
       FROM ${db}.${table} WHERE ${where} AND gtin != ''${more}`,
    )
    .join(' UNION ALL ');
}

/**
 * Dimensions the rollup does not hold (its breakdown comes back empty): they are counted from the
 * raw rows of the range (rawBreakdown). Each gives the rows it counts as (value, visitor, day), from
 * the rows of scan_events or scan_actions in scope (`where`):
 * - `os`, `browser`: of the scanning device, one row per scan;
 * - `action`: what visitors did on a landing page (every action but the consent answers), one row
 *   per action;
 * - `consent`: the pixel page's consent outcomes, one per scan (actions `consent_<outcome>`, written
 *   by the redirect under the scan's id: the outcome known with the scan, or `asked` when the banner
 *   asks and then the page's answer). A scan's outcome is its last granted, denied or not_required,
 *   else none: an unanswered `asked` (the visitor left before answering or before the time ran out)
 *   is none. On the day of the scan. Rows written before ids were shared stand alone.
 * - `gtin`, `lot` (docs/gs1.md): the product (GTIN-14) of each GS1 resolution; the GTIN and lot
 *   (`<gtin-14>/<lot>`) of the resolutions that name a lot. A resolution carries them in its scan's
 *   row (clickhouse/0026); one recorded by a version before that has them in its own row of
 *   gs1_resolutions (clickhouse/0015) and '' in its scan's (GS1_SOURCES): each resolution is in
 *   exactly one of the two.
 */
const RAW_DIMENSIONS = {
  os: (db: string, where: string) =>
    `SELECT os AS value, visitor_hash AS visitor, toString(toDate(scanned_at)) AS day FROM ${db}.scan_events WHERE ${where}`,
  browser: (db: string, where: string) =>
    `SELECT browser AS value, visitor_hash AS visitor, toString(toDate(scanned_at)) AS day FROM ${db}.scan_events WHERE ${where}`,
  action: (db: string, where: string) =>
    `SELECT toString(action) AS value, visitor_hash AS visitor, toString(toDate(scanned_at)) AS day
       FROM ${db}.scan_actions WHERE ${where} AND NOT startsWith(action, 'consent_')`,
  consent: (db: string, where: string) =>
    `SELECT if(outcome = 'asked', 'none', outcome) AS value, visitor, day FROM (
      SELECT argMax(substring(action, 9), (action IN ('consent_granted', 'consent_denied', 'consent_not_required'), scanned_at)) AS outcome,
             any(visitor_hash) AS visitor, toString(toDate(min(scanned_at))) AS day
        FROM ${db}.scan_actions WHERE ${where} AND startsWith(action, 'consent_')
       GROUP BY code_id, action_id)`,
  gtin: (db: string, where: string) => gs1Rows(db, where, 'gtin', ''),
  lot: (db: string, where: string) => gs1Rows(db, where, "concat(gtin, '/', lot)", " AND lot != ''"),
} as const;
export type RawDimension = keyof typeof RAW_DIMENSIONS;

export function isRawDimension(d: RollupDimension): d is RawDimension {
  return Object.hasOwn(RAW_DIMENSIONS, d);
}

/**
 * Which part of an organization's scans a query reads. Days are inclusive UTC dates (YYYY-MM-DD).
 * With codeId the code's rows, else with brandId the brand's (0: codes without a brand), else the
 * organization's own rows.
 */
export interface RollupFilter {
  orgId: number;
  from: string;
  to: string;
  brandId?: number;
  codeId?: number;
  /** Count scans classified as bots too (include_bots); by default they are left out. */
  includeBots?: boolean;
}

type Params = Record<string, unknown>;

/** The bot condition of a filter: nothing when bots count, else only rows with is_bot = 0. */
function botClause(f: { includeBots?: boolean }): string {
  return f.includeBots ? '' : ' AND is_bot = 0';
}

/** Rows of the filter's scope, any day (scan_spans has each scope's own rows). */
function scopeOf(f: RollupFilter): { sql: string; params: Params } {
  const params: Params = { org: f.orgId, from: f.from, to: f.to };
  let scope: string;
  if (f.codeId !== undefined) {
    scope = "scope = 'code' AND code_id = {code:UInt64}";
    params.code = f.codeId;
  } else if (f.brandId !== undefined) {
    scope = "scope = 'brand' AND code_id = 0 AND brand_id = {brand:UInt64}";
    params.brand = f.brandId;
  } else {
    scope = "scope = 'organization' AND code_id = 0 AND brand_id = 0";
  }
  return { sql: `org_id = {org:UInt64} AND ${scope}${botClause(f)}`, params };
}

/** The one-day spans of the filter's days: what a daily rollup row is (clickhouse/0031). */
const ONE_DAY_SPANS = 'span = 0 AND start >= {from:Date} AND start <= {to:Date}';

/** Rows of the filter's scope and days among the one-day spans. */
function scopeWhere(f: RollupFilter): { sql: string; params: Params } {
  const w = scopeOf(f);
  return { sql: `${w.sql} AND ${ONE_DAY_SPANS}`, params: w.params };
}

async function rows<T>(ch: ClickHouseHandle, query: string, params: Params): Promise<T[]> {
  // 64-bit integers arrive as JSON strings (the default); callers convert them with Number().
  // No per-query settings: chDB would keep them in its session for every later query.
  const rs = await ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

export interface Counted {
  scans: number;
  uniques: number;
}

/**
 * Scans per day (days without scans are absent; the service fills them in) and, in the same query,
 * the totals of the whole filter: the empty grouping set merges the visitors of every day, so
 * uniques are distinct over the range rather than a sum of daily uniques.
 */
export async function rollupDaily(
  ch: ClickHouseHandle,
  f: RollupFilter,
): Promise<{ totals: Counted; days: { day: string; scans: number }[] }> {
  const w = scopeWhere(f);
  // grouping(day) is 1 on the row of the empty set () with standard SQL semantics (pinned in the
  // query: older servers defaulted to the inverse), 0 on day rows.
  // (Not WITH TOTALS: chDB 3.4 garbles the JSON format's totals when there are no rows.)
  const out = await rows<{ day: string; whole: number; scans: number; uniques: number }>(
    ch,
    `SELECT start AS day, grouping(day) AS whole, sum(scans) AS scans, uniqCombinedMerge(12)(visitors) AS uniques
       FROM ${ch.database}.scan_spans
      WHERE dimension = 'total' AND ${w.sql}
      GROUP BY GROUPING SETS ((day), ())
      ORDER BY whole, day
      SETTINGS force_grouping_standard_compatibility = 1`,
    w.params,
  );
  const totals = out.find((r) => Number(r.whole) === 1);
  return {
    totals: { scans: Number(totals?.scans ?? 0), uniques: Number(totals?.uniques ?? 0) },
    days: out.filter((r) => Number(r.whole) === 0).map((r) => ({ day: r.day, scans: Number(r.scans) })),
  };
}

/** What one analytics request reads besides the totals and the days: see rollupReport. */
export interface ReportRequest {
  /** The dimension of the breakdown. */
  dimension: RollupDimension;
  /** Scans and uniques per child of the scope: the organization's brands, or a brand's codes. */
  children: boolean;
  /** The organization's N most scanned codes. */
  topCodes?: number;
  /** Scans per day and value of the dimension (the export's csv_rows). */
  dailyBreakdown: boolean;
}

export interface Report {
  /** The whole filter: uniques are distinct over the range, not a sum of daily uniques. */
  totals: Counted;
  /** Scans per day, oldest first; days without scans are absent (the service fills them in). */
  days: { day: string; scans: number }[];
  /** Per value of the dimension, most scanned first. */
  breakdown: (Counted & { value: string })[];
  /** Per child (brand_id 0: codes without a brand), most scanned first. */
  children?: (Counted & { id: number })[];
  /** The top codes, most scanned first. */
  topCodes?: (Counted & { id: number })[];
  /** Per day and value, by day, then most scanned first. */
  dailyBreakdown?: { day: string; value: string; scans: number }[];
}

/** Orders strings as ClickHouse does: by their UTF-8 bytes. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const byScans =
  <T extends { scans: number }>(tie: (a: T, b: T) => number) =>
  (a: T, b: T) =>
    b.scans - a.scans || tie(a, b);

/**
 * Everything one analytics request shows, in one ClickHouse query: a UNION ALL of one branch per
 * part, each tagged with its name, over scan_spans (clickhouse/0004_scan_spans.ts). Days and
 * csv rows read the one-day spans and carry scans only (the payload shows no daily uniques); the
 * totals, breakdowns and children merge the visitor states of the few aligned spans that cover the
 * range (spans.ts), not one per day: merging states is where the time goes.
 */
export async function rollupReport(ch: ClickHouseHandle, f: RollupFilter, r: ReportRequest): Promise<Report> {
  const w = scopeOf(f);
  const table = `${ch.database}.scan_spans`;
  const params: Params = { ...w.params, dimension: r.dimension };
  const covering = spansOf(f.from, f.to, await rolledThrough(ch)).map((s, i) => {
    params[`span${i}`] = s.span;
    params[`start${i}`] = s.start;
    return `({span${i}:UInt8}, {start${i}:Date})`;
  });
  // A set of (span, start) pairs rather than an OR of equalities: the key analysis takes the set as
  // one condition on the key's (span, start) and the query costs 4-6 ms less (2026-11-29, 10M scans).
  const spans = `(span, start) IN (${covering.join(', ')})`;
  const uniq = 'uniqCombinedMerge(12)(visitors)';
  // Three branches at most, each yielding (part, day, value, id, scans, uniques): every branch has
  // its own cost to set up and read, so parts that read the same rows share a branch.
  const dimensions = r.dailyBreakdown ? `('total', {dimension:String})` : `('total')`;
  const branches = [
    // Scans per day ('day') and per day and value ('cell', the export's csv_rows).
    `SELECT if(dimension = 'total', 'day', 'cell') AS part, start AS day, value, toUInt64(0) AS id,
            sum(scans) AS scans, toUInt64(0) AS uniques
       FROM ${table} WHERE dimension IN ${dimensions} AND ${w.sql} AND ${ONE_DAY_SPANS}
      GROUP BY dimension, start, value`,
    // The totals (dimension 'total', one value '') and the breakdown.
    `SELECT if(dimension = 'total', 'total', 'value'), toDate(0), value, toUInt64(0), sum(scans), ${uniq}
       FROM ${table} WHERE dimension IN ('total', {dimension:String}) AND ${w.sql} AND ${spans}
      GROUP BY dimension, value`,
  ];
  // Children and top codes: the rows of other scopes of the organization, per id.
  const wanted: string[] = [];
  if (r.children && f.codeId === undefined) {
    wanted.push(
      f.brandId !== undefined ? "(scope = 'code' AND brand_id = {brand:UInt64})" : "(scope = 'brand' AND code_id = 0)",
    );
  }
  if (r.topCodes !== undefined) {
    params.limit = r.topCodes;
    wanted.push("scope = 'code'");
  }
  if (wanted.length) {
    // The child of a brand is a code, of the organization a brand; top codes are the organization's
    // codes with the most scans (rank 1..limit), asked only at the organization scope.
    const child = f.brandId !== undefined ? "'code'" : "'brand'";
    const top = r.topCodes !== undefined ? `(scope = 'code' AND rank <= {limit:UInt32})` : 'false';
    branches.push(
      `SELECT if(scope = ${child}, 'child', 'top'), toDate(0), '', id, scans, uniques FROM (
         SELECT scope, if(scope = 'brand', brand_id, code_id) AS id, sum(scans) AS scans, ${uniq} AS uniques,
                row_number() OVER (PARTITION BY scope ORDER BY scans DESC, id) AS rank
           FROM ${table}
          WHERE org_id = {org:UInt64} AND dimension = 'total'${botClause(f)} AND ${spans} AND (${wanted.join(' OR ')})
          GROUP BY scope, id)
        WHERE scope = ${child} OR ${top}`,
    );
  }
  const out = await rows<{ part: string; day: string; value: string; id: string; scans: string; uniques: string }>(
    ch,
    branches.join('\nUNION ALL\n'),
    params,
  );
  const report: Report = { totals: { scans: 0, uniques: 0 }, days: [], breakdown: [] };
  const counted = (x: { scans: string; uniques: string }) => ({ scans: Number(x.scans), uniques: Number(x.uniques) });
  for (const x of out) {
    switch (x.part) {
      case 'total':
        report.totals = counted(x);
        break;
      case 'day':
        report.days.push({ day: x.day, scans: Number(x.scans) });
        break;
      case 'value':
        report.breakdown.push({ value: x.value, ...counted(x) });
        break;
      case 'child':
        (report.children ??= []).push({ id: Number(x.id), ...counted(x) });
        break;
      case 'top':
        (report.topCodes ??= []).push({ id: Number(x.id), ...counted(x) });
        break;
      case 'cell':
        (report.dailyBreakdown ??= []).push({ day: x.day, value: x.value, scans: Number(x.scans) });
        break;
    }
  }
  const byId = byScans<{ scans: number; id: number }>((a, b) => a.id - b.id);
  report.days.sort((a, b) => byBytes(a.day, b.day));
  report.breakdown.sort(byScans((a, b) => byBytes(a.value, b.value)));
  if (r.children) report.children = (report.children ?? []).sort(byId);
  if (r.topCodes !== undefined) report.topCodes = (report.topCodes ?? []).sort(byId);
  if (r.dailyBreakdown)
    report.dailyBreakdown = (report.dailyBreakdown ?? []).sort(
      (a, b) => byBytes(a.day, b.day) || b.scans - a.scans || byBytes(a.value, b.value),
    );
  return report;
}

/** A raw scan as the export reads it: the contract's columns, the time in epoch milliseconds. */
export type RawScan = Pick<
  ScanEvent,
  | 'scan_id'
  | 'country'
  | 'device_type'
  | 'os'
  | 'browser'
  | 'referrer'
  | 'language'
  | 'provider'
  | 'visitor_hash'
  | 'matched_rule'
> & { scanned_at_ms: number };

export interface RawPageQuery {
  orgId: number;
  codeId: number;
  /** [fromMs, toMs) in epoch milliseconds. */
  fromMs: number;
  toMs: number;
  limit: number;
  offset: number;
  /** Keyset position: rows strictly after (scanned_at, scan_id) (action_id for actions). */
  after?: { ms: number; scanId: string };
  /** Bots' scans too (include_bots). */
  includeBots?: boolean;
}

/** The shared part of a raw page's query: the code, the range, the bots, the keyset after a cursor. */
function rawPageWhere(q: RawPageQuery, id: 'scan_id' | 'action_id'): { sql: string; params: Params } {
  const params: Params = {
    org: q.orgId,
    code: q.codeId,
    from: q.fromMs,
    to: q.toMs,
    limit: q.limit,
    offset: q.offset,
  };
  let keyset = '';
  if (q.after) {
    // The plain bound on scanned_at lets the primary key skip everything before the cursor.
    keyset = `AND scanned_at >= fromUnixTimestamp64Milli({after_ms:Int64}, 'UTC')
        AND (scanned_at > fromUnixTimestamp64Milli({after_ms:Int64}, 'UTC') OR ${id} > {after_id:String})`;
    params.after_ms = q.after.ms;
    params.after_id = q.after.scanId;
  }
  return {
    sql: `WHERE org_id = {org:UInt64} AND code_id = {code:UInt64}${botClause(q)}
        AND scanned_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
        AND scanned_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
        ${keyset}
      ORDER BY scanned_at, ${id}
      LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    params,
  };
}

/**
 * One page of a code's raw scans (bots left out unless included) in (scanned_at, scan_id) order, the table's own
 * sort order after (org_id, code_id), so ClickHouse reads in order and stops at the page's end.
 */
export async function rawScanPage(ch: ClickHouseHandle, q: RawPageQuery): Promise<RawScan[]> {
  const w = rawPageWhere(q, 'scan_id');
  const out = await rows<RawScan>(
    ch,
    `SELECT scan_id, toUnixTimestamp64Milli(scanned_at) AS scanned_at_ms, country, device_type, os, browser,
            referrer, language, provider, leftPad(hex(visitor_hash), 16, '0') AS visitor_hash, matched_rule
       FROM ${ch.database}.scan_events
      ${w.sql}`,
    w.params,
  );
  return out.map((r) => ({ ...r, scanned_at_ms: Number(r.scanned_at_ms), matched_rule: Number(r.matched_rule) }));
}

/** A raw landing-page action as the export reads it: the time in epoch milliseconds, the visitor in hex. */
export type RawAction = Pick<ScanAction, 'action_id' | 'action' | 'target' | 'visitor_hash' | 'is_bot'> & {
  scanned_at_ms: number;
};

/** One page of a code's actions (scan_actions), in (scanned_at, action_id) order, the table's own after the code. */
export async function rawActionPage(ch: ClickHouseHandle, q: RawPageQuery): Promise<RawAction[]> {
  const w = rawPageWhere(q, 'action_id');
  const out = await rows<RawAction>(
    ch,
    `SELECT action_id, toUnixTimestamp64Milli(scanned_at) AS scanned_at_ms, action, target,
            leftPad(hex(visitor_hash), 16, '0') AS visitor_hash, is_bot
       FROM ${ch.database}.scan_actions
      ${w.sql}`,
    w.params,
  );
  return out.map((r) => ({
    ...r,
    scanned_at_ms: Number(r.scanned_at_ms),
    target: Number(r.target),
    is_bot: Number(r.is_bot) === 1 ? 1 : 0,
  }));
}

/** Raw scans of a filter counted straight from scan_events, with the rollup's uniques estimator (checks compare the two). */
export async function rawTotals(ch: ClickHouseHandle, f: RollupFilter): Promise<Counted> {
  const params: Params = { org: f.orgId, from: f.from, to: f.to };
  let scope = '';
  if (f.brandId !== undefined) {
    scope += ' AND brand_id = {brand:UInt64}';
    params.brand = f.brandId;
  }
  if (f.codeId !== undefined) {
    scope += ' AND code_id = {code:UInt64}';
    params.code = f.codeId;
  }
  const [r] = await rows<Counted>(
    ch,
    `SELECT count() AS scans, uniqCombined(12)(visitor_hash) AS uniques
       FROM ${ch.database}.scan_events
      WHERE org_id = {org:UInt64}${botClause(f)}
        AND toDate(scanned_at) >= {from:Date} AND toDate(scanned_at) <= {to:Date}${scope}`,
    params,
  );
  return { scans: Number(r?.scans ?? 0), uniques: Number(r?.uniques ?? 0) };
}

/**
 * Scans (bots left out) of the given codes of one organization on the given days, from the daily
 * rollup: one row per code and day that had scans (scan alerts, one query per organization).
 */
export async function codeScansOnDays(
  ch: ClickHouseHandle,
  orgId: number,
  codeIds: number[],
  days: string[],
): Promise<{ code_id: number; day: string; scans: number }[]> {
  if (!codeIds.length || !days.length) return [];
  const sorted = [...days].sort();
  // Dates come back as YYYY-MM-DD (an alias named day would shadow the column in WHERE).
  const out = await rows<{ code_id: string; on_day: string; scans: string }>(
    ch,
    // Imported scans (clickhouse/0010) are history, not traffic: taken back out of the rollup.
    `SELECT code_id, on_day, toUInt64(greatest(sum(n), 0)) AS scans FROM (
       SELECT code_id, start AS on_day, toInt64(sum(scans)) AS n
         FROM ${ch.database}.scan_spans
        WHERE org_id = {org:UInt64} AND scope = 'code' AND dimension = 'total' AND is_bot = 0
          AND ${ONE_DAY_SPANS} AND has({days:Array(Date)}, start)
          AND has({codes:Array(UInt64)}, code_id)
        GROUP BY code_id, on_day
       UNION ALL
       SELECT code_id, day AS on_day, -toInt64(sum(scans)) AS n
         FROM ${ch.database}.scan_daily_imported
        WHERE org_id = {org:UInt64} AND is_bot = 0
          AND day >= {from:Date} AND day <= {to:Date} AND has({days:Array(Date)}, day)
          AND has({codes:Array(UInt64)}, code_id)
        GROUP BY code_id, on_day)
      GROUP BY code_id, on_day
      HAVING scans > 0`,
    { org: orgId, from: sorted[0], to: sorted[sorted.length - 1], days: sorted, codes: codeIds },
  );
  return out.map((r) => ({ code_id: Number(r.code_id), day: r.on_day, scans: Number(r.scans) }));
}

/**
 * Scans of the organization per code and minute (by scanned_at) in [from, to), humans and bots
 * apart, for the scans.batch webhook event. Reads the raw events, whose order key leads with org_id.
 */
export async function codeScansPerMinute(
  ch: ClickHouseHandle,
  orgId: number,
  from: Date,
  to: Date,
): Promise<{ code_id: number; minute: Date; scans: number; bot_scans: number }[]> {
  const out = await rows<{ code_id: string; minute: string; scans: string; bot_scans: string }>(
    ch,
    `SELECT code_id, toUnixTimestamp(toStartOfMinute(scanned_at)) AS minute,
            countIf(is_bot = 0) AS scans, countIf(is_bot = 1) AS bot_scans
       FROM ${ch.database}.scan_events
      WHERE org_id = {org:UInt64} AND source = 'redirect'
        AND scanned_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
        AND scanned_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
      GROUP BY code_id, minute
      ORDER BY minute, code_id`,
    { org: orgId, from: from.getTime(), to: to.getTime() },
  );
  return out.map((r) => ({
    code_id: Number(r.code_id),
    minute: new Date(Number(r.minute) * 1000),
    scans: Number(r.scans),
    bot_scans: Number(r.bot_scans),
  }));
}

export interface ActionCount {
  action: string;
  count: number;
  unique_visitors: number;
}

/** Actions on one code's landing page (scan_actions, clickhouse/0008): count and distinct visitors per action. */
export async function codeActions(ch: ClickHouseHandle, f: RollupFilter & { codeId: number }): Promise<ActionCount[]> {
  const out = await rows<{ action: string; count: string; uniques: string }>(
    ch,
    `SELECT action, count() AS count, uniqCombined(12)(visitor_hash) AS uniques
       FROM ${ch.database}.scan_actions
      WHERE org_id = {org:UInt64} AND code_id = {code:UInt64}${botClause(f)} AND NOT startsWith(action, 'consent_')
        AND toDate(scanned_at) >= {from:Date} AND toDate(scanned_at) <= {to:Date}
      GROUP BY action
      ORDER BY count DESC, action`,
    { org: f.orgId, code: f.codeId, from: f.from, to: f.to },
  );
  return out.map((r) => ({
    action: r.action,
    count: Number(r.count),
    unique_visitors: Math.min(Number(r.count), Number(r.uniques)),
  }));
}

/** A scan as the live stream reads it (server/analytics/live.ts): a raw scan with its batch and ids. */
export type LiveScan = RawScan & {
  batch: string;
  org_id: number;
  brand_id: number;
  domain_id: number;
  code_id: number;
  is_bot: number;
};

/** Which stored batches the live stream reads, of which organizations, and around when. */
export interface BatchRead {
  orgIds: number[];
  tokens: string[];
  fromMs: number;
  toMs: number;
}

type BatchIds = Pick<LiveScan, 'batch' | 'scanned_at_ms' | 'org_id' | 'brand_id' | 'domain_id' | 'code_id'>;

/**
 * The rows of the given stored batches of a table (its `batch` column: scan_events since
 * clickhouse/0012, scan_actions since 0019) of the given organizations, in no particular order. The
 * time bounds let the partition and the primary key after org_id skip what the batches cannot hold;
 * the bloom filter on batch skips the rest.
 */
async function rowsOfBatches<T extends BatchIds>(
  ch: ClickHouseHandle,
  table: 'scan_events' | 'scan_actions',
  columns: string,
  q: BatchRead,
): Promise<T[]> {
  if (!q.orgIds.length || !q.tokens.length) return [];
  const out = await rows<T>(
    ch,
    `SELECT batch, toUnixTimestamp64Milli(scanned_at) AS scanned_at_ms, org_id, brand_id, domain_id, code_id, ${columns}
       FROM ${ch.database}.${table}
      WHERE org_id IN {orgs:Array(UInt64)} AND batch IN {tokens:Array(String)}
        AND scanned_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
        AND scanned_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { orgs: q.orgIds, tokens: q.tokens, from: q.fromMs, to: q.toMs },
  );
  return out.map((r) => ({
    ...r,
    scanned_at_ms: Number(r.scanned_at_ms),
    org_id: Number(r.org_id),
    brand_id: Number(r.brand_id),
    domain_id: Number(r.domain_id),
    code_id: Number(r.code_id),
  }));
}

/** The scans of the given stored batches (rowsOfBatches). */
export async function scansOfBatches(ch: ClickHouseHandle, q: BatchRead): Promise<LiveScan[]> {
  const out = await rowsOfBatches<LiveScan>(
    ch,
    'scan_events',
    `scan_id, country, device_type, os, browser, referrer, language, provider,
            leftPad(hex(visitor_hash), 16, '0') AS visitor_hash, matched_rule, is_bot`,
    q,
  );
  return out.map((r) => ({ ...r, matched_rule: Number(r.matched_rule), is_bot: Number(r.is_bot) }));
}

/** A landing-page action as the live stream reads it: a raw action with its batch and ids. */
export type LiveAction = RawAction & BatchIds;

/** The landing-page actions of the given stored batches (rowsOfBatches). */
export async function actionsOfBatches(ch: ClickHouseHandle, q: BatchRead): Promise<LiveAction[]> {
  const out = await rowsOfBatches<LiveAction>(
    ch,
    'scan_actions',
    `action_id, action, target, leftPad(hex(visitor_hash), 16, '0') AS visitor_hash, is_bot`,
    q,
  );
  return out.map((r) => ({ ...r, target: Number(r.target), is_bot: Number(r.is_bot) === 1 ? 1 : 0 }));
}

/**
 * The scope of a filter in a raw table (scan_events, scan_actions): its organization, brand or
 * code, bots, and its days or, when given, the instants [fromMs, toMs).
 */
function rawScope(f: RollupFilter, instants?: { fromMs: number; toMs: number }): { sql: string; params: Params } {
  const params: Params = instants
    ? { org: f.orgId, from_ms: instants.fromMs, to_ms: instants.toMs }
    : { org: f.orgId, from: f.from, to: f.to };
  let scope = '';
  if (f.codeId !== undefined) {
    scope = ' AND code_id = {code:UInt64}';
    params.code = f.codeId;
  } else if (f.brandId !== undefined) {
    scope = ' AND brand_id = {brand:UInt64}';
    params.brand = f.brandId;
  }
  const time = instants
    ? `scanned_at >= fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC') AND scanned_at < fromUnixTimestamp64Milli({to_ms:Int64}, 'UTC')`
    : 'toDate(scanned_at) >= {from:Date} AND toDate(scanned_at) <= {to:Date}';
  return { sql: `org_id = {org:UInt64}${scope}${botClause(f)} AND ${time}`, params };
}

/**
 * Scans per hour of the instants [fromMs, toMs) in the filter's scope (its days are not used), from
 * scan_events: hours without scans are absent (the service fills them in). `hour` is the hour's
 * start in epoch seconds.
 */
export async function hourlyScans(
  ch: ClickHouseHandle,
  f: RollupFilter,
  fromMs: number,
  toMs: number,
): Promise<{ hour: number; scans: number }[]> {
  const w = rawScope(f, { fromMs, toMs });
  const out = await rows<{ hour: string; scans: string }>(
    ch,
    `SELECT toUnixTimestamp(toStartOfHour(scanned_at)) AS hour, count() AS scans
       FROM ${ch.database}.scan_events WHERE ${w.sql}
      GROUP BY hour ORDER BY hour`,
    w.params,
  );
  return out.map((r) => ({ hour: Number(r.hour), scans: Number(r.scans) }));
}

/**
 * A breakdown the rollup does not hold (RAW_DIMENSIONS: operating systems, browsers, landing-page
 * actions, consent outcomes), per value with distinct visitors and, for exports, per day. It reads
 * the raw rows of the range.
 */
export async function rawBreakdown(
  ch: ClickHouseHandle,
  f: RollupFilter,
  dimension: RawDimension,
  daily: boolean,
): Promise<Pick<Report, 'breakdown' | 'dailyBreakdown'>> {
  const w = rawScope(f);
  const source = RAW_DIMENSIONS[dimension](ch.database, w.sql);
  const [breakdown, days] = await Promise.all([
    rows<{ value: string; scans: string; uniques: string }>(
      ch,
      `SELECT value, count() AS scans, uniqCombined(12)(visitor) AS uniques FROM (${source})
        GROUP BY value ORDER BY scans DESC, value`,
      w.params,
    ),
    daily
      ? rows<{ day: string; value: string; scans: string }>(
          ch,
          `SELECT day, value, count() AS scans FROM (${source})
            GROUP BY day, value ORDER BY day, scans DESC, value`,
          w.params,
        )
      : Promise.resolve(null),
  ]);
  return {
    breakdown: breakdown.map((r) => ({ value: r.value, scans: Number(r.scans), uniques: Number(r.uniques) })),
    ...(days ? { dailyBreakdown: days.map((r) => ({ day: r.day, value: r.value, scans: Number(r.scans) })) } : {}),
  };
}

/** A scan as a conversion binds to it: its code and brand, visitor, time and dimension values. */
export interface FoundScan {
  code_id: number;
  brand_id: number;
  visitor_hash: string;
  scanned_at: string;
  country: string;
  device_type: string;
  referrer: string;
  language: string;
  provider: string;
}

/** One scan of the organization by its id, looked up around the time its ULID carries; null when none. */
export async function findScan(
  ch: ClickHouseHandle,
  orgId: number,
  scanId: string,
  atMs: number,
): Promise<FoundScan | null> {
  // Aliases other than the columns' names: an alias would shadow its column in WHERE.
  const out = await rows<
    Omit<FoundScan, 'code_id' | 'brand_id' | 'visitor_hash' | 'scanned_at'> & {
      code_id: string;
      brand_id: string;
      visitor: string;
      at: string;
    }
  >(
    ch,
    `SELECT code_id, brand_id, toString(visitor_hash) AS visitor, toString(scanned_at) AS at,
            country, device_type, referrer, language, provider
       FROM ${ch.database}.scan_events
      WHERE org_id = {org:UInt64} AND scan_id = {scan:String}
        AND scanned_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
        AND scanned_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
      LIMIT 1`,
    // The ULID's time is the scan's, to the millisecond; a second either way covers clock reads.
    { org: orgId, scan: scanId.toUpperCase(), from: atMs - 1000, to: atMs + 1000 },
  );
  const r = out[0];
  if (!r) return null;
  const { visitor, at, ...values } = r;
  return { ...values, code_id: Number(r.code_id), brand_id: Number(r.brand_id), visitor_hash: visitor, scanned_at: at };
}

/**
 * Served redirects stored per code (imported history left out; bots counted, as redirects_count
 * counts them): what a code's redirects_count is recounted from (server/redirect/leftovers.ts).
 */
export async function storedRedirects(
  ch: ClickHouseHandle,
  codes: { id: number; orgId: number }[],
): Promise<Map<number, number>> {
  if (!codes.length) return new Map();
  const out = await rows<{ code_id: string; n: string }>(
    ch,
    `SELECT code_id, toUInt64(count()) AS n FROM ${ch.database}.scan_events
      WHERE has({orgs:Array(UInt64)}, org_id) AND has({codes:Array(UInt64)}, code_id) AND source = 'redirect'
      GROUP BY code_id`,
    { orgs: [...new Set(codes.map((c) => c.orgId))], codes: codes.map((c) => c.id) },
  );
  return new Map(out.map((r) => [Number(r.code_id), Number(r.n)]));
}
