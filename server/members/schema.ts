import { ROLES } from '../auth/abilities.js';
import { dateTime, objectSchema, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';
import type { Role } from '../auth/abilities.js';

const role: JsonSchema = { type: 'string', enum: [...ROLES] };

export const Member: JsonSchema = {
  $id: 'Member',
  type: 'object',
  required: ['user_ulid', 'email', 'role', 'has_password'],
  properties: {
    user_ulid: { type: 'string' },
    email: { type: 'string' },
    name: { type: ['string', 'null'] },
    role,
    has_password: { type: 'boolean', description: 'False until the person has set a password.' },
    joined_at: dateTime,
  },
};

export const Invitation: JsonSchema = {
  $id: 'Invitation',
  type: 'object',
  required: ['ulid', 'email', 'role', 'expires_at'],
  properties: {
    ulid: { type: 'string' },
    email: { type: 'string' },
    role,
    created_at: dateTime,
    expires_at: dateTime,
    url: { type: 'string', description: 'The one-time link; returned once, at creation.' },
  },
};

export interface MemberParams {
  user_ulid: string;
}
export const memberParams = objectSchema('members.params', { user_ulid: ulid }, ['user_ulid']);

export interface InvitationParams {
  invitation_ulid: string;
}
export const invitationParams = objectSchema('invitations.params', { invitation_ulid: ulid }, ['invitation_ulid']);

export interface ChangeRoleBody {
  role: Role;
}
export const changeRoleBody = objectSchema('members.update.body', { role }, ['role']);

export interface InviteBody {
  email: string;
  role: Role;
}
export const inviteBody = objectSchema(
  'invitations.create.body',
  { email: { type: 'string', format: 'email', maxLength: 254 }, role },
  ['email', 'role'],
);
