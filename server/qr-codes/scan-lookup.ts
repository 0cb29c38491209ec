// What the redirect asks of QR codes, across organizations (a scan names no organization, only the
// stored slug `<org-slug>/<slug>`): the code a scan resolves to, the keys of every code for the
// redirect's known-keys filter, and the redirect counters (counts added per scan batch, capped codes'
// redirects reserved in blocks that never take redirects_count past redirect_cap, per holder). The redirect
// (server/redirect/) caches and answers; the SQL on qr_codes is here.
import type { Knex } from 'knex';
import { parseCode, parseSchedule, type CodeSettings, type ParsedCode } from './routing.js';
import { landingEntryOf, type LandingEntry } from '../landing/page.js';
import { pixelPageEntry, pixelsFor, type PixelPageEntry } from './pixels.js';
import {
  byDepth,
  chainOf,
  keyOf,
  type Gs1Availability,
  type Gs1Chain,
  type Gs1Destination,
  type Gs1Level,
} from './gs1-links.js';
import { customScriptEntry, servesCustomJs, type CustomScriptEntry } from './custom-js.js';
import { publicSlug } from './slug.js';

type Db = Knex | Knex.Transaction;

/** A code as a scan needs it. */
export interface ScanCode {
  id: number;
  orgId: number;
  brandId: number;
  domainId: number;
  domainType: string;
  settings: CodeSettings;
  parsed: ParsedCode;
  passwordHash: string | null;
  redirectCap: number | null;
  prelander: { seconds: number; message: string | null } | null;
  /** The stored type (url, a landing-page type, or a static type, which the redirect never serves). */
  type: string;
  /** The landing page of a vcard, links, app or event code (its brand's kit included); null for the others. */
  landing: LandingEntry | null;
  /** The pixel page (the code's pixels, else its brand's, and the organization's consent rule); null: none. */
  pixels: PixelPageEntry | null;
  /** The destination gets qr_scan=<scan id> (conversions). */
  conversionTracking: boolean;
  /** The code's custom_js, only while its domain is a verified custom domain; null: none. */
  script: CustomScriptEntry | null;
}

/** The code (not deleted) whose stored slug is `key` in lower case, or null. */
export async function findCodeForScan(db: Db, key: string): Promise<ScanCode | null> {
  const row = await db('qr_codes as c')
    .join('domains as d', 'd.id', 'c.domain_id')
    .join('organizations as o', 'o.id', 'c.org_id')
    .leftJoin('brands as b', 'b.id', 'c.brand_id')
    .whereRaw('lower(c.slug) = ?', [key])
    .whereNull('c.deleted_at')
    .first(
      'c.id',
      'c.org_id',
      'c.brand_id',
      'c.domain_id',
      'd.type as domain_type',
      'c.status',
      'c.destination',
      'c.routing',
      'c.schedule',
      'c.password_hash',
      'c.redirect_cap',
      'c.date_begin',
      'c.expire_at',
      'c.utm_params',
      'c.prelander_enabled',
      'c.prelander_seconds',
      'c.prelander_message',
      'c.ulid',
      'c.type',
      'c.landing_config',
      'b.brand_kit',
      'c.tracking_pixels',
      'b.tracking_pixels as brand_pixels',
      'o.pixel_consent',
      'c.conversion_tracking',
      'c.custom_js',
      'c.slug',
      'd.status as domain_status',
    );
  if (!row) return null;
  const landing = landingEntryOf({ ...row, uid: `${row.ulid}@qr-code` });
  const settings: CodeSettings = {
    id: Number(row.id),
    status: row.status,
    // A landing page's destination is its page's content, never a URL to send to.
    destination: landing ? null : row.destination,
    routing: row.routing,
    schedule: row.schedule,
    dateBegin: row.date_begin ? new Date(row.date_begin) : null,
    expireAt: row.expire_at ? new Date(row.expire_at) : null,
    utmParams: row.utm_params,
  };
  return {
    id: Number(row.id),
    orgId: Number(row.org_id),
    brandId: row.brand_id === null ? 0 : Number(row.brand_id),
    domainId: Number(row.domain_id),
    domainType: row.domain_type,
    settings,
    parsed: parseCode(settings),
    passwordHash: row.password_hash ?? null,
    redirectCap: row.redirect_cap === null ? null : Number(row.redirect_cap),
    prelander: row.prelander_enabled
      ? { seconds: row.prelander_seconds ?? 5, message: row.prelander_message ?? null }
      : null,
    type: row.type,
    landing,
    conversionTracking: row.conversion_tracking === true,
    pixels: pixelPageEntry(pixelsFor(row.tracking_pixels, row.brand_pixels), row.pixel_consent !== 'not_required'),
    script:
      row.custom_js && servesCustomJs({ type: row.domain_type, status: row.domain_status })
        ? customScriptEntry(row.custom_js, publicSlug(row.slug))
        : null,
  };
}

