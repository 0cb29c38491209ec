// Data access for QR codes. Every function takes the organization first: a code, domain, brand or
// style of another organization is simply not found. Shared fallback domains (org_id null) are
// visible to every organization.
import type { Knex } from 'knex';
import type { OrgRecord } from '../auth/principal.js';
import { likePattern, preparedQuery } from '../stores/postgres.js';
import type { CodeSettings } from './schema.js';

type Db = Knex | Knex.Transaction;

/** A qr_codes row joined with the names its payload shows. */
export interface CodeRow {
  id: number;
  ulid: string;
  org_id: number;
  name: string | null;
  slug: string;
  type: string;
  status: string;
  destination: unknown;
  routing: Record<string, unknown> | null;
  schedule: Record<string, unknown> | null;
  has_password: boolean;
  redirects_count: string | number;
  redirect_cap: number | null;
  date_begin: Date | null;
  expire_at: Date | null;
  utm_params: Record<string, string> | null;
  device_routing: Record<string, unknown> | null;
  language_routing: Record<string, unknown> | null;
  tracking_pixels: { provider: string; id: string }[] | null;
  custom_js: string | null;
  conversion_tracking: boolean;
  landing_config: Record<string, unknown> | null;
  prelander_enabled: boolean;
  prelander_seconds: number | null;
  prelander_message: string | null;
  settings: CodeSettings | null;
  created_at: Date;
  updated_at: Date;
  brand_id: number | null;
  brand_ulid: string | null;
  brand_name: string | null;
  domain_id: number;
  domain_ulid: string;
  domain_host: string;
  domain_type: 'custom' | 'fallback';
  domain_origin: string | null;
  /** The domain's status (custom_js needs an active custom domain). */
  domain_status: string;
  style_id: number | null;
  style_ulid: string | null;
  style_name: string | null;
}

const CODE_SELECT = `
  select c.id, c.ulid, c.org_id, c.name, c.slug, c.type, c.status, c.destination, c.routing, c.schedule,
         c.password_hash is not null as has_password, c.redirects_count, c.redirect_cap, c.date_begin,
         c.expire_at, c.utm_params, c.device_routing, c.language_routing, c.tracking_pixels,
         c.landing_config, c.prelander_enabled, c.prelander_seconds, c.prelander_message, c.settings,
         c.conversion_tracking, c.custom_js,
         c.created_at, c.updated_at,
         c.brand_id, b.ulid as brand_ulid, b.name as brand_name,
         c.domain_id, d.ulid as domain_ulid, d.host as domain_host, d.type as domain_type, d.origin as domain_origin,
         d.status as domain_status,
         c.style_id, s.ulid as style_ulid, s.name as style_name
    from qr_codes c
    join domains d on d.id = c.domain_id
    left join brands b on b.id = c.brand_id
    left join qr_styles s on s.id = c.style_id and s.deleted_at is null`;

const FIND_CODE = `${CODE_SELECT} where c.org_id = $1 and c.ulid = $2 and c.deleted_at is null`;

export async function findCode(db: Db, org: OrgRecord, ulid: string): Promise<CodeRow | null> {
  const rows = await preparedQuery<CodeRow>(db, 'qr_codes_find', FIND_CODE, [org.id, ulid.toUpperCase()]);
  return rows[0] ?? null;
}

/** Codes by ULID, in any order; missing and foreign ULIDs are absent. */
export async function findCodes(db: Db, org: OrgRecord, ulids: string[]): Promise<CodeRow[]> {
  if (!ulids.length) return [];
  const { rows } = await db.raw<{ rows: CodeRow[] }>(
    `${CODE_SELECT} where c.org_id = ? and c.ulid = any(?) and c.deleted_at is null order by c.id`,
    [org.id, upper(ulids)],
  );
  return rows;
}

/** Id, ULID, name and stored slug of codes by id, deleted ones included (their scans remain). */
export async function codeNamesById(
  db: Db,
  org: OrgRecord,
  ids: number[],
): Promise<{ id: number; ulid: string; name: string | null; slug: string }[]> {
  if (!ids.length) return [];
  const rows = await db('qr_codes').where('org_id', org.id).whereIn('id', ids).select('id', 'ulid', 'name', 'slug');
  return rows.map((r) => ({ id: Number(r.id), ulid: r.ulid, name: r.name, slug: r.slug }));
}

/** Narrows and orders a page of codes (GET /v1/qr-codes?search=&status=&type=&brand_ulid=&domain_ulid=&order=). */
export interface CodeFilter {
  /** Substring of the name, the slug or the destination URL, any case. */
  search?: string;
  status?: string;
  type?: string;
  brandId?: number;
  domainId?: number;
  /**
   * Creation order (oldest first by default, or newest first: the keyset runs backwards), or by
   * name (sql/0086: the name, else the slug without the organization's, any case; ties by creation).
   */
  order?: 'oldest' | 'newest' | 'name' | 'name_desc';
  /** A gs1 code's GTIN-14. */
  gtin?: string;
}

