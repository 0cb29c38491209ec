// Conversions: a report of what a scan led to, bound to a scan of the organization (looked up in
// ClickHouse), recorded exactly once per (scan, event, external_id) by the unique index of
// sql/0061, with the conversion.recorded webhook event in the same transaction.
import { decodeTime, ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { findScan } from '../analytics/queries.js';
import { formatMinor, isCurrency, parseAmount } from '../wallet/money.js';
import { emitEvent } from '../webhooks/events.js';
import { CONVERSION_WINDOW_DAYS, type ConversionInput } from './schema.js';

const DAY_MS = 86_400_000;

interface ConversionRow {
  ulid: string;
  scan_id: string;
  event: string;
  external_id: string;
  amount_minor: string | null;
  currency: string | null;
  code_ulid: string;
  scanned_at: Date;
  created_at: Date;
}

export interface ConversionOut {
  ulid: string;
  scan_id: string;
  event: string;
  external_id: string | null;
  amount: string | null;
  currency: string | null;
  qr_code: { ulid: string };
  scanned_at: string;
  created_at: string;
}

export function renderConversion(r: ConversionRow): ConversionOut {
  return {
    ulid: r.ulid,
    scan_id: r.scan_id,
    event: r.event,
    external_id: r.external_id || null,
    amount: r.amount_minor === null || r.currency === null ? null : formatMinor(Number(r.amount_minor), r.currency),
    currency: r.currency,
    qr_code: { ulid: r.code_ulid },
    scanned_at: r.scanned_at.toISOString(),
    created_at: r.created_at.toISOString(),
  };
}

/** The amount in minor units, or 422 (an amount needs its currency and fits its exponent). */
function amountOf(input: ConversionInput): { minor: number; currency: string } | null {
  if (input.amount === undefined && input.currency === undefined) return null;
  if (input.amount === undefined) throw ApiError.field('amount', 'Required with currency.');
  if (input.currency === undefined) throw ApiError.field('currency', 'Required with amount.');
  if (!isCurrency(input.currency)) throw ApiError.field('currency', 'Must be an ISO 4217 currency code such as EUR.');
  const minor = parseAmount(input.amount, input.currency);
  if (minor === null || !Number.isSafeInteger(minor))
    throw ApiError.field('amount', `Must be a decimal amount with at most the decimals of ${input.currency}.`);
  return { minor, currency: input.currency };
}

/**
 * Records a conversion of a scan of the organization. created false: the same (scan, event,
 * external_id) was recorded before, and that one is returned unchanged. A scan of another
 * organization, or none, is 404; one older than 90 days is 422.
 */
export async function recordConversion(
  app: AppContext,
  org: OrgRecord,
  input: ConversionInput,
): Promise<{ created: boolean; conversion: ConversionOut }> {
  const scanId = input.scan_id.toUpperCase();
  const atMs = decodeTime(scanId);
  const now = app.clock.now();
  if (atMs > now.getTime() + 60_000) throw ApiError.notFound('scan');
  if (now.getTime() - atMs > CONVERSION_WINDOW_DAYS * DAY_MS)
    throw ApiError.field(
      'scan_id',
      `The scan is older than ${CONVERSION_WINDOW_DAYS} days: it can no longer be converted.`,
    );
  const amount = amountOf(input);
  const scan = await findScan(app.ch, org.id, scanId, atMs);
  if (!scan) throw ApiError.notFound('scan');
  const externalId = input.external_id ?? '';
  return app.db.transaction(async (trx) => {
    const code = await trx('qr_codes').where({ id: scan.code_id, org_id: org.id }).first('id', 'ulid', 'brand_id');
    if (!code) throw ApiError.notFound('scan');
    const inserted = await trx('conversions')
      .insert({
        ulid: newUlid(now.getTime()),
        org_id: org.id,
        code_id: code.id,
        brand_id: code.brand_id,
        scan_id: scanId,
        scanned_at: new Date(`${scan.scanned_at.replace(' ', 'T')}Z`),
        visitor_hash: scan.visitor_hash,
        event: input.event,
        external_id: externalId,
        amount_minor: amount?.minor ?? null,
        currency: amount?.currency ?? null,
        created_at: now,
        country: scan.country,
        device_type: scan.device_type,
        referrer: scan.referrer,
        language: scan.language,
        provider: scan.provider,
      })
      .onConflict(trx.raw('(org_id, scan_id, event, external_id)'))
      .ignore()
      .returning('ulid');
    const row = await trx('conversions as v')
      .join('qr_codes as c', 'c.id', 'v.code_id')
      .where({ 'v.org_id': org.id, 'v.scan_id': scanId, 'v.event': input.event, 'v.external_id': externalId })
      .first<ConversionRow>('v.*', 'c.ulid as code_ulid');
    const conversion = renderConversion(row!);
    if (inserted.length) await emitEvent(trx, org.id, 'conversion.recorded', conversion, now);
    return { created: inserted.length > 0, conversion };
  });
}

export interface ConversionTotals {
  count: number;
  unique_visitors: number;
  amounts: { currency: string; amount: string }[];
}

/** Which conversions an analytics request reads: the organization's, a brand's (0: no brand) or a code's. */
export interface ConversionScope {
  brandId?: number;
  codeId?: number;
}

/** The scan dimension a conversion carries (sql/0078), by the analytics dimension's name. */
export const CONVERSION_DIMENSION_COLUMNS = {
  country: 'country',
  device: 'device_type',
  referrer: 'referrer',
  language: 'language',
  provider: 'provider',
} as const;
export type ConversionDimension = keyof typeof CONVERSION_DIMENSION_COLUMNS;

/** Conversions recorded in [fromMs, toMs) of the scope. */
function inRange(app: AppContext, org: OrgRecord, scope: ConversionScope, fromMs: number, toMs: number) {
  const q = app
    .db('conversions')
    .where('org_id', org.id)
    .where('created_at', '>=', new Date(fromMs))
    .where('created_at', '<', new Date(toMs));
  if (scope.codeId !== undefined) q.where('code_id', scope.codeId);
  else if (scope.brandId !== undefined) {
    if (scope.brandId === 0) q.whereNull('brand_id');
    else q.where('brand_id', scope.brandId);
  }
  return q;
}

/** Sums of minor units per currency as decimal strings, currencies in code order. */
function amountsOf(rows: { currency: string; minor: string }[]): { currency: string; amount: string }[] {
  return rows
    .sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0))
    .map((a) => ({ currency: a.currency, amount: formatMinor(BigInt(a.minor), a.currency) }));
}

