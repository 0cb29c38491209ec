// Brands of an organization. Every service and data-access function takes the organization first.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { findVisibleDomain } from '../domains/service.js';
import { ApiError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { requireHttpUrl } from '../schemas/http-url.js';
import type { BrandInput, CreateBrandBody } from './schema.js';
import { normalisePixels, type TrackingPixel } from '../qr-codes/pixels.js';

export interface BrandRow {
  id: number;
  ulid: string;
  org_id: number;
  name: string;
  slug: string;
  brand_kit: Record<string, unknown> | null;
  settings: Record<string, unknown> | null;
  tracking_pixels: TrackingPixel[] | null;
  primary_domain_id: number | null;
  primary_domain_ulid: string | null;
  primary_domain_host: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BrandOut {
  ulid: string;
  name: string;
  slug: string;
  brand_kit: Record<string, unknown>;
  settings: Record<string, unknown>;
  tracking_pixels: TrackingPixel[] | null;
  primary_domain: { ulid: string; host: string } | null;
  created_at: Date;
  updated_at: Date;
}

export function renderBrand(row: BrandRow): BrandOut {
  return {
    ulid: row.ulid,
    name: row.name,
    slug: row.slug,
    brand_kit: row.brand_kit ?? {},
    settings: row.settings ?? {},
    tracking_pixels: row.tracking_pixels,
    primary_domain:
      row.primary_domain_ulid && row.primary_domain_host
        ? { ulid: row.primary_domain_ulid, host: row.primary_domain_host }
        : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function brands(db: Knex | Knex.Transaction, org: OrgRecord): Knex.QueryBuilder {
  return db('brands as b')
    .leftJoin('domains as d', 'd.id', 'b.primary_domain_id')
    .where('b.org_id', org.id)
    .select('b.*', 'd.ulid as primary_domain_ulid', 'd.host as primary_domain_host');
}

export async function listBrandsPage(db: Knex, org: OrgRecord, afterId: number, n: number): Promise<BrandRow[]> {
  return brands(db, org).where('b.id', '>', afterId).orderBy('b.id').limit(n);
}

export async function findBrand(
  db: Knex | Knex.Transaction,
  org: OrgRecord,
  brandUlid: string,
): Promise<BrandRow | undefined> {
  return brands(db, org).where('b.ulid', brandUlid.toUpperCase()).first();
}

export async function getBrand(db: Knex, org: OrgRecord, brandUlid: string): Promise<BrandRow> {
  const row = await findBrand(db, org, brandUlid);
  if (!row) throw ApiError.notFound('brand');
  return row;
}

/** Id, ULID and name of brands by id (analytics labels). */
export async function brandNames(
  db: Knex,
  org: OrgRecord,
  ids: number[],
): Promise<{ id: number; ulid: string; name: string }[]> {
  if (!ids.length) return [];
  const rows = await db('brands').where('org_id', org.id).whereIn('id', ids).select('id', 'ulid', 'name');
  return rows.map((r) => ({ id: Number(r.id), ulid: r.ulid, name: r.name }));
}

/** A slug from a display name: ASCII letters and digits joined by hyphens, lowercase, at most 64. */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return slug || 'brand';
}

/** `base` (a slugFromName result: [a-z0-9-] only, so safe in LIKE), else `base-2`, `base-3`, ... whichever is free in the organization (case-insensitively). */
async function freeSlug(db: Knex, org: OrgRecord, base: string): Promise<string> {
  const stem = base.slice(0, 56);
  const taken = new Set(
    (
      await db('brands')
        .where({ org_id: org.id })
        .where((q) =>
          q.whereRaw('lower(slug) = ?', [base.toLowerCase()]).orWhereRaw('lower(slug) like ?', [`${stem}-%`]),
        )
        .select<{ slug: string }[]>('slug')
    ).map((r) => r.slug.toLowerCase()),
  );
  if (!taken.has(base.toLowerCase())) return base;
  for (let n = 2; ; n++) {
    const candidate = `${stem}-${n}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

async function domainIdFor(
  db: Knex,
  org: OrgRecord,
  domainUlid: string | null | undefined,
): Promise<number | null | undefined> {
  if (domainUlid === undefined) return undefined;
  if (domainUlid === null) return null;
  const domain = await findVisibleDomain(db, org, domainUlid);
  if (!domain) throw ApiError.field('primary_domain_ulid', 'No such domain in this organization.');
  return domain.id;
}

const URL_KEY = /(^|_)url$/i;

/**
 * Free-form brand settings, with the value of every key named `url` or ending in `_url` (at any
 * depth) an http(s) URL stored normalised, or null; anything else there is a 422.
 */
function normaliseBrandSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const walk = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}.${i}`));
    if (typeof value !== 'object' || value === null) return value;
    // No prototype: a key named __proto__ stays a plain key.
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value)) {
      const here = `${path}.${k}`;
      out[k] = URL_KEY.test(k) && v !== null ? requireHttpUrl(here, v) : walk(v, here);
    }
    return out;
  };
  return walk(settings, 'settings') as Record<string, unknown>;
}