/** The indexed search text of a code (sql/0013_dashboard_accounts.sql, qr_codes_search). */
const SEARCH_TEXT = `lower(coalesce(c.name, '') || ' ' || c.slug || ' ' || coalesce(c.destination ->> 'url', c.destination #>> '{}'))`;

/** The indexed sort key of the name orders (sql/0086_qr_code_name_order.sql). */
const NAME_KEY = "lower(coalesce(c.name, split_part(c.slug, '/', 2)))";

/**
 * Up to `limit` codes after the keyset position afterId (0: the first page), in the filter's order.
 * In a name order the position is the (name, id) of the code afterId, read in the same query.
 */
export async function pageCodes(
  db: Db,
  org: OrgRecord,
  afterId: number,
  limit: number,
  filter: CodeFilter = {},
): Promise<CodeRow[]> {
  const where = ['c.org_id = ?', 'c.deleted_at is null'];
  const binds: (string | number)[] = [org.id];
  const order = filter.order ?? 'oldest';
  const byName = order === 'name' || order === 'name_desc';
  const dir = order === 'newest' || order === 'name_desc' ? 'desc' : 'asc';
  const cmp = dir === 'desc' ? '<' : '>';
  if (afterId > 0) {
    if (byName) {
      where.push(
        `(${NAME_KEY}, c.id) ${cmp} (select lower(coalesce(p.name, split_part(p.slug, '/', 2))), p.id from qr_codes p where p.org_id = ? and p.id = ?)`,
      );
      binds.push(org.id, afterId);
    } else {
      where.push(`c.id ${cmp} ?`);
      binds.push(afterId);
    }
  }
  for (const [column, value] of [
    ['c.status', filter.status],
    ['c.type', filter.type],
    ['c.brand_id', filter.brandId],
    ['c.domain_id', filter.domainId],
  ] as const) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    binds.push(value);
  }
  if (filter.gtin) {
    // sql/0055's index on (destination ->> 'gtin').
    where.push(`c.type = 'gs1' and (c.destination ->> 'gtin') = ?`);
    binds.push(filter.gtin);
  }
  if (filter.search) {
    where.push(`${SEARCH_TEXT} like ?`);
    binds.push(likePattern(filter.search));
  }
  const orderBy = byName ? `${NAME_KEY} ${dir}, c.id ${dir}` : `c.id ${dir}`;
  const { rows } = await db.raw<{ rows: CodeRow[] }>(
    `${CODE_SELECT} where ${where.join(' and ')} order by ${orderBy} limit ?`,
    [...binds, limit],
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// References: domains, brands and styles a code may point at.

interface DomainRef {
  id: number;
  ulid: string;
  host: string;
  type: 'custom' | 'fallback';
  origin: string | null;
  status: string;
}

interface NamedRef {
  id: number;
  ulid: string;
  name: string;
}

/** ULIDs are case-insensitive (Crockford base32): stored upper case, looked up in any case. */
class UlidMap<T> extends Map<string, T> {
  override get(key: string): T | undefined {
    return super.get(key.toUpperCase());
  }
  override has(key: string): boolean {
    return super.has(key.toUpperCase());
  }
}

const upper = (ulids: Iterable<string>): string[] => [...new Set([...ulids].map((u) => u.toUpperCase()))];

export interface Refs {
  domains: UlidMap<DomainRef>;
  brands: UlidMap<NamedRef>;
  styles: UlidMap<NamedRef>;
}

/**
 * The domains, brands and styles among the given ULIDs that this organization may use: shared
 * fallback domains and its own custom domains (pending ones included), its brands, its styles.
 */
export async function resolveRefs(
  db: Db,
  org: OrgRecord,
  want: { domains: Iterable<string>; brands: Iterable<string>; styles: Iterable<string> },
): Promise<Refs> {
  const domains = upper(want.domains);
  const brands = upper(want.brands);
  const styles = upper(want.styles);
  // One after the other: inside a transaction the three share one connection.
  const d = domains.length
    ? await db('domains')
        .select('id', 'ulid', 'host', 'type', 'origin', 'status')
        .whereIn('ulid', domains)
        .whereNull('deleted_at')
        .where((q) => q.where('org_id', org.id).orWhere((f) => f.whereNull('org_id').andWhere('type', 'fallback')))
        // The lock a code's foreign key takes anyway, taken now: a domain being deleted (FOR UPDATE,
        // domains/service.ts) is waited for and then seen deleted, so no code lands on it.
        .forKeyShare()
    : [];
  const b = brands.length
    ? await db('brands').select('id', 'ulid', 'name').whereIn('ulid', brands).where('org_id', org.id)
    : [];
  const s = styles.length
    ? await db('qr_styles')
        .select('id', 'ulid', 'name')
        .whereIn('ulid', styles)
        .where('org_id', org.id)
        .whereNull('deleted_at')
    : [];
  return {
    domains: new UlidMap((d as DomainRef[]).map((r) => [r.ulid, r])),
    brands: new UlidMap((b as NamedRef[]).map((r) => [r.ulid, r])),
    styles: new UlidMap((s as NamedRef[]).map((r) => [r.ulid, r])),
  };
}

/** Which of the given lower-cased stored slugs are held by live codes (except `exceptId`). */
export async function takenSlugs(db: Db, org: OrgRecord, keys: string[], exceptId?: number): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const { rows } = await db.raw<{ rows: { key: string }[] }>(
    `select lower(slug) as key from qr_codes
      where org_id = ? and deleted_at is null and lower(slug) = any(?) and id <> ?`,
    [org.id, keys, exceptId ?? 0],
  );
  return new Set(rows.map((r) => r.key));
}

