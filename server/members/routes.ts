// Members and invitations: operations of the dashboard only (not REST, not tools). The web adapter
// runs them through the same runner as every other operation, with the member's abilities.
import { defineOperation, type Call } from '../operations/operation.js';
import { dataEnvelope, listEnvelope } from '../schemas/common.js';
import {
  changeRoleBody,
  invitationParams,
  inviteBody,
  Invitation,
  Member,
  memberParams,
  type ChangeRoleBody,
  type InvitationParams,
  type InviteBody,
  type MemberParams,
} from './schema.js';
import {
  changeRole,
  invite,
  listInvitations,
  listMembers,
  removeMember,
  revokeInvitation,
  type Manager,
} from './service.js';

async function manager({ app, principal }: Call): Promise<Manager> {
  const user = await app.db('users').where({ id: principal.token.userId }).first('email');
  return { userId: principal.token.userId, role: principal.token.role, email: user.email };
}

// GET /members
const membersList = defineOperation({
  id: 'members.list',
  method: 'GET',
  path: '/members',
  summary: 'Members of the organization and their roles',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  response: { status: 200, description: 'The members.', schema: listEnvelope(Member) },
  handler: async ({ app, principal }) => ({ status: 200, body: { data: await listMembers(app.db, principal.org) } }),
});

// PATCH /members/{user_ulid}
const membersUpdate = defineOperation<MemberParams, Record<string, never>, ChangeRoleBody>({
  id: 'members.update',
  method: 'PATCH',
  path: '/members/{user_ulid}',
  summary: 'Change a member’s role',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  params: memberParams,
  body: changeRoleBody,
  response: { status: 200, description: 'The member.', schema: dataEnvelope(Member) },
  errors: [404, 409],
  handler: async (call, { params, body }) => ({
    status: 200,
    body: { data: await changeRole(call.app, call.principal.org, await manager(call), params.user_ulid, body.role) },
  }),
});

// DELETE /members/{user_ulid}
const membersDelete = defineOperation<MemberParams>({
  id: 'members.delete',
  method: 'DELETE',
  path: '/members/{user_ulid}',
  summary: 'Remove a member',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  params: memberParams,
  response: { status: 204, description: 'Removed.' },
  errors: [404, 409],
  handler: async (call, { params }) => {
    await removeMember(call.app, call.principal.org, await manager(call), params.user_ulid);
    return { status: 204 };
  },
});

// GET /invitations
const invitationsList = defineOperation({
  id: 'invitations.list',
  method: 'GET',
  path: '/invitations',
  summary: 'Open invitations',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  response: {
    status: 200,
    description: 'Invitations not yet used, revoked or expired.',
    schema: listEnvelope(Invitation),
  },
  handler: async ({ app, principal }) => ({ status: 200, body: { data: await listInvitations(app, principal.org) } }),
});

// POST /invitations
const invitationsCreate = defineOperation<Record<string, never>, Record<string, never>, InviteBody>({
  id: 'invitations.create',
  method: 'POST',
  path: '/invitations',
  summary: 'Invite a person by link',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  body: inviteBody,
  response: { status: 201, description: 'The invitation with its one-time url.', schema: dataEnvelope(Invitation) },
  handler: async (call, { body }) => ({
    status: 201,
    body: { data: await invite(call.app, call.principal.org, await manager(call), body) },
  }),
});

// DELETE /invitations/{invitation_ulid}
const invitationsDelete = defineOperation<InvitationParams>({
  id: 'invitations.delete',
  method: 'DELETE',
  path: '/invitations/{invitation_ulid}',
  summary: 'Revoke an invitation',
  tag: 'Members',
  ability: 'members.manage',
  billable: false,
  params: invitationParams,
  response: { status: 204, description: 'Revoked.' },
  errors: [404],
  handler: async (call, { params }) => {
    await revokeInvitation(call.app, call.principal.org, await manager(call), params.invitation_ulid);
    return { status: 204 };
  },
});

export const memberOperations = [
  membersList,
  membersUpdate,
  membersDelete,
  invitationsList,
  invitationsCreate,
  invitationsDelete,
];
