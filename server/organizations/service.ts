// Organizations: creation with an owner, a wallet and a first token; plan changes; the resource.
import type { Knex } from 'knex';
import { ulid } from 'ulid';
import { ROLES, type Role } from '../auth/abilities.js';
import type { OrgRecord, PlanRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { likePattern } from '../stores/postgres.js';
import { findPlanByCode, findPlanById, planSummary } from '../plans/plans.js';
import { createToken, type CreatedToken } from '../tokens/service.js';
import { formatMinor, isCurrency } from '../wallet/money.js';
import { ORG_SLUG_PATTERN, type OrganizationSettings, type PixelConsent } from './schema.js';

export interface CreateOrganizationInput {
  name: string;
  slug: string;
  planCode: string | null;
  currency: string;
  locale?: string;
  ownerEmail: string;
  ownerName?: string;
}

export interface CreatedOrganization {
  org: OrgRecord;
  owner: { id: number; ulid: string; email: string };
  token: CreatedToken;
}

interface OrgRow {
  id: number;
  ulid: string;
  name: string;
  slug: string;
  locale: string;
  currency: string;
  plan_id: number | null;
  created_at: Date;
  updated_at: Date;
  pixel_consent: string;
}

export function toOrgRecord(r: OrgRow, plan: PlanRecord | null): OrgRecord {
  return {
    id: r.id,
    ulid: r.ulid,
    name: r.name,
    slug: r.slug,
    locale: r.locale,
    currency: r.currency,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    plan,
    pixelConsent: r.pixel_consent,
  };
}

async function withPlan(db: Knex | Knex.Transaction, row: OrgRow): Promise<OrgRecord> {
  return toOrgRecord(row, row.plan_id === null ? null : await findPlanById(db, row.plan_id));
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const LOCALE = /^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;

function validateCreate(input: CreateOrganizationInput): void {
  const errors: Record<string, string[]> = {};
  if (!input.name?.trim() || input.name.length > 255) errors.name = ['Must be 1 to 255 characters.'];
  if (!ORG_SLUG_PATTERN.test(input.slug ?? ''))
    errors.slug = ['Must be 1 to 48 lowercase letters, digits or dashes, not starting or ending with a dash.'];
  if (!isCurrency(input.currency ?? '')) errors.currency = ['Must be an ISO 4217 currency code such as EUR.'];
  if (input.locale !== undefined && !LOCALE.test(input.locale))
    errors.locale = ['Must be a locale such as en or de-AT.'];
  if (!EMAIL.test(input.ownerEmail ?? '')) errors.owner_email = ['Must be an email address.'];
  if (Object.keys(errors).length) throw ApiError.validation(errors);
}

export async function findOrCreateUser(trx: Knex.Transaction, email: string, name?: string) {
  const existing = await trx('users').whereRaw('lower(email) = lower(?)', [email]).first();
  if (existing) return existing as { id: number; ulid: string; email: string };
  const [row] = await trx('users')
    .insert({ ulid: ulid(), email, name: name ?? null })
    .returning(['id', 'ulid', 'email']);
  return row as { id: number; ulid: string; email: string };
}

export async function createOrganization(
  app: AppContext,
  input: CreateOrganizationInput,
): Promise<CreatedOrganization> {
  validateCreate(input);
  const plan = input.planCode ? await findPlanByCode(app.db, input.planCode) : null;
  if (input.planCode && !plan) throw ApiError.field('plan', `Unknown plan "${input.planCode}".`);
  try {
    return await app.db.transaction(async (trx) => {
      const now = app.clock.now();
      const [orgRow] = await trx('organizations')
        .insert({
          ulid: ulid(now.getTime()),
          name: input.name.trim(),
          slug: input.slug,
          locale: input.locale ?? 'en',
          currency: input.currency,
          plan_id: plan?.id ?? null,
          created_at: now,
          updated_at: now,
        })
        .returning('*');
      const org = toOrgRecord(orgRow as OrgRow, plan);
      const owner = await findOrCreateUser(trx, input.ownerEmail, input.ownerName);
      await trx('memberships').insert({ org_id: org.id, user_id: owner.id, role: 'owner' });
      await trx('wallets').insert({ org_id: org.id, balance_minor: 0, updated_at: now });
      const token = await createToken(app, trx, org, {
        userId: owner.id,
        name: 'Initial token',
        abilities: ['*'],
        expiresAt: null,
      });
      return { org, owner, token };
    });
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION) throw ApiError.field('slug', `The slug "${input.slug}" is already taken.`);
    throw err;
  }
}

/** Finds an organization by ULID or slug (operator tools accept either). */
async function findOrganization(db: Knex, ulidOrSlug: string): Promise<OrgRecord | null> {
  const row = await db<OrgRow>('organizations')
    .where('ulid', ulidOrSlug)
    .orWhereRaw('lower(slug) = lower(?)', [ulidOrSlug])
    .first();
  return row ? withPlan(db, row) : null;
}

/** An organization by its id (jobs carry ids), or 404. */
export async function getOrganizationById(db: Knex | Knex.Transaction, id: number): Promise<OrgRecord> {
  const row = await db<OrgRow>('organizations').where({ id }).first();
  if (!row) throw ApiError.notFound('organization');
  return withPlan(db, row);
}

export async function requireOrganization(db: Knex, ulidOrSlug: string): Promise<OrgRecord> {
  const org = await findOrganization(db, ulidOrSlug);
  if (!org) throw ApiError.notFound('organization');
  return org;
}

export async function setPlan(app: AppContext, org: OrgRecord, planCode: string | null): Promise<PlanRecord | null> {
  const plan = planCode ? await findPlanByCode(app.db, planCode) : null;
  if (planCode && !plan) throw ApiError.field('plan', `Unknown plan "${planCode}".`);
  await app
    .db('organizations')
    .where({ id: org.id })
    .update({ plan_id: plan?.id ?? null, updated_at: app.clock.now() });
  app.principals.forgetOrg(org.id);
  return plan;
}

export async function addMember(app: AppContext, org: OrgRecord, email: string, role: Role) {
  if (!ROLES.includes(role)) throw ApiError.field('role', `Must be one of: ${ROLES.join(', ')}.`);
  return app.db
    .transaction(async (trx) => {
      const user = await findOrCreateUser(trx, email);
      await trx('memberships')
        .insert({ org_id: org.id, user_id: user.id, role })
        .onConflict(['org_id', 'user_id'])
        .merge({ role });
      return user;
    })
    .finally(() => app.principals.forgetOrg(org.id));
}

export async function findMember(
  db: Knex,
  org: OrgRecord,
  email: string,
): Promise<{ userId: number; role: Role } | null> {
  const row = await db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', org.id)
    .whereRaw('lower(u.email) = lower(?)', [email])
    .first('m.user_id', 'm.role');
  return row ? { userId: row.user_id, role: row.role } : null;
}

function renderOrganization(org: OrgRecord) {
  return {
    ulid: org.ulid,
    name: org.name,
    slug: org.slug,
    locale: org.locale,
    currency: org.currency,
    plan: planSummary(org.plan),
    created_at: org.createdAt.toISOString(),
    updated_at: org.updatedAt.toISOString(),
  };
}

/**
 * The organization as GET /v1/organization shows it: from the record the principal cache holds
 * (a change of the row evicts it, sql/0007), so a read costs no query.
 */
export function readOrganization(org: OrgRecord) {
  // Object.assign onto the fresh object rather than a spread copy: the same fields in the same
  // order, without copying them (GET /v1/organization is one of the API's cheapest, busiest reads).
  return Object.assign(renderOrganization(org), { pixel_consent: org.pixelConsent as PixelConsent });
}

/** PATCH /v1/organization: the settings given change (the redirect's cached codes follow, sql/0060). */
export async function updateOrganization(app: AppContext, org: OrgRecord, patch: OrganizationSettings) {
  if (patch.pixel_consent !== undefined) {
    await app.db('organizations').where({ id: org.id }).update({ pixel_consent: patch.pixel_consent });
    // This process's next call reads the new setting at once (others learn by NOTIFY, sql/0007).
    app.principals.forgetOrg(org.id);
  }
  return readOrganization({ ...org, pixelConsent: patch.pixel_consent ?? org.pixelConsent });
}

/** Organizations by name or slug fragment with their wallet balance (the staff area), by name. */
export async function searchOrganizations(db: Knex, search: string, limit: number) {
  const q = db('organizations as o')
    .leftJoin('wallets as w', 'w.org_id', 'o.id')
    .leftJoin('plans as p', 'p.id', 'o.plan_id')
    .orderByRaw('lower(o.name), o.id')
    .limit(limit)
    .select('o.ulid', 'o.name', 'o.slug', 'o.currency', 'p.code as plan', 'w.balance_minor');
  const term = search.trim().toLowerCase();
  if (term) {
    const like = likePattern(term);
    q.where((w) => w.whereRaw('lower(o.name) like ?', [like]).orWhereRaw('lower(o.slug) like ?', [like]));
  }
  const rows = await q;
  return rows.map((r) => ({
    ulid: r.ulid as string,
    name: r.name as string,
    slug: r.slug as string,
    plan: (r.plan as string | null) ?? null,
    currency: r.currency as string,
    balance: formatMinor(Number(r.balance_minor ?? 0), r.currency),
  }));
}
