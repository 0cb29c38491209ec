// Brands and codes for tests that need their numeric ids (to write scan events for them), made
// through the same services as the API, and the scan events themselves (scanRow).
import { ulid } from 'ulid';
import { clickHouseTime, SCAN_EVENT_SCHEMA, NO_GS1, type RedirectScan } from '../../server/analytics/scan-event.js';
import type { ScanEvent } from '../../server/analytics/synthetic-scans.js';
import type { OrgRecord } from '../../server/auth/principal.js';
import { createBrand } from '../../server/brands/service.js';
import type { AppContext } from '../../server/context.js';
import { firstFallbackDomain } from '../../server/domains/fallback.js';
import { createCodeRows } from '../../server/qr-codes/service.js';

export interface Ref {
  id: number;
  ulid: string;
}

/** The first shared fallback domain. */
export function fallbackDomain(app: AppContext): Promise<Ref> {
  return firstFallbackDomain(app.db);
}

export async function makeBrand(app: AppContext, org: OrgRecord, b: { name: string; slug: string }): Promise<Ref> {
  const row = await createBrand(app, org, b);
  return { id: Number(row.id), ulid: row.ulid };
}

/** A code redirecting to https://example.com/<slug>. */
export async function makeCode(
  app: AppContext,
  org: OrgRecord,
  c: { slug: string; name?: string | null; brand?: Ref | null; domain: Ref },
): Promise<Ref> {
  const [row] = await createCodeRows(app, org, [
    {
      slug: c.slug,
      name: c.name ?? null,
      destination: `https://example.com/${c.slug}`,
      domain_ulid: c.domain.ulid,
      ...(c.brand ? { brand_ulid: c.brand.ulid } : {}),
    },
  ]);
  return { id: Number(row.id), ulid: row.ulid };
}

/**
 * One scan_events row at `at` (epoch ms), built from the scan-event contract
 * (server/analytics/scan-event.ts): every column empty (text '', numbers 0, no matched rule -1)
 * unless `fields` gives it.
 */
export function scanRow(at: number, fields: Partial<ScanEvent> = {}): ScanEvent {
  const empty = Object.fromEntries(
    Object.entries(SCAN_EVENT_SCHEMA).map(([column, type]) => [column, type.includes('String') ? '' : 0]),
  ) as Record<string, unknown>;
  return {
    ...(empty as ScanEvent),
    scan_id: ulid(at),
    scanned_at: at,
    visitor_hash: '0',
    matched_rule: -1,
    ...fields,
  };
}

/**
 * One scan_events row as the redirect pushes it into its scan buffer: scanRow with scanned_at as the
 * text ClickHouse reads, and the GS1 dimensions (clickhouse/0026) empty unless `fields` gives them.
 */
export function redirectScanRow(at: number, fields: Partial<RedirectScan> = {}): RedirectScan {
  return { ...scanRow(at), ...NO_GS1, scanned_at: clickHouseTime(at), ...fields };
}
