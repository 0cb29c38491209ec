// Scan analytics: scopes (organization, brand, code), UTC day ranges, totals, time series,
// dimension and child breakdowns from the daily rollup, CSV rows, and the paged raw export.
// Every function takes the organization first; brands and codes are looked up inside it, so
// another organization's ULID is simply not found.
import type { OrgRecord } from '../auth/principal.js';
import { brandNames, getBrand } from '../brands/service.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { codeNames, getCodeRow } from '../qr-codes/service.js';
import { isLandingType, isStaticType } from '../qr-codes/types.js';
import { DIMENSION_LABELS, dimensionValueLabel } from './labels.js';
import {
  codeActions,
  hourlyScans,
  isRawDimension,
  rawBreakdown,
  type ActionCount,
  rawActionPage,
  rawScanPage,
  type RawAction,
  type RawPageQuery,
  type RawScan,
  rollupReport,
  type Counted,
  type Report,
  type ReportRequest,
  type RollupDimension,
  type RollupFilter,
} from './queries.js';
import type { ScanEvent } from './scan-event.js';
import {
  conversionPage,
  conversionsPer,
  carriesConversions,
  conversionsPerDay,
  conversionTotals,
  type ConversionExportRow,
  type ConversionTotals,
} from '../conversions/service.js';
import { formatMinor } from '../wallet/money.js';
import type {
  AnalyticsQuery,
  CodeAnalyticsQuery,
  ConversionsExportQuery,
  RangeDays,
  RawExportQuery,
} from './schema.js';

const DAY_MS = 86_400_000;

export interface DayRange {
  /** First and last day, inclusive, YYYY-MM-DD (UTC). */
  from: string;
  to: string;
  /** Every day of the range, oldest first. */
  days: string[];
  /** [fromMs, toMs): midnight UTC of the first day to midnight after the last. */
  fromMs: number;
  toMs: number;
}

/** The last N UTC days including today. */
export function dayRange(now: Date, n: number): DayRange {
  const todayMs = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const fromMs = todayMs - (n - 1) * DAY_MS;
  const days: string[] = [];
  for (let ms = fromMs; ms <= todayMs; ms += DAY_MS) days.push(new Date(ms).toISOString().slice(0, 10));
  return { from: days[0], to: days[days.length - 1], days, fromMs, toMs: todayMs + DAY_MS };
}

export interface Totals {
  scans: number;
  uniques: number;
  unique_rate: number;
}

/**
 * Uniques are estimates (docs/analytics.md); on large sets where nearly every scan is a new visitor
 * the estimate can overshoot, and distinct visitors can never outnumber scans.
 */
function boundedUniques(scans: number, uniques: number): number {
  return Math.min(scans, uniques);
}

export function totalsOf(scans: number, uniques: number): Totals {
  const u = boundedUniques(scans, uniques);
  return { scans, uniques: u, unique_rate: scans > 0 ? u / scans : 0 };
}

/** Every day of the range, zeros where the rollup has nothing. */
export function fillDays(range: DayRange, daily: { day: string; scans: number }[]): { date: string; scans: number }[] {
  const byDay = new Map(daily.map((d) => [d.day, d.scans]));
  return range.days.map((date) => ({ date, scans: byDay.get(date) ?? 0 }));
}

interface BreakdownEntry {
  key: string;
  label: string;
  scans: number;
  uniques: number;
}

export interface AnalyticsPayload {
  scope_level: 'organization' | 'brand' | 'code';
  range_days: RangeDays;
  totals: Totals;
  time_series: { date: string; scans: number }[];
  dimension: string;
  dimension_label: string;
  dimension_breakdown: BreakdownEntry[];
  child_breakdown?: BreakdownEntry[];
  top_codes?: BreakdownEntry[];
  conversions?: ScopeConversions;
  hourly_series?: { hour: string; scans: number }[];
  csv_rows?: Record<string, string | number>[];
}

/** A brand's or a code's conversions (key: its ULID; "" for codes without a brand or a deleted one). */
type ConversionEntry = ConversionTotals & { key: string; label: string };

/** The scope's conversions, and per brand (organization scope) and per code (organization and brand scope). */
type ScopeConversions = ConversionTotals & { by_brand?: ConversionEntry[]; by_code?: ConversionEntry[] };

/** At most this many codes in conversions.by_code, those with the most conversions. */
const CONVERSION_CODES = 100;

/** The hours of hourly_series: the last 48, the current one last. */
const HOURLY_HOURS = 48;
const HOUR_MS = 3_600_000;