/** How many codes are not deleted. */
export async function countLiveCodes(db: Db): Promise<number> {
  const [{ codes }] = await db('qr_codes').whereNull('deleted_at').count<{ codes: string }[]>('* as codes');
  return Number(codes);
}

/** Up to `limit` codes (not deleted) after id `after`: id and stored slug in lower case, by id. */
export async function liveSlugPage(db: Db, after: number, limit: number): Promise<{ id: number; key: string }[]> {
  const rows = await db('qr_codes')
    .whereNull('deleted_at')
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select<{ id: string; k: string }[]>('id', db.raw('lower(slug) as k'));
  return rows.map((r) => ({ id: Number(r.id), key: r.k }));
}

/** How many gs1 codes are not deleted (each gives the known-keys filter two GS1 keys). */
export async function countLiveGs1Codes(db: Db): Promise<number> {
  const [{ codes }] = await db('qr_codes')
    .whereNull('deleted_at')
    .where('type', 'gs1')
    .count<{ codes: string }[]>('* as codes');
  return Number(codes);
}

/**
 * Up to `limit` gs1 codes (not deleted) after id `after`: id and GS1 key `<org-slug>|<gtin-14>` in
 * lower case (what the redirect's notification names, sql/0056), by id.
 */
export async function liveGs1KeyPage(db: Db, after: number, limit: number): Promise<{ id: number; key: string }[]> {
  const rows = await db('qr_codes as c')
    .join('organizations as o', 'o.id', 'c.org_id')
    .whereNull('c.deleted_at')
    .where('c.type', 'gs1')
    .where('c.id', '>', after)
    .orderBy('c.id')
    .limit(limit)
    .select<{ id: string; k: string }[]>('c.id', db.raw(`lower(o.slug) || '|' || (c.destination ->> 'gtin') as k`));
  return rows.map((r) => ({ id: Number(r.id), key: r.k }));
}

/** A redirect process's counters as the holder of reservations: one id per life, where it runs. */
export interface ReservationHolder {
  id: string;
  host: string;
  pid: number;
}

/**
 * Reserves up to `want` redirects of a capped code in one atomic UPDATE that never takes
 * redirects_count past redirect_cap, recorded as the holder's (sql/0022) so that what it does not
 * use comes back even if it is killed. granted 0: the code is full, or (uncapped) has no cap any
 * more.
 */
export async function reserveRedirects(
  db: Db,
  holder: ReservationHolder,
  codeId: number,
  want: number,
): Promise<{ granted: number; uncapped: boolean }> {
  const { rows } = await db.raw(
    `with cur as (select id, redirects_count as c, redirect_cap as cap from qr_codes where id = ? for update),
     g as (update qr_codes q set redirects_count = cur.c + least(?, cur.cap - cur.c)
           from cur where q.id = cur.id and cur.cap is not null and cur.c < cur.cap
           returning q.id, least(?, cur.cap - cur.c)::int as granted),
     r as (insert into redirect_reservations (holder, code_id, reserved, host, pid)
           select ?, id, granted, ?, ? from g
           on conflict (holder, code_id)
           do update set reserved = redirect_reservations.reserved + excluded.reserved, seen_at = now())
     select granted from g`,
    [codeId, want, want, holder.id, holder.host, holder.pid],
  );
  const granted = rows.length ? Number(rows[0].granted) : 0;
  if (granted > 0) return { granted, uncapped: false };
  const row = await db('qr_codes').where({ id: codeId }).first('redirect_cap');
  return { granted: 0, uncapped: row !== undefined && row.redirect_cap === null };
}

/**
 * Gives back reserved redirects the holder did not use: off its reservations and off
 * redirects_count, never more than it still holds (what a release took already is not given twice).
 */
export async function giveBackRedirects(db: Db, holder: string, unused: [codeId: number, n: number][]): Promise<void> {
  await db.raw(
    `with v as (select unnest(?::bigint[]) as id, unnest(?::int[]) as n),
     old as (select r.code_id, least(r.reserved, v.n) as d from redirect_reservations r join v on v.id = r.code_id
             where r.holder = ? for update of r),
     upd as (update redirect_reservations r set reserved = r.reserved - old.d
             from old where r.holder = ? and r.code_id = old.code_id)
     update qr_codes q set redirects_count = greatest(0, q.redirects_count - old.d)
     from old where q.id = old.code_id and old.d > 0`,
    [unused.map(([id]) => id), unused.map(([, n]) => n), holder, holder],
  );
}

/** Keeps the holder's reservations from looking abandoned, and drops its settled rows. */
export async function touchReservations(db: Db, holder: string): Promise<void> {
  await db.raw(`delete from redirect_reservations where holder = ? and reserved = 0`, [holder]);
  await db.raw(`update redirect_reservations set seen_at = now() where holder = ?`, [holder]);
}