/** A brand's pixels as stored (custom URLs normalised), or 422 naming each bad one. */
function brandPixels(pixels: TrackingPixel[] | null | undefined): string | null | undefined {
  if (pixels === undefined) return undefined;
  if (pixels === null) return null;
  const checked = normalisePixels(pixels, 'tracking_pixels');
  const problems = Object.entries(checked.problems);
  if (problems.length) throw ApiError.validation(Object.fromEntries(problems.map(([f, m]) => [f, [m]])));
  return JSON.stringify(checked.pixels);
}

function slugTaken(): ApiError {
  return ApiError.field('slug', 'The slug has already been taken.');
}

export async function createBrand(app: AppContext, org: OrgRecord, input: CreateBrandBody): Promise<BrandRow> {
  const settings = normaliseBrandSettings(input.settings ?? {});
  const pixels = brandPixels(input.tracking_pixels) ?? null;
  const primaryDomainId = await domainIdFor(app.db, org, input.primary_domain_ulid);
  const now = app.clock.now();
  // A generated slug that loses a race to a concurrent insert is picked again; a given one is 422.
  for (let attempt = 0; ; attempt++) {
    const slug = input.slug ?? (await freeSlug(app.db, org, slugFromName(input.name)));
    const id = newUlid(now.getTime());
    try {
      await app.db('brands').insert({
        ulid: id,
        org_id: org.id,
        name: input.name,
        slug,
        brand_kit: JSON.stringify(input.brand_kit ?? {}),
        settings: JSON.stringify(settings),
        tracking_pixels: pixels,
        primary_domain_id: primaryDomainId ?? null,
        created_at: now,
        updated_at: now,
      });
      return getBrand(app.db, org, id);
    } catch (err) {
      if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
      if (input.slug !== undefined || attempt >= 4) throw slugTaken();
    }
  }
}

export async function updateBrand(
  app: AppContext,
  org: OrgRecord,
  brandUlid: string,
  patch: BrandInput,
): Promise<BrandRow> {
  const row = await getBrand(app.db, org, brandUlid);
  const changes: Record<string, unknown> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.slug !== undefined) changes.slug = patch.slug;
  if (patch.brand_kit !== undefined) changes.brand_kit = JSON.stringify(patch.brand_kit);
  if (patch.settings !== undefined) changes.settings = JSON.stringify(normaliseBrandSettings(patch.settings));
  const pixels = brandPixels(patch.tracking_pixels);
  if (pixels !== undefined) changes.tracking_pixels = pixels;
  const primaryDomainId = await domainIdFor(app.db, org, patch.primary_domain_ulid);
  if (primaryDomainId !== undefined) changes.primary_domain_id = primaryDomainId;
  if (!Object.keys(changes).length) return row;
  changes.updated_at = app.clock.now();
  try {
    await app.db('brands').where({ id: row.id, org_id: org.id }).update(changes);
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION) throw slugTaken();
    throw err;
  }
  return getBrand(app.db, org, row.ulid);
}