/** The last HOURLY_HOURS UTC hours up to now (the current hour last), zeros included. */
async function hourlySeries(app: AppContext, filter: RollupFilter): Promise<{ hour: string; scans: number }[]> {
  const fromMs = (Math.floor(app.clock.now().getTime() / HOUR_MS) - (HOURLY_HOURS - 1)) * HOUR_MS;
  const toMs = fromMs + HOURLY_HOURS * HOUR_MS;
  const byHour = new Map((await hourlyScans(app.ch, filter, fromMs, toMs)).map((h) => [h.hour * 1000, h.scans]));
  return Array.from({ length: HOURLY_HOURS }, (_, i) => {
    const ms = fromMs + i * HOUR_MS;
    return { hour: new Date(ms).toISOString(), scans: byHour.get(ms) ?? 0 };
  });
}

interface CodeRef {
  id: number;
  ulid: string;
  name: string | null;
  /** The slug as stored and shown on the code: `<org-slug>/<slug>`. */
  slug: string;
  brandId: number | null;
  type: string;
}

/** A live code of the organization (QR-code service), or 404. */
async function findCode(app: AppContext, org: OrgRecord, codeUlid: string): Promise<CodeRef> {
  const row = await getCodeRow(app.db, org, codeUlid);
  return {
    id: Number(row.id),
    ulid: row.ulid,
    name: row.name,
    slug: row.slug,
    brandId: row.brand_id === null ? null : Number(row.brand_id),
    type: row.type,
  };
}

/** A static code's QR holds its payload: nothing is seen, so it has no analytics (not zero ones). */
function requireTrackable(code: CodeRef): void {
  if (isStaticType(code.type)) {
    throw ApiError.field(
      'code_ulid',
      `This ${code.type} code is static: its QR holds the payload itself, so scans are not seen and it has no analytics.`,
    );
  }
}

/** ULIDs and labels of an organization's brands or codes by id (deleted codes included: their scans remain). */
async function childLabels(
  app: AppContext,
  org: OrgRecord,
  child: 'brand' | 'code',
  ids: number[],
): Promise<Map<number, { ulid: string; label: string }>> {
  const out = new Map<number, { ulid: string; label: string }>();
  if (!ids.length) return out;
  if (child === 'brand') {
    for (const b of await brandNames(app.db, org, ids)) out.set(b.id, { ulid: b.ulid, label: b.name });
  } else {
    for (const c of await codeNames(app.db, org, ids)) out.set(c.id, { ulid: c.ulid, label: c.name || c.slug });
  }
  return out;
}

/** The organization's ten most scanned codes of the range. */
const TOP_CODES = 10;

/** Brand or code ids as keys and labels (brand 0: "No brand"; an id Postgres no longer knows: no key). */
async function labelled<T extends { id: number }>(
  app: AppContext,
  org: OrgRecord,
  child: 'brand' | 'code',
  entries: T[],
): Promise<(Omit<T, 'id'> & { key: string; label: string })[]> {
  const labels = await childLabels(
    app,
    org,
    child,
    entries.map((c) => c.id).filter((id) => id > 0),
  );
  return entries.map(({ id, ...rest }) => {
    const known = labels.get(id);
    if (known) return { key: known.ulid, label: known.label, ...rest };
    return { key: '', label: child === 'brand' && id === 0 ? 'No brand' : `Deleted ${child}`, ...rest };
  });
}

/** Counted children as breakdown entries: uniques bounded by scans. */
async function labelledCounts(
  app: AppContext,
  org: OrgRecord,
  child: 'brand' | 'code',
  counted: (Counted & { id: number })[],
): Promise<BreakdownEntry[]> {
  return (await labelled(app, org, child, counted)).map((c) => ({
    key: c.key,
    label: c.label,
    scans: c.scans,
    uniques: boundedUniques(c.scans, c.uniques),
  }));
}

/** The scope's conversions of the range, with the per-brand and per-code lists of its scope level. */
async function scopeConversions(
  app: AppContext,
  org: OrgRecord,
  scope: AnalyticsPayload['scope_level'],
  filter: RollupFilter,
  range: DayRange,
): Promise<ScopeConversions> {
  const [totals, brands, codes] = await Promise.all([
    conversionTotals(app, org, filter, range.fromMs, range.toMs),
    scope === 'organization'
      ? conversionsPer(app, org, filter, 'brand', range.fromMs, range.toMs, Number.MAX_SAFE_INTEGER)
      : null,
    scope === 'code' ? null : conversionsPer(app, org, filter, 'code', range.fromMs, range.toMs, CONVERSION_CODES),
  ]);
  const out: ScopeConversions = { ...totals };
  if (brands) out.by_brand = await labelled(app, org, 'brand', brands);
  if (codes) out.by_code = await labelled(app, org, 'code', codes);
  return out;
}