/** Conversions recorded in [fromMs, toMs) of the organization, a brand or a code. */
export async function conversionTotals(
  app: AppContext,
  org: OrgRecord,
  scope: ConversionScope,
  fromMs: number,
  toMs: number,
): Promise<ConversionTotals> {
  const base = () => inRange(app, org, scope, fromMs, toMs);
  const [totals, amounts] = await Promise.all([
    base().first<{ n: string; v: string }>(
      app.db.raw('count(*) as n'),
      app.db.raw('count(distinct visitor_hash) as v'),
    ),
    base()
      .whereNotNull('currency')
      .groupBy('currency')
      .select<{ currency: string; minor: string }[]>('currency', app.db.raw('sum(amount_minor) as minor')),
  ]);
  return {
    count: Number(totals?.n ?? 0),
    unique_visitors: Number(totals?.v ?? 0),
    amounts: amountsOf(amounts),
  };
}

/**
 * Conversions of the scope per brand (brand_id 0: codes without a brand) or per code, most
 * conversions first (then by id); at most `limit` entries.
 */
export async function conversionsPer(
  app: AppContext,
  org: OrgRecord,
  scope: ConversionScope,
  by: 'brand' | 'code',
  fromMs: number,
  toMs: number,
  limit: number,
): Promise<(ConversionTotals & { id: number })[]> {
  // Fixed text of this function, never a value.
  const column = by === 'brand' ? 'coalesce(brand_id, 0)' : 'code_id';
  const counted = await inRange(app, org, scope, fromMs, toMs)
    .groupByRaw(column)
    .orderByRaw('count(*) desc, 1')
    .limit(limit)
    .select<{ id: string; n: string; v: string }[]>(
      app.db.raw(`${column} as id`),
      app.db.raw('count(*) as n'),
      app.db.raw('count(distinct visitor_hash) as v'),
    );
  if (!counted.length) return [];
  const ids = counted.map((c) => Number(c.id));
  const sums = await inRange(app, org, scope, fromMs, toMs)
    .whereNotNull('currency')
    .whereRaw(`${column} = any(?)`, [ids])
    .groupByRaw(`${column}, currency`)
    .select<{ id: string; currency: string; minor: string }[]>(
      app.db.raw(`${column} as id`),
      'currency',
      app.db.raw('sum(amount_minor) as minor'),
    );
  return counted.map((c) => ({
    id: Number(c.id),
    count: Number(c.n),
    unique_visitors: Number(c.v),
    amounts: amountsOf(sums.filter((s) => s.id === c.id)),
  }));
}

