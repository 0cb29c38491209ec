// Dashboard accounts: sign-in with email and password, one-time links (set a password, accept an
// invitation), the organizations a user belongs to, the principal a user acts as in one of them,
// and the staff flag. Sessions, links and the throttle have files of their own beside this one.
import type { Knex } from 'knex';
import { effectiveAbilities, WILDCARD, type Role } from '../auth/abilities.js';
import type { OrgRecord, Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { findOrCreateUser, toOrgRecord } from '../organizations/service.js';
import { toPlanRecord } from '../plans/plans.js';
import { recordAudit } from '../audit/service.js';
import { createLink, findOpenLink, markLinkUsed, type CreatedLink } from './links.js';
import { hashAccountPassword, passwordProblem, verifyAccountPassword } from './passwords.js';
import { createSession, endUserSessions, type ClientInfo } from './sessions.js';
import { clearAccountAttempts, reserveSignInAttempt } from './throttle.js';

export interface StartedSession {
  secret: string;
  expiresAt: Date;
}

interface UserRow {
  id: number;
  ulid: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  is_staff: boolean;
}

async function findUserByEmail(db: Knex | Knex.Transaction, email: string): Promise<UserRow | undefined> {
  return db('users').whereRaw('lower(email) = lower(?)', [email.trim()]).first();
}

function wrongCredentials(): ApiError {
  return new ApiError('unauthenticated', 'The email or password is wrong.');
}

/** Email and password: a new session, 401 when either is wrong, 429 past the throttle. */
export async function signIn(
  app: AppContext,
  input: { email: string; password: string },
  client: ClientInfo,
): Promise<StartedSession> {
  await reserveSignInAttempt(app, { email: input.email, address: client.address });
  const user = await findUserByEmail(app.db, input.email);
  const ok = await verifyAccountPassword(user?.password_hash ?? null, input.password);
  if (!user || !ok) throw wrongCredentials();
  await clearAccountAttempts(app, input.email);
  return createSession(app, app.db, user.id, client);
}

/** A sign-in link for an existing user (qrctl org create, qrctl user login-link). */
export async function createSignInLink(app: AppContext, email: string): Promise<CreatedLink> {
  const user = await findUserByEmail(app.db, email);
  if (!user) throw ApiError.notFound('user');
  return createLink(app, app.db, { purpose: 'sign_in', email: user.email, userId: user.id });
}

function expiredLink(): ApiError {
  return new ApiError('not_found', 'This link has expired or was already used. Ask for a new one.');
}

/** What a link offers, for the page that opens it. */
export async function describeLink(app: AppContext, secret: string) {
  const link = await findOpenLink(app.db, secret, app.clock.now());
  if (!link) throw expiredLink();
  const user = await findUserByEmail(app.db, link.email);
  const org = link.org_id ? await app.db('organizations').where({ id: link.org_id }).first('name') : null;
  return {
    purpose: link.purpose,
    email: link.email,
    organization: org ? { name: org.name as string } : null,
    role: link.role,
    has_password: !!user?.password_hash,
    expires_at: link.expires_at.toISOString(),
  };
}

/**
 * Uses a link. sign_in: sets the new password, ends the user's other sessions and signs in.
 * invite: a person without a password sets one; one with a password confirms it (throttled like a
 * sign-in); then they join the organization with the invited role (an existing membership is
 * kept) and are signed in.
 */
export async function redeemLink(
  app: AppContext,
  secret: string,
  input: { password: string; name?: string },
  client: ClientInfo,
): Promise<StartedSession> {
  const now = app.clock.now();
  const link = await findOpenLink(app.db, secret, now);
  if (!link) throw expiredLink();
  const existing = await findUserByEmail(app.db, link.email);
  const confirming = link.purpose === 'invite' && !!existing?.password_hash;
  if (confirming) {
    await reserveSignInAttempt(app, { email: link.email, address: client.address });
    if (!(await verifyAccountPassword(existing!.password_hash, input.password))) throw wrongCredentials();
  } else {
    const problem = passwordProblem(input.password);
    if (problem) throw ApiError.field('password', problem);
  }
  const hash = confirming ? null : await hashAccountPassword(input.password);
  return app.db.transaction(async (trx) => {
    if (!(await markLinkUsed(trx, link.id, now))) throw expiredLink();
    const user = await findOrCreateUser(trx, link.email, input.name?.trim() || undefined);
    if (hash) {
      await trx('users').where({ id: user.id }).update({ password_hash: hash, updated_at: now });
      await endUserSessions(trx, user.id);
    }
    if (link.purpose === 'invite') {
      const joined = await trx('memberships')
        .insert({ org_id: link.org_id, user_id: user.id, role: link.role })
        .onConflict(['org_id', 'user_id'])
        .ignore()
        .returning('role');
      if (joined.length) {
        await recordAudit(trx, {
          orgId: link.org_id!,
          actorUserId: user.id,
          actor: user.email,
          action: 'member.joined',
          details: { email: user.email, role: link.role, invitation: link.ulid },
          at: now,
        });
        app.principals.forgetOrg(link.org_id!);
      }
    }
    return createSession(app, trx, user.id, client);
  });
}

export interface Membership {
  ulid: string;
  name: string;
  slug: string;
  role: Role;
}

/** The organizations the user belongs to, by name. */
export async function userOrganizations(db: Knex, userId: number): Promise<Membership[]> {
  return db('memberships as m')
    .join('organizations as o', 'o.id', 'm.org_id')
    .where('m.user_id', userId)
    .orderByRaw('lower(o.name), o.id')
    .select('o.ulid', 'o.name', 'o.slug', 'm.role');
}

/**
 * The principal a signed-in user acts as in one of their organizations: the member's role and
 * every ability it holds, no token. Not a member (or no such organization): 404.
 */
export async function memberPrincipal(
  db: Knex,
  user: { userId: number },
  orgUlid: string,
  label: string,
): Promise<Principal> {
  const row = await db('memberships as m')
    .join('organizations as o', 'o.id', 'm.org_id')
    .leftJoin('plans as p', 'p.id', 'o.plan_id')
    .where({ 'm.user_id': user.userId, 'o.ulid': orgUlid })
    .first(
      'm.role',
      'o.*',
      db.raw('p.id as p_id'),
      db.raw('p.code as p_code'),
      db.raw('p.name as p_name'),
      db.raw('p.api_access as p_api_access'),
      db.raw('p.api_rate_limit_per_min as p_rate'),
      db.raw('p.calls_included_month as p_included'),
      db.raw('p.features as p_features'),
    );
  if (!row) throw ApiError.notFound('organization');
  const plan =
    row.p_id === null
      ? null
      : toPlanRecord({
          id: row.p_id,
          code: row.p_code,
          name: row.p_name,
          api_access: row.p_api_access,
          api_rate_limit_per_min: row.p_rate,
          calls_included_month: row.p_included,
          features: row.p_features,
        });
  const org: OrgRecord = toOrgRecord(row, plan);
  const role = row.role as Role;
  return {
    org,
    token: { id: null, name: label, abilities: [WILDCARD], userId: user.userId, role },
    abilities: effectiveAbilities([WILDCARD], role),
  };
}

/** Sets or clears the staff flag (qrctl user staff); the user is created when new. */
export async function setStaff(app: AppContext, email: string, staff: boolean) {
  return app.db.transaction(async (trx) => {
    const user = await findOrCreateUser(trx, email);
    await trx('users').where({ id: user.id }).update({ is_staff: staff, updated_at: app.clock.now() });
    const row = (await trx('users').where({ id: user.id }).first()) as UserRow;
    return { ulid: row.ulid, email: row.email, is_staff: row.is_staff, has_password: !!row.password_hash };
  });
}