function breakdownEntries(
  rows: { value: string; scans: number; uniques: number }[],
  dimension: RollupDimension,
  locale: string,
): BreakdownEntry[] {
  return rows.map((r) => ({
    key: r.value,
    label: dimensionValueLabel(dimension, r.value, locale),
    scans: r.scans,
    uniques: boundedUniques(r.scans, r.uniques),
  }));
}

/**
 * One rollup query for the request (queries.ts, rollupReport), then the totals, every day of the
 * range and the dimension's breakdown as the payload shows them.
 */
async function rollupSummary(
  app: AppContext,
  org: OrgRecord,
  filter: RollupFilter,
  range: DayRange,
  request: ReportRequest,
): Promise<{ report: Report; summary: Omit<AnalyticsPayload, 'scope_level' | 'range_days'> }> {
  const report = await rollupReport(app.ch, filter, request);
  const dimension = request.dimension;
  // The rollup has no rows of these (its breakdown comes back empty): the raw rows answer them.
  if (isRawDimension(dimension))
    Object.assign(report, await rawBreakdown(app.ch, filter, dimension, request.dailyBreakdown));
  return {
    report,
    summary: {
      totals: totalsOf(report.totals.scans, report.totals.uniques),
      time_series: fillDays(range, report.days),
      dimension,
      dimension_label: DIMENSION_LABELS[dimension],
      dimension_breakdown: breakdownEntries(report.breakdown, dimension, org.locale),
    },
  };
}

// GET /v1/analytics and GET /v1/analytics/export
export async function organizationAnalytics(
  app: AppContext,
  org: OrgRecord,
  q: AnalyticsQuery,
  opts: { csvRows: boolean },
): Promise<AnalyticsPayload> {
  const range = dayRange(app.clock.now(), q.range);
  const filter: RollupFilter = { orgId: org.id, from: range.from, to: range.to, includeBots: q.include_bots };
  let scope: AnalyticsPayload['scope_level'] = 'organization';
  if (q.brand_ulid) {
    filter.brandId = Number((await getBrand(app.db, org, q.brand_ulid)).id);
    scope = 'brand';
  }
  if (q.code_ulid) {
    const code = await findCode(app, org, q.code_ulid);
    requireTrackable(code);
    // Both given: the code must be one of the brand's, else it is not found in that scope.
    if (filter.brandId !== undefined && code.brandId !== filter.brandId) throw ApiError.notFound('QR code');
    filter.codeId = code.id;
    delete filter.brandId;
    scope = 'code';
  }
  const { report, summary } = await rollupSummary(app, org, filter, range, {
    dimension: q.dimension,
    children: scope !== 'code',
    topCodes: scope === 'organization' ? TOP_CODES : undefined,
    dailyBreakdown: opts.csvRows,
  });
  const payload: AnalyticsPayload = {
    scope_level: scope,
    range_days: q.range,
    ...summary,
  };
  if (q.hourly) payload.hourly_series = await hourlySeries(app, filter);
  // Labels and conversions come from Postgres, another process: all at once.
  const [children, top, conversions, converted] = await Promise.all([
    report.children && labelledCounts(app, org, scope === 'organization' ? 'brand' : 'code', report.children),
    report.topCodes && labelledCounts(app, org, 'code', report.topCodes),
    scopeConversions(app, org, scope, filter, range),
    report.dailyBreakdown && carriesConversions(q.dimension)
      ? conversionsPerDay(app, org, filter, q.dimension, range.fromMs, range.toMs)
      : null,
  ]);
  payload.conversions = conversions;
  if (children) payload.child_breakdown = children;
  if (top) payload.top_codes = top;
  if (report.dailyBreakdown) payload.csv_rows = csvRows(org, q.dimension, report.dailyBreakdown, converted);
  return payload;
}

/** The column of a currency's conversion amounts in csv_rows. */
const amountColumn = (currency: string) => `conversion_amount_${currency}`;

/**
 * csv_rows: {date, <dimension>, scans} per day and dimension value with scans and, for the scan
 * dimensions a conversion carries (carriesConversions), `conversions` (recorded that day, by their scan's
 * value) and one `conversion_amount_<CURRENCY>` per currency of the range; a day and value with
 * conversions but no scans is a row with scans 0. Oldest day first, then most scans.
 */
