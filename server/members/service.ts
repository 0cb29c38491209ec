// Members of an organization and invitations to join it, managed in the dashboard by owners and
// admins (ability members.manage). Only an owner grants, changes or removes the owner role, and an
// organization always keeps an owner. Every change is audited.
import type { Knex } from 'knex';
import { ROLES, type Role } from '../auth/abilities.js';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { createLink } from '../accounts/links.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';

/** Who manages: the signed-in member (their role decides what they may do to owners). */
export interface Manager {
  userId: number;
  role: Role;
  email: string;
}

interface MemberRow {
  ulid: string;
  email: string;
  name: string | null;
  role: Role;
  id: number;
  created_at: Date;
  password_hash: string | null;
}

function renderMember(r: MemberRow) {
  return {
    user_ulid: r.ulid,
    email: r.email,
    name: r.name,
    role: r.role,
    has_password: !!r.password_hash,
    joined_at: r.created_at.toISOString(),
  };
}

function members(db: Knex | Knex.Transaction, org: OrgRecord) {
  return db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', org.id)
    .select('u.id', 'u.ulid', 'u.email', 'u.name', 'u.password_hash', 'm.role', 'm.created_at');
}

export async function listMembers(db: Knex, org: OrgRecord) {
  const rows = (await members(db, org).orderByRaw('lower(u.email)')) as MemberRow[];
  return rows.map(renderMember);
}

async function findMemberRow(trx: Knex.Transaction, org: OrgRecord, userUlid: string): Promise<MemberRow> {
  const row = (await members(trx, org).where('u.ulid', userUlid).forUpdate('m').first()) as MemberRow | undefined;
  if (!row) throw ApiError.notFound('member');
  return row;
}

function assertMayTouchOwners(by: Manager, ...roles: Role[]): void {
  if (roles.includes('owner') && by.role !== 'owner') {
    throw new ApiError('forbidden', 'Only an owner can grant, change or remove the owner role.');
  }
}

async function assertAnotherOwner(trx: Knex.Transaction, org: OrgRecord): Promise<void> {
  // The owners' rows are locked, so two owners demoting each other at once cannot both succeed.
  const owners = await trx('memberships').where({ org_id: org.id, role: 'owner' }).forUpdate().select('user_id');
  if (owners.length <= 1) throw ApiError.conflict('An organization keeps at least one owner.');
}

function audit(
  app: AppContext,
  org: OrgRecord,
  by: Manager,
  action: AuditEntry['action'],
  details: Record<string, unknown>,
): AuditEntry {
  return { orgId: org.id, actorUserId: by.userId, actor: by.email, action, details, at: app.clock.now() };
}

export async function changeRole(app: AppContext, org: OrgRecord, by: Manager, userUlid: string, role: Role) {
  const out = await app.db.transaction(async (trx) => {
    const m = await findMemberRow(trx, org, userUlid);
    assertMayTouchOwners(by, m.role, role);
    if (m.role === 'owner' && role !== 'owner') await assertAnotherOwner(trx, org);
    await trx('memberships').where({ org_id: org.id, user_id: m.id }).update({ role });
    await recordAudit(trx, audit(app, org, by, 'member.role_changed', { email: m.email, from: m.role, to: role }));
    return renderMember({ ...m, role });
  });
  app.principals.forgetOrg(org.id);
  return out;
}

/** Removes a member: their tokens in the organization stop working at once. */
export async function removeMember(app: AppContext, org: OrgRecord, by: Manager, userUlid: string): Promise<void> {
  await app.db.transaction(async (trx) => {
    const m = await findMemberRow(trx, org, userUlid);
    assertMayTouchOwners(by, m.role);
    if (m.role === 'owner') await assertAnotherOwner(trx, org);
    await trx('memberships').where({ org_id: org.id, user_id: m.id }).delete();
    await recordAudit(trx, audit(app, org, by, 'member.removed', { email: m.email, role: m.role }));
  });
  app.principals.forgetOrg(org.id);
}

interface InvitationRow {
  ulid: string;
  email: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
}

function renderInvitation(r: InvitationRow) {
  return {
    ulid: r.ulid,
    email: r.email,
    role: r.role,
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
  };
}

function openInvitations(db: Knex | Knex.Transaction, org: OrgRecord, now: Date) {
  return db('account_links')
    .where({ org_id: org.id, purpose: 'invite' })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .andWhere('expires_at', '>', now);
}

export async function listInvitations(app: AppContext, org: OrgRecord) {
  const rows = (await openInvitations(app.db, org, app.clock.now())
    .orderBy('id')
    .select('ulid', 'email', 'role', 'created_at', 'expires_at')) as InvitationRow[];
  return rows.map(renderInvitation);
}

/** An invitation link (shown once) for a person to join with a role. */
export async function invite(app: AppContext, org: OrgRecord, by: Manager, input: { email: string; role: Role }) {
  if (!ROLES.includes(input.role)) throw ApiError.field('role', `Must be one of: ${ROLES.join(', ')}.`);
  assertMayTouchOwners(by, input.role);
  const email = input.email.trim();
  return app.db.transaction(async (trx) => {
    const member = await members(trx, org).whereRaw('lower(u.email) = lower(?)', [email]).first();
    if (member) throw ApiError.field('email', 'This person is already a member.');
    const link = await createLink(app, trx, {
      purpose: 'invite',
      email,
      orgId: org.id,
      role: input.role,
      createdBy: by.userId,
    });
    await recordAudit(
      trx,
      audit(app, org, by, 'invitation.created', { email, role: input.role, invitation: link.ulid }),
    );
    const now = app.clock.now();
    return {
      ...renderInvitation({ ulid: link.ulid, email, role: input.role, created_at: now, expires_at: link.expiresAt }),
      url: link.url,
    };
  });
}

export async function revokeInvitation(app: AppContext, org: OrgRecord, by: Manager, ulid: string): Promise<void> {
  await app.db.transaction(async (trx) => {
    const now = app.clock.now();
    const rows = await openInvitations(trx, org, now).where({ ulid }).update({ revoked_at: now }).returning('email');
    if (!rows.length) throw ApiError.notFound('invitation');
    await recordAudit(trx, audit(app, org, by, 'invitation.revoked', { email: rows[0].email, invitation: ulid }));
  });
}
