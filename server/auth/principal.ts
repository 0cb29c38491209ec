// Bearer-token authentication. A token is `<id>|<secret>`; only a SHA-256 of the secret is stored,
// and the comparison is constant-time.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ApiError } from '../errors.js';
import { effectiveAbilities, type Ability, type Role } from './abilities.js';

export interface PlanRecord {
  id: number;
  code: string;
  name: string;
  apiAccess: boolean;
  rateLimitPerMin: number;
  /** null: unlimited. */
  callsIncludedMonth: number | null;
  features: string[];
}

/**
 * The organization as every service and data-access function receives it (first, after the
 * context or connection): its id scopes every query, its slug builds public paths, its plan gates
 * features.
 */
export interface OrgRecord {
  id: number;
  ulid: string;
  name: string;
  slug: string;
  locale: string;
  currency: string;
  createdAt: Date;
  updatedAt: Date;
  plan: PlanRecord | null;
  /** The organization's pixel_consent setting (sql/0060); cached with the rest of the row. */
  pixelConsent: string;
}

/**
 * Who calls: the organization, the token and what it may do. A dashboard session calls as its
 * user with the member's role and no token: token.id is null and token.abilities is `*`.
 */
export interface Principal {
  org: OrgRecord;
  token: {
    id: number | null;
    name: string;
    abilities: string[];
    userId: number;
    role: Role;
    /** The one resource an OAuth access token is for (RFC 8707); absent for API tokens and sessions. */
    audience?: string | null;
  };
  /** The token's abilities narrowed by the holder's role. */
  abilities: ReadonlySet<Ability>;
}

const TOKEN_RE = /^(\d{1,15})\|([A-Za-z0-9]{40,128})$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * SHA-256 of a secret. crypto.hash (Node 20.12 and later) is one call, about half the cost of a
 * Hash object; every authenticated request pays it once.
 */
export const hashSecret: (secret: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (secret) => crypto.hash('sha256', secret, 'buffer')
    : (secret) => crypto.createHash('sha256').update(secret).digest();

/** 48 random base62 characters (about 285 bits), without modulo bias. */
export function newSecret(length = 48): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function parseBearer(header: string | undefined): { id: number; secret: string } | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return null;
  const t = TOKEN_RE.exec(m[1]);
  if (!t) return null;
  return { id: Number(t[1]), secret: t[2] };
}

interface PrincipalRow {
  token_id: number;
  token_name: string;
  abilities: string[];
  audience: string | null;
  secret_hash: Buffer;
  expires_at: Date | null;
  revoked_at: Date | null;
  user_id: number;
  role: Role | null;
  org_id: number;
  org_ulid: string;
  org_name: string;
  org_slug: string;
  locale: string;
  currency: string;
  org_created_at: Date;
  org_updated_at: Date;
  pixel_consent: string;
  plan_id: number | null;
  plan_code: string | null;
  plan_name: string | null;
  api_access: boolean | null;
  api_rate_limit_per_min: number | null;
  calls_included_month: number | null;
  features: string[] | null;
}

/**
 * Resolves a bearer header to a principal (and the token's expiry), or throws 401. The api_access
 * gate is the caller's. Entry points use the cached variant, app.principals.authenticate().
 */
export async function authenticate(
  db: Knex,
  header: string | undefined,
  now: Date,
): Promise<{ principal: Principal; expiresAt: Date | null }> {
  const parsed = parseBearer(header);
  if (!parsed) throw ApiError.unauthenticated(header ? 'The bearer token is malformed.' : 'Unauthenticated.');
  const { rows } = await db.raw<{ rows: PrincipalRow[] }>(
    `select t.id as token_id, t.name as token_name, t.abilities, t.audience, t.secret_hash, t.expires_at, t.revoked_at,
            t.user_id, m.role, o.id as org_id, o.ulid as org_ulid, o.name as org_name, o.slug as org_slug,
            o.locale, o.currency, o.created_at as org_created_at, o.updated_at as org_updated_at, o.pixel_consent,
            p.id as plan_id, p.code as plan_code, p.name as plan_name, p.api_access, p.api_rate_limit_per_min,
            p.calls_included_month, p.features
       from api_tokens t
       join organizations o on o.id = t.org_id
       left join memberships m on m.org_id = t.org_id and m.user_id = t.user_id
       left join plans p on p.id = o.plan_id
      where t.id = ?`,
    [parsed.id],
  );
  const row = rows[0];
  const given = hashSecret(parsed.secret);
  // Compare even when the id is unknown, so timing does not tell which ids exist.
  const stored = row?.secret_hash ?? Buffer.alloc(32);
  const match = crypto.timingSafeEqual(stored, given) && row !== undefined;
  if (!row || !match || row.revoked_at || !row.role || (row.expires_at && row.expires_at <= now)) {
    throw ApiError.unauthenticated('The bearer token is invalid, expired or revoked.');
  }
  const principal: Principal = {
    org: {
      id: row.org_id,
      ulid: row.org_ulid,
      name: row.org_name,
      slug: row.org_slug,
      locale: row.locale,
      currency: row.currency,
      createdAt: row.org_created_at,
      updatedAt: row.org_updated_at,
      pixelConsent: row.pixel_consent,
      plan:
        row.plan_id === null
          ? null
          : {
              id: row.plan_id,
              code: row.plan_code!,
              name: row.plan_name!,
              apiAccess: row.api_access!,
              rateLimitPerMin: row.api_rate_limit_per_min!,
              callsIncludedMonth: row.calls_included_month,
              features: row.features ?? [],
            },
    },
    token: {
      id: row.token_id,
      name: row.token_name,
      abilities: row.abilities,
      userId: row.user_id,
      role: row.role,
      audience: row.audience,
    },
    abilities: effectiveAbilities(row.abilities, row.role),
  };
  return { principal, expiresAt: row.expires_at };
}

export function hasApiAccess(org: OrgRecord): boolean {
  return !!org.plan?.apiAccess;
}

/** Plan-gated features (redirect_cap, routing, schedule, password): 403 feature_not_in_plan. */
export function requireFeature(org: OrgRecord, feature: string): void {
  if (!org.plan?.features.includes(feature)) throw ApiError.featureNotInPlan(feature);
}
