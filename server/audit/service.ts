// The audit log: who did what to an organization outside the API's own resources (wallet
// top-ups, members and invitations). Entries are written in the transaction of the change.
import type { Knex } from 'knex';
import { fastUlid } from '../ids.js';

export interface AuditEntry {
  orgId: number;
  /** The acting dashboard user, or null for an operator (qrctl). */
  actorUserId: number | null;
  /** How the actor is named in the log: the user's email or `qrctl`. */
  actor: string;
  action:
    | 'wallet.top_up'
    | 'member.role_changed'
    | 'member.removed'
    | 'member.joined'
    | 'invitation.created'
    | 'invitation.revoked';
  details: Record<string, unknown>;
  at: Date;
}

export async function recordAudit(db: Knex | Knex.Transaction, e: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    ulid: fastUlid(e.at.getTime()),
    org_id: e.orgId,
    actor_user_id: e.actorUserId,
    actor: e.actor,
    action: e.action,
    details: JSON.stringify(e.details),
    created_at: e.at,
  });
}