function csvRows(
  org: OrgRecord,
  dimension: RollupDimension,
  scans: NonNullable<Report['dailyBreakdown']>,
  conversions: Awaited<ReturnType<typeof conversionsPerDay>> | null,
): Record<string, string | number>[] {
  if (!conversions) {
    return scans.map((r) => ({
      date: r.day,
      [dimension]: dimensionValueLabel(dimension, r.value, org.locale),
      scans: r.scans,
    }));
  }
  const currencies = [...new Set(conversions.flatMap((c) => [...c.minor.keys()]))].sort();
  const cells = new Map<string, { day: string; value: string; scans: number; conv?: (typeof conversions)[number] }>();
  for (const r of scans) cells.set(`${r.day}\u0000${r.value}`, { day: r.day, value: r.value, scans: r.scans });
  for (const c of conversions) {
    const key = `${c.day}\u0000${c.value}`;
    const cell = cells.get(key);
    if (cell) cell.conv = c;
    else cells.set(key, { day: c.day, value: c.value, scans: 0, conv: c });
  }
  return [...cells.values()]
    .sort(
      (a, b) =>
        (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) ||
        b.scans - a.scans ||
        (b.conv?.count ?? 0) - (a.conv?.count ?? 0) ||
        Buffer.compare(Buffer.from(a.value), Buffer.from(b.value)),
    )
    .map((cell) => {
      const row: Record<string, string | number> = {
        date: cell.day,
        [dimension]: dimensionValueLabel(dimension, cell.value, org.locale),
        scans: cell.scans,
        conversions: cell.conv?.count ?? 0,
      };
      for (const cur of currencies) row[amountColumn(cur)] = formatMinor(cell.conv?.minor.get(cur) ?? 0n, cur);
      return row;
    });
}

/** The columns of an export's csv_rows, in CSV order (the conversion columns: see csvRows). */
export function csvColumns(dimension: string, rows: Record<string, string | number>[]): string[] {
  const columns = ['date', dimension, 'scans'];
  if (!carriesConversions(dimension)) return columns;
  const amounts = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) if (k.startsWith('conversion_amount_')) amounts.add(k);
  return [...columns, 'conversions', ...[...amounts].sort()];
}

export interface CodeAnalyticsPayload {
  qr_code: { ulid: string; name: string | null; slug: string };
  range_days: RangeDays;
  totals: Totals;
  time_series: { date: string; scans: number }[];
  dimension: string;
  dimension_label: string;
  dimension_breakdown: BreakdownEntry[];
  /** Actions on the code's landing page (vcard, links, app, event codes): count and distinct visitors. */
  actions?: ActionCount[];
  conversions: ConversionTotals;
}

// GET /v1/analytics/qr-codes/{code_ulid}
export async function codeAnalytics(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  q: CodeAnalyticsQuery,
): Promise<CodeAnalyticsPayload> {
  const code = await findCode(app, org, codeUlid);
  requireTrackable(code);
  const range = dayRange(app.clock.now(), q.range);
  const filter: RollupFilter = {
    orgId: org.id,
    from: range.from,
    to: range.to,
    codeId: code.id,
    includeBots: q.include_bots,
  };
  return {
    qr_code: { ulid: code.ulid, name: code.name, slug: code.slug },
    range_days: q.range,
    ...(
      await rollupSummary(app, org, filter, range, { dimension: q.dimension, children: false, dailyBreakdown: false })
    ).summary,
    ...(isLandingType(code.type) ? { actions: await codeActions(app.ch, { ...filter, codeId: code.id }) } : {}),
    conversions: await conversionTotals(app, org, { codeId: code.id }, range.fromMs, range.toMs),
  };
}

/** A raw scan as the export shows it: the scan event's columns, ISO time, visitor id, null for no rule. */
export type RawExportRow = Pick<
  ScanEvent,
  'scan_id' | 'country' | 'device_type' | 'os' | 'browser' | 'referrer' | 'language' | 'provider'
> & { scanned_at: string; visitor_id: string; matched_rule: number | null };

export const RAW_EXPORT_COLUMNS: (keyof RawExportRow)[] = [
  'scan_id',
  'scanned_at',
  'country',
  'device_type',
  'os',
  'browser',
  'referrer',
  'language',
  'provider',
  'visitor_id',
  'matched_rule',
];

/** A landing-page action as the raw export (kind=actions) and the live stream show it. */
export interface RawExportActionRow {
  action_id: string;
  scanned_at: string;
  /** vcard, ics, link, app_store, play_store, website, or the pixel page's consent_<outcome>. */
  action: string;
  /** The link's index (0-based) for `link`, else null. */
  target: number | null;
  visitor_id: string;
  bot: boolean;
}

export const RAW_EXPORT_ACTION_COLUMNS: (keyof RawExportActionRow)[] = [
  'action_id',
  'scanned_at',
  'action',
  'target',
  'visitor_id',
  'bot',
];

