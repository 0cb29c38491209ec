// Brands and codes for tests that need their numeric ids (to write scan events for them), made
// through the same services as the API.
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