/** Conversions of the scope per UTC day of recording and value of a scan dimension, with amounts per currency. */
export async function conversionsPerDay(
  app: AppContext,
  org: OrgRecord,
  scope: ConversionScope,
  dimension: ConversionDimension,
  fromMs: number,
  toMs: number,
): Promise<{ day: string; value: string; count: number; minor: Map<string, bigint> }[]> {
  const column = CONVERSION_DIMENSION_COLUMNS[dimension];
  const rows = await inRange(app, org, scope, fromMs, toMs)
    .groupByRaw('1, 2, 3')
    .orderByRaw('1, 2, 3')
    .select<{ day: string; value: string; currency: string | null; n: string; minor: string | null }[]>(
      app.db.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day`),
      app.db.raw('?? as value', [column]),
      'currency',
      app.db.raw('count(*) as n'),
      app.db.raw('sum(amount_minor) as minor'),
    );
  const out = new Map<string, { day: string; value: string; count: number; minor: Map<string, bigint> }>();
  for (const r of rows) {
    const key = `${r.day}\u0000${r.value}`;
    let cell = out.get(key);
    if (!cell) out.set(key, (cell = { day: r.day, value: r.value, count: 0, minor: new Map() }));
    cell.count += Number(r.n);
    if (r.currency !== null && r.minor !== null) cell.minor.set(r.currency, BigInt(r.minor));
  }
  return [...out.values()];
}

/** A conversion as the per-code conversions export shows it: the resource, the visitor and its scan's values. */
export type ConversionExportRow = Omit<ConversionOut, 'qr_code'> & {
  visitor_id: string;
  country: string;
  device_type: string;
  referrer: string;
  language: string;
  provider: string;
};

export const CONVERSION_EXPORT_COLUMNS: (keyof ConversionExportRow)[] = [
  'ulid',
  'created_at',
  'scan_id',
  'scanned_at',
  'event',
  'external_id',
  'amount',
  'currency',
  'visitor_id',
  'country',
  'device_type',
  'referrer',
  'language',
  'provider',
];

/**
 * One page of a code's conversions recorded in [fromMs, toMs), in (created_at, ulid) order; one row
 * more than `limit` when there is a next page.
 */
export async function conversionPage(
  app: AppContext,
  org: OrgRecord,
  codeId: number,
  q: { fromMs: number; toMs: number; limit: number; offset: number },
): Promise<ConversionExportRow[]> {
  const rows = await inRange(app, org, { codeId }, q.fromMs, q.toMs)
    .orderBy([{ column: 'created_at' }, { column: 'ulid' }])
    .limit(q.limit)
    .offset(q.offset)
    .select<
      (Omit<ConversionRow, 'code_ulid'> & Omit<ConversionExportRow, keyof ConversionOut> & { visitor_hash: string })[]
    >(
      'ulid',
      'scan_id',
      'event',
      'external_id',
      'amount_minor',
      'currency',
      'scanned_at',
      'created_at',
      'visitor_hash',
      'country',
      'device_type',
      'referrer',
      'language',
      'provider',
    );
  return rows.map((r) => {
    const { qr_code: _code, ...out } = renderConversion({ ...r, code_ulid: '' });
    return {
      ...out,
      // The scan's visitor as the raw scan export shows it: the hash in 16 hex digits.
      visitor_id: BigInt(r.visitor_hash).toString(16).padStart(16, '0'),
      country: r.country,
      device_type: r.device_type,
      referrer: r.referrer,
      language: r.language,
      provider: r.provider,
    };
  });
}