/** The holders with reservations, other than `self`; stale: not seen for `staleSeconds`. */
export async function reservationHolders(
  db: Db,
  self: string,
  staleSeconds: number,
): Promise<(ReservationHolder & { stale: boolean })[]> {
  const { rows } = await db.raw(
    `select holder, host, pid, max(seen_at) < now() - make_interval(secs => ?) as stale
     from redirect_reservations where holder <> ? group by holder, host, pid`,
    [staleSeconds, self],
  );
  return (rows as { holder: string; host: string; pid: number; stale: boolean }[]).map((r) => ({
    id: r.holder,
    host: r.host,
    pid: Number(r.pid),
    stale: r.stale,
  }));
}

/**
 * Releases everything the holders still hold: off redirects_count, rows deleted, in one statement
 * (so a holder released by two processes at once is released once). Their scans not counted yet
 * are counted when their batches are (countScanBatch without a holder adds them).
 */
export async function releaseReservations(db: Db, holders: string[]): Promise<void> {
  if (!holders.length) return;
  await db.raw(
    `with r as (delete from redirect_reservations where holder = any(?) returning code_id, reserved)
     update qr_codes q set redirects_count = greatest(0, q.redirects_count - s.n)
     from (select code_id, sum(reserved)::bigint as n from r group by code_id) s
     where q.id = s.code_id and s.n > 0`,
    [holders],
  );
}

/** How long a scan batch's token is kept in the ledger: a journal replayed later is not counted. */
export const SCAN_BATCH_COUNT_DAYS = 30;

/**
 * Adds one scan batch's redirects to redirects_count, once per batch token: the token's ledger row
 * (sql/0025) and the counts are one statement, so a batch replayed after a crash, or by two
 * processes at once, is counted once. `holder`: the process that served the batch, counting it
 * itself; its redirects of capped codes were counted when it reserved them, so they settle its
 * reservations instead (the count stays). Without a holder (a journal or spill file replayed)
 * every redirect is added: a holder that is gone has its reservations released (releaseReservations).
 */
export async function countScanBatch(
  db: Db,
  token: string,
  counts: [codeId: number, n: number][],
  holder: string | null = null,
): Promise<void> {
  if (!counts.length) return;
  await db.raw(
    `with batch as (insert into scan_batch_counts (token) values (?) on conflict do nothing returning token),
     v as (select unnest(?::bigint[]) as id, unnest(?::int[]) as n),
     old as (select r.code_id, least(r.reserved, v.n) as m from redirect_reservations r join v on v.id = r.code_id
             where r.holder = ? and exists (select 1 from batch) for update of r),
     upd as (update redirect_reservations r set reserved = r.reserved - old.m
             from old where r.holder = ? and r.code_id = old.code_id)
     update qr_codes q set redirects_count = q.redirects_count + v.n - coalesce(old.m, 0)
     from v left join old on old.code_id = v.id
     where q.id = v.id and exists (select 1 from batch) and v.n > coalesce(old.m, 0)`,
    [token, counts.map(([id]) => id), counts.map(([, n]) => n), holder, holder],
  );
}

/**
 * countScanBatch for a batch written by a version that recorded no reservations (before sql/0022,
 * server/redirect/leftovers.ts): its capped codes' scans were counted when that process reserved
 * them, so none is added, and every capped code is listed for a recount from the stored scans
 * (what the process had reserved and not used is in redirects_count with no record of it).
 * `ledger` false (a version before sql/0025, which counted redirects in memory): nothing is added
 * and the batch's other codes are listed too. The codes are listed even if the token was counted.
 */
export async function countLegacyScanBatch(
  db: Db,
  token: string,
  counts: [codeId: number, n: number][],
  ledger: boolean,
): Promise<void> {
  await db.raw(
    `with batch as (insert into scan_batch_counts (token) values (?) on conflict do nothing returning token),
     v as (select unnest(?::bigint[]) as id, unnest(?::int[]) as n),
     listed as (insert into redirect_recounts (code_id)
                select id from qr_codes where redirect_cap is not null
                union select q.id from qr_codes q join v on v.id = q.id where not ?
                on conflict do nothing)
     update qr_codes q set redirects_count = q.redirects_count + v.n
     from v where q.id = v.id and q.redirect_cap is null and ? and exists (select 1 from batch)`,
    [token, counts.map(([id]) => id), counts.map(([, n]) => n), ledger, ledger],
  );
}

/** A code listed for a recount (sql/0070), and whether it is older than the scans ClickHouse keeps. */
export interface RecountCode {
  id: number;
  orgId: number;
  beyondRetention: boolean;
}

