// One-time dashboard links: `/app/link/<secret>`. A sign-in link lets its user set a password and
// signs them in; an invitation lets a person join an organization with a role. Only a SHA-256 of
// the secret is stored; a link works once, until it expires (WEB_LINK_TTL_HOURS) or is revoked.
import type { Knex } from 'knex';
import type { Role } from '../auth/abilities.js';
import { hashSecret, newSecret } from '../auth/principal.js';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { fastUlid } from '../ids.js';

type LinkPurpose = 'sign_in' | 'invite';

export interface NewLink {
  purpose: LinkPurpose;
  email: string;
  userId?: number | null;
  orgId?: number | null;
  role?: Role | null;
  createdBy?: number | null;
}

export interface CreatedLink {
  ulid: string;
  url: string;
  expiresAt: Date;
}

export interface LinkRow {
  id: number;
  ulid: string;
  purpose: LinkPurpose;
  email: string;
  user_id: number | null;
  org_id: number | null;
  role: Role | null;
  created_at: Date;
  expires_at: Date;
}

/** An address of the dashboard: PUBLIC_API_URL (or the API listener) + /app + path. */
function dashboardUrl(app: AppContext, path: string): string {
  return `${apiBaseUrl(app.config, app.apiPort())}/app${path}`;
}

export async function createLink(app: AppContext, db: Knex | Knex.Transaction, link: NewLink): Promise<CreatedLink> {
  const now = app.clock.now();
  const secret = newSecret(48);
  const expiresAt = new Date(now.getTime() + app.config.webLinkTtlHours * 3_600_000);
  const ulid = fastUlid(now.getTime());
  await db('account_links').insert({
    ulid,
    secret_hash: hashSecret(secret),
    purpose: link.purpose,
    email: link.email,
    user_id: link.userId ?? null,
    org_id: link.orgId ?? null,
    role: link.role ?? null,
    created_by: link.createdBy ?? null,
    created_at: now,
    expires_at: expiresAt,
  });
  return { ulid, url: dashboardUrl(app, `/link/${secret}`), expiresAt };
}

/** The link of a secret if it is still usable (not used, revoked or expired), else null. */
export async function findOpenLink(db: Knex | Knex.Transaction, secret: string, now: Date): Promise<LinkRow | null> {
  if (!/^[A-Za-z0-9]{48}$/.test(secret)) return null;
  const row = await db('account_links')
    .where({ secret_hash: hashSecret(secret) })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .andWhere('expires_at', '>', now)
    .first('id', 'ulid', 'purpose', 'email', 'user_id', 'org_id', 'role', 'created_at', 'expires_at');
  return (row as LinkRow | undefined) ?? null;
}

/** Marks a link used; false when another request used it first. */
export async function markLinkUsed(trx: Knex.Transaction, id: number, now: Date): Promise<boolean> {
  const n = await trx('account_links').where({ id }).whereNull('used_at').update({ used_at: now });
  return n === 1;
}
