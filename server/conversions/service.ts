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

function renderConversion(r: ConversionRow): ConversionOut {
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

/** Conversions recorded in [fromMs, toMs) of the organization, a brand or a code. */
export async function conversionTotals(
  app: AppContext,
  org: OrgRecord,
  scope: { brandId?: number; codeId?: number },
  fromMs: number,
  toMs: number,
): Promise<ConversionTotals> {
  const base = () => {
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
  };
  const [totals, amounts] = await Promise.all([
    base().first<{ n: string; v: string }>(
      app.db.raw('count(*) as n'),
      app.db.raw('count(distinct visitor_hash) as v'),
    ),
    base()
      .whereNotNull('currency')
      .groupBy('currency')
      .orderBy('currency')
      .select<{ currency: string; minor: string }[]>('currency', app.db.raw('sum(amount_minor) as minor')),
  ]);
  return {
    count: Number(totals?.n ?? 0),
    unique_visitors: Number(totals?.v ?? 0),
    amounts: amounts.map((a) => ({ currency: a.currency, amount: formatMinor(BigInt(a.minor), a.currency) })),
  };
}