export interface RawExportPayload<Row = RawExportRow | RawExportActionRow> {
  qr_code: { ulid: string; slug: string };
  rows: Row[];
  meta: { count: number; limit: number; offset: number; has_more: boolean; next_cursor: string | null };
}

/** A raw scan as the raw export (and the live stream) shows it. */
export function rawExportRow(s: RawScan): RawExportRow {
  return {
    scan_id: s.scan_id,
    scanned_at: new Date(s.scanned_at_ms).toISOString(),
    country: s.country,
    device_type: s.device_type,
    os: s.os,
    browser: s.browser,
    referrer: s.referrer,
    language: s.language,
    provider: s.provider,
    visitor_id: s.visitor_hash.toLowerCase(),
    matched_rule: s.matched_rule < 0 ? null : s.matched_rule,
  };
}

/** A raw action as the raw export (and the live stream) shows it. */
export function rawExportActionRow(a: RawAction): RawExportActionRow {
  return {
    action_id: a.action_id,
    scanned_at: new Date(a.scanned_at_ms).toISOString(),
    action: a.action,
    target: a.action === 'link' ? a.target : null,
    visitor_id: a.visitor_hash.toLowerCase(),
    bot: a.is_bot === 1,
  };
}

/** A keyset cursor: the (scanned_at, scan_id or action_id) of the last row of a page, opaque to clients. */
export function encodeCursor(ms: number, scanId: string): string {
  return Buffer.from(`${ms}.${scanId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { ms: number; scanId: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,15})\.([0-9A-Za-z_-]{1,64})$/.exec(text);
  if (!m) throw ApiError.field('cursor', 'Is not a cursor this API returned.');
  return { ms: Number(m[1]), scanId: m[2] };
}

/** One page of a raw export: the rows after the cursor and offset, one more than asked telling whether there are more. */
async function rawPage<T extends { scanned_at_ms: number }, Row>(
  q: RawExportQuery,
  read: (page: RawPageQuery) => Promise<T[]>,
  page: Omit<RawPageQuery, 'limit' | 'offset' | 'includeBots'>,
  idOf: (row: T) => string,
  render: (row: T) => Row,
): Promise<Pick<RawExportPayload<Row>, 'rows' | 'meta'>> {
  const found = await read({ ...page, limit: q.limit + 1, offset: q.offset, includeBots: q.include_bots });
  const hasMore = found.length > q.limit;
  const rows = found.slice(0, q.limit);
  const last = rows[rows.length - 1];
  return {
    rows: rows.map(render),
    meta: {
      count: rows.length,
      limit: q.limit,
      offset: q.offset,
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(last.scanned_at_ms, idOf(last)) : null,
    },
  };
}

// GET /v1/analytics/qr-codes/{code_ulid}/raw-export
export async function rawExport(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  q: RawExportQuery,
): Promise<RawExportPayload> {
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const code = await findCode(app, org, codeUlid);
  requireTrackable(code);
  const range = dayRange(app.clock.now(), q.range);
  const page = { orgId: org.id, codeId: code.id, fromMs: range.fromMs, toMs: range.toMs, after };
  const qr_code = { ulid: code.ulid, slug: code.slug };
  if (q.kind === 'actions') {
    const read = (p: RawPageQuery) => rawActionPage(app.ch, p);
    return { qr_code, ...(await rawPage(q, read, page, (a) => a.action_id, rawExportActionRow)) };
  }
  const read = (p: RawPageQuery) => rawScanPage(app.ch, p);
  return { qr_code, ...(await rawPage(q, read, page, (s) => s.scan_id, rawExportRow)) };
}

export interface ConversionsExportPayload {
  qr_code: { ulid: string; slug: string };
  rows: ConversionExportRow[];
  meta: { count: number; limit: number; offset: number; has_more: boolean };
}

// GET /v1/analytics/qr-codes/{code_ulid}/conversions-export
export async function conversionsExport(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  q: ConversionsExportQuery,
): Promise<ConversionsExportPayload> {
  const code = await findCode(app, org, codeUlid);
  requireTrackable(code);
  const range = dayRange(app.clock.now(), q.range);
  // One row more than asked tells whether there is a next page.
  const rows = await conversionPage(app, org, code.id, {
    fromMs: range.fromMs,
    toMs: range.toMs,
    limit: q.limit + 1,
    offset: q.offset,
  });
  const page = rows.slice(0, q.limit);
  return {
    qr_code: { ulid: code.ulid, slug: code.slug },
    rows: page,
    meta: { count: page.length, limit: q.limit, offset: q.offset, has_more: rows.length > q.limit },
  };
}
