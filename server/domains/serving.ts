// What the redirect asks of domains, by host: the domain that serves a host (the row that holds
// it, SERVING_STATUSES), and every live host for the redirect's known-keys filter. The redirect
// (server/redirect/) caches and answers; the SQL on domains is here.
import type { Knex } from 'knex';
import { httpUrlOrNull } from '../schemas/http-url.js';
import { SERVING_STATUSES } from './domain-row.js';

type Db = Knex | Knex.Transaction;

/** A domain as the redirect serves it. */
export interface ServingDomain {
  id: number;
  /** null: a shared fallback origin. */
  orgId: number | null;
  orgSlug: string | null;
  type: 'custom' | 'fallback';
  /** The stored host (fallback: host[:port] of its origin) and a fallback's configured origin. */
  host: string;
  origin: string | null;
  /** Until when (ms) its codes answer: Infinity, or an unverified domain's certificate expiry. */
  answersUntil: number;
  /** Until when (ms) plain HTTP gets a 308 to HTTPS: its certificate's expiry, or 0 (never). */
  httpsUntil: number;
  rootRedirect: string | null;
  notFoundRedirect: string | null;
}

const expiry = (d: Date | null): number => (d ? new Date(d).getTime() : 0);

/** The domain (not deleted, in a serving status) whose host is `host` in lower case, or null. */
export async function findServingDomain(db: Db, host: string): Promise<ServingDomain | null> {
  const row = await db('domains as d')
    .leftJoin('organizations as o', 'o.id', 'd.org_id')
    .whereRaw('lower(d.host) = ?', [host])
    .whereNull('d.deleted_at')
    // The row that holds the host (unique among these statuses); pending claims of it hold nothing.
    .whereIn('d.status', SERVING_STATUSES)
    .first(
      'd.id',
      'd.org_id',
      'o.slug as org_slug',
      'd.type',
      'd.host',
      'd.origin',
      'd.status',
      'd.settings',
      'd.ssl_expires_at',
    );
  if (!row) return null;
  return {
    id: Number(row.id),
    orgId: row.org_id === null ? null : Number(row.org_id),
    orgSlug: row.org_slug ?? null,
    type: row.type,
    host: row.host,
    origin: row.origin ?? null,
    answersUntil: row.status === 'unverified' ? expiry(row.ssl_expires_at) : Infinity,
    httpsUntil: row.type === 'custom' && row.settings?.https_redirect !== false ? expiry(row.ssl_expires_at) : 0,
    rootRedirect: httpUrlOrNull(row.settings?.root_redirect),
    notFoundRedirect: httpUrlOrNull(row.settings?.not_found_redirect),
  };
}

/** How many domain rows are not deleted (every status: a pending claim's host may serve soon). */
export async function countLiveDomains(db: Db): Promise<number> {
  const [{ hosts }] = await db('domains').whereNull('deleted_at').count<{ hosts: string }[]>('* as hosts');
  return Number(hosts);
}

/** Up to `limit` domain rows (not deleted) after id `after`: id and host in lower case, by id. */
export async function liveHostPage(db: Db, after: number, limit: number): Promise<{ id: number; key: string }[]> {
  const rows = await db('domains')
    .whereNull('deleted_at')
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .select<{ id: string; k: string }[]>('id', db.raw('lower(host) as k'));
  return rows.map((r) => ({ id: Number(r.id), key: r.k }));
}