/** The codes listed for a recount (sql/0070). */
export async function listedRecounts(db: Db, retentionDays: number): Promise<RecountCode[]> {
  const { rows } = await db.raw(
    `select q.id, q.org_id, q.created_at < now() - make_interval(days => ?) as old
     from redirect_recounts r join qr_codes q on q.id = r.code_id order by q.id`,
    [retentionDays],
  );
  return (rows as { id: string; org_id: string; old: boolean }[]).map((r) => ({
    id: Number(r.id),
    orgId: Number(r.org_id),
    beyondRetention: r.old,
  }));
}

/**
 * Ends the recount of these codes: each one's redirects_count becomes its stored scans (`stored`;
 * absent: left as it is) plus what live processes hold reserved of it, and its listing goes.
 */
export async function recountRedirects(db: Db, ids: number[], stored: Map<number, number>): Promise<void> {
  if (!ids.length) return;
  await db.raw(
    `with v as (select unnest(?::bigint[]) as id),
     s as (select unnest(?::bigint[]) as id, unnest(?::bigint[]) as n),
     done as (delete from redirect_recounts r using v where r.code_id = v.id)
     update qr_codes q
        set redirects_count = s.n + coalesce((select sum(reserved) from redirect_reservations r where r.code_id = q.id), 0)
     from s where q.id = s.id`,
    [ids, [...stored.keys()], [...stored.values()]],
  );
}

/** Forgets ledger rows older than SCAN_BATCH_COUNT_DAYS. */
export async function pruneScanBatchCounts(db: Db): Promise<void> {
  await db.raw(`delete from scan_batch_counts where counted_at < now() - make_interval(days => ?)`, [
    SCAN_BATCH_COUNT_DAYS,
  ]);
}

/** A live gs1 code as the resolver needs it: one level (GTIN, or GTIN with lot/serial) of a GTIN. */
export interface Gs1ScanCode extends Gs1Level, Gs1Availability {
  id: number;
  orgId: number;
  brandId: number;
  domainId: number;
  domainType: string;
  redirectCap: number | null;
  /** The level and those above it on the same resolver (its domain; every fallback host is one), resolved. */
  chain: Gs1Chain<Gs1ScanCode>;
}

/** Every active gs1 code of one GTIN in one organization (by its slug), on every domain of it. */
export interface Gs1Entry {
  orgId: number;
  /** Least specific first (byDepth). */
  codes: Gs1ScanCode[];
}

/** The resolver a gs1 code answers on: its custom domain, or the fallback hosts (which serve the same codes). */
export const gs1Scope = (c: { domainType: string; domainId: number }): string =>
  c.domainType === 'fallback' ? 'fallback' : `domain ${c.domainId}`;

/**
 * The active gs1 codes of a GTIN-14 in the organization whose slug is `orgSlug` (lower case), or
 * null when there are none. The resolver keeps those of the domain asked (server/redirect/gs1.ts).
 */
export async function findGs1CodesForScan(db: Db, orgSlug: string, gtin: string): Promise<Gs1Entry | null> {
  const rows = await db('qr_codes as c')
    .join('organizations as o', 'o.id', 'c.org_id')
    .join('domains as d', 'd.id', 'c.domain_id')
    .whereRaw('lower(o.slug) = ?', [orgSlug])
    .where('c.type', 'gs1')
    .where('c.status', 'active')
    .whereRaw(`c.destination ->> 'gtin' = ?`, [gtin])
    .whereNull('c.deleted_at')
    .select(
      'c.id',
      'c.org_id',
      'c.brand_id',
      'c.domain_id',
      'd.type as domain_type',
      'c.destination',
      'c.date_begin',
      'c.expire_at',
      'c.schedule',
      'c.redirect_cap',
    );
  if (!rows.length) return null;
  const codes = byDepth(
    rows.map((r): Gs1ScanCode => {
      const d = r.destination as Gs1Destination;
      return {
        id: Number(r.id),
        orgId: Number(r.org_id),
        brandId: r.brand_id === null ? 0 : Number(r.brand_id),
        domainId: Number(r.domain_id),
        domainType: r.domain_type,
        key: keyOf(d),
        links: d.links,
        description: d.description,
        dateBegin: r.date_begin ? new Date(r.date_begin) : null,
        expireAt: r.expire_at ? new Date(r.expire_at) : null,
        schedule: parseSchedule(r.schedule),
        redirectCap: r.redirect_cap === null ? null : Number(r.redirect_cap),
        chain: null as unknown as Gs1Chain<Gs1ScanCode>, // set below, once every level is read
      };
    }),
  );
  // Each level's chain, resolved now rather than on every request: a change to any code of this
  // GTIN drops the whole entry from the cache (sql/0056), so chains never outlive their levels.
  for (const c of codes)
    c.chain = chainOf(
      c,
      codes.filter((o) => gs1Scope(o) === gs1Scope(c)),
    );
  return { orgId: Number(rows[0].org_id), codes };
}