/** A gs1 code's Digital Link key on its domain, as the unique index qr_codes_gs1_key compares it. */
export interface Gs1KeyRef {
  domainId: number;
  gtin: string;
  cpv?: string;
  lot?: string;
  serial?: string;
}
export const gs1KeyString = (k: Gs1KeyRef): string =>
  JSON.stringify([k.domainId, k.gtin, k.cpv ?? '', k.lot ?? '', k.serial ?? '']);

/** Which of these keys a live gs1 code of the organization (other than `exceptId`) already holds. */
export async function takenGs1Keys(db: Db, org: OrgRecord, keys: Gs1KeyRef[], exceptId?: number): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const { rows } = await db.raw<{
    rows: { domain_id: string; gtin: string; cpv: string; lot: string; serial: string }[];
  }>(
    `select domain_id, destination ->> 'gtin' as gtin, coalesce(destination ->> 'cpv', '') as cpv,
            coalesce(destination ->> 'lot', '') as lot, coalesce(destination ->> 'serial', '') as serial
       from qr_codes
      where org_id = ? and type = 'gs1' and deleted_at is null and id <> ?
        and destination ->> 'gtin' = any(?)`,
    [org.id, exceptId ?? 0, [...new Set(keys.map((k) => k.gtin))]],
  );
  return new Set(
    rows.map((r) =>
      gs1KeyString({
        domainId: Number(r.domain_id),
        gtin: r.gtin,
        cpv: r.cpv || undefined,
        lot: r.lot || undefined,
        serial: r.serial || undefined,
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Writes.

/** Column values of a new code; JSON columns already serialised. */
export interface NewCodeRow {
  ulid: string;
  org_id: number;
  brand_id: number | null;
  domain_id: number;
  style_id: number | null;
  name: string | null;
  slug: string;
  type: string;
  landing_config: string | null;
  status: string;
  destination: string;
  routing: string | null;
  schedule: string | null;
  password_hash: string | null;
  redirect_cap: number | null;
  date_begin: Date | null;
  expire_at: Date | null;
  utm_params: string | null;
  tracking_pixels: string | null;
  custom_js: string | null;
  conversion_tracking: boolean;
  prelander_enabled: boolean;
  prelander_seconds: number | null;
  prelander_message: string | null;
  settings: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * Inserts codes; a slug already held by a live code is skipped instead of failing the statement.
 * Returns the inserted ids by lower-cased slug, so the caller tells created from taken.
 */
export async function insertCodes(db: Db, rows: NewCodeRow[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  // 26 columns per row; stay well under Postgres's 65535 bind parameters.
  for (let i = 0; i < rows.length; i += 1000) {
    const q = db('qr_codes')
      .insert(rows.slice(i, i + 1000))
      .toSQL();
    const { rows: inserted } = await db.raw<{ rows: { id: string | number; key: string }[] }>(
      `${q.sql} on conflict ((lower(slug))) where deleted_at is null do nothing returning id, lower(slug) as key`,
      q.bindings as Knex.ValueDict[],
    );
    for (const r of inserted) out.set(r.key, Number(r.id));
  }
  return out;
}

export type CodeUpdate = Partial<Omit<NewCodeRow, 'ulid' | 'org_id' | 'created_at'>>;

/** Updates a live code of the organization; false when there is none. */
export async function updateCodeRow(db: Db, org: OrgRecord, id: number, patch: CodeUpdate): Promise<boolean> {
  const n = await db('qr_codes').where({ org_id: org.id, id }).whereNull('deleted_at').update(patch);
  return n > 0;
}

export async function updateStatuses(
  db: Db,
  org: OrgRecord,
  ids: number[],
  status: string,
  now: Date,
): Promise<number> {
  if (!ids.length) return 0;
  return db('qr_codes')
    .where('org_id', org.id)
    .whereIn('id', ids)
    .whereNull('deleted_at')
    .update({ status, updated_at: now });
}

export async function softDeleteCode(db: Db, org: OrgRecord, id: number, now: Date): Promise<boolean> {
  const n = await db('qr_codes')
    .where({ org_id: org.id, id })
    .whereNull('deleted_at')
    .update({ deleted_at: now, updated_at: now });
  return n > 0;
}
