// Demo data for `qrctl seed-demo --scans N`: an organization with brands and codes, created
// through the same services as the API (so they obey every rule of a brand and a code), and N
// synthetic scans over the last 90 days (synthetic-scans.ts).
import type { OrgRecord } from '../auth/principal.js';
import { createBrand } from '../brands/service.js';
import type { AppContext } from '../context.js';
import { firstFallbackDomain } from '../domains/fallback.js';
import { createOrganization } from '../organizations/service.js';
import { createCodeRows } from '../qr-codes/service.js';
import { writeSyntheticScans, type DemoCode } from './synthetic-scans.js';

const DEMO_BRANDS = [
  {
    name: 'Northwind Coffee',
    slug: 'northwind-coffee',
    codes: ['menu', 'loyalty', 'table-card', 'window-poster', 'cup-sleeve', 'receipt'],
  },
  {
    name: 'Contoso Books',
    slug: 'contoso-books',
    codes: ['catalog', 'author-talk', 'bookmark', 'gift-card', 'newsletter'],
  },
  {
    name: 'Fabrikam Travel',
    slug: 'fabrikam-travel',
    codes: ['brochure', 'boarding-pass', 'hotel-flyer', 'billboard', 'magazine-ad'],
  },
  {
    name: 'Tailspin Events',
    slug: 'tailspin-events',
    codes: ['tickets', 'badge', 'stage-screen', 'program', 'feedback', 'sponsor-wall'],
  },
];
const UNBRANDED_CODES = ['business-card', 'wifi', 'vcard'];

export interface SeedDemoOptions {
  /** Number of scans to write (default 1,000,000). */
  scans?: number;
  /** Called after each batch with the scans written so far. */
  onProgress?: (done: number, total: number) => void;
  /** Days of history ending today (default 90). */
  days?: number;
  /** Rows per ClickHouse insert (default 5,000,000; generated inside ClickHouse). */
  batchSize?: number;
  seed?: number;
  /** Organization slug (default demo-<random>); its plan is enterprise_monthly. */
  slug?: string;
}

export interface SeedDemoResult {
  org: OrgRecord;
  /** The owner's initial token (plain text, shown once). */
  token: string;
  brands: { id: number; ulid: string; name: string }[];
  codes: DemoCode[];
  scans: number;
}

/** Creates the demo organization, its brands and codes, and writes the synthetic scans. */
export async function seedDemo(app: AppContext, opts: SeedDemoOptions = {}): Promise<SeedDemoResult> {
  const total = opts.scans ?? 1_000_000;
  const slug = opts.slug ?? `demo-${Math.random().toString(36).slice(2, 8)}`;
  const created = await createOrganization(app, {
    name: 'Demo Organization',
    slug,
    planCode: 'enterprise_monthly',
    currency: 'EUR',
    ownerEmail: `owner@${slug}.example.com`,
  });
  const org = created.org;
  const domain = await firstFallbackDomain(app.db);
  const brands: SeedDemoResult['brands'] = [];
  const codes: DemoCode[] = [];
  const addCodes = async (brand: { id: number; ulid: string } | null, list: { slug: string; name: string }[]) => {
    const rows = await createCodeRows(
      app,
      org,
      list.map((c) => ({
        slug: c.slug,
        name: c.name,
        destination: `https://example.com/${c.slug}`,
        domain_ulid: domain.ulid,
        brand_ulid: brand?.ulid,
      })),
    );
    rows.forEach((r, i) => codes.push({ id: Number(r.id), ulid: r.ulid, slug: list[i].slug, brandId: brand?.id ?? 0 }));
  };
  for (const b of DEMO_BRANDS) {
    const row = await createBrand(app, org, { name: b.name, slug: b.slug });
    const brand = { id: Number(row.id), ulid: row.ulid };
    brands.push({ ...brand, name: b.name });
    await addCodes(
      brand,
      b.codes.map((c) => ({ slug: `${b.slug}-${c}`, name: `${b.name}: ${c.replace(/-/g, ' ')}` })),
    );
  }
  await addCodes(
    null,
    UNBRANDED_CODES.map((c) => ({ slug: c, name: c.replace(/-/g, ' ') })),
  );
  await writeSyntheticScans(app.ch, {
    orgId: org.id,
    domainId: domain.id,
    codes,
    total,
    days: opts.days ?? 90,
    nowMs: app.clock.now().getTime(),
    batchSize: opts.batchSize ?? 5_000_000,
    seed: opts.seed ?? 42,
    onProgress: opts.onProgress,
  });
  return { org, token: created.token.secret, brands, codes, scans: total };
}
