// Confirmations of guarded tools, kept in Postgres (sql/0006_mcp_confirmations.sql) so that every
// server process agrees. An id is bound to the organization, the token, the tool and a canonical
// hash of the arguments; it is single use and expires CONFIRMATION_TTL_SECONDS after it was issued
// (by the application clock).
import { hashSecret, newSecret, type Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { canonicalHash } from '../schemas/canonical-json.js';

export const CONFIRMATION_TTL_SECONDS = 300;
const ID_PREFIX = 'cnf_';

export interface IssuedConfirmation {
  confirmation_id: string;
  expires_at: string;
}

export async function issueConfirmation(
  app: AppContext,
  principal: Principal,
  tool: string,
  args: Record<string, unknown>,
): Promise<IssuedConfirmation> {
  const now = app.clock.now();
  const id = ID_PREFIX + newSecret(40);
  const expiresAt = new Date(now.getTime() + CONFIRMATION_TTL_SECONDS * 1000);
  // Housekeeping of this organization's long-dead confirmations rides along with each new one.
  await app
    .db('mcp_confirmations')
    .where({ org_id: principal.org.id })
    .andWhere('expires_at', '<', new Date(now.getTime() - 3600_000))
    .delete();
  await app.db('mcp_confirmations').insert({
    id_hash: hashSecret(id),
    org_id: principal.org.id,
    token_id: principal.token.id,
    tool,
    args_hash: canonicalHash(args),
    created_at: now,
    expires_at: expiresAt,
  });
  return { confirmation_id: id, expires_at: expiresAt.toISOString() };
}

interface ConfirmationRow {
  org_id: number;
  token_id: number;
  tool: string;
  args_hash: string;
  expires_at: Date;
  used_at: Date | null;
}

function refuse(message: string): ApiError {
  return ApiError.field('confirmation_id', message);
}

/**
 * Uses up a confirmation for exactly this organization, token, tool and arguments, or throws 422
 * saying why not. The update is atomic, so two concurrent calls cannot both consume one id.
 */
export async function consumeConfirmation(
  app: AppContext,
  principal: Principal,
  tool: string,
  confirmationId: string,
  args: Record<string, unknown>,
): Promise<void> {
  const now = app.clock.now();
  const idHash = hashSecret(confirmationId);
  const argsHash = canonicalHash(args);
  const used = await app
    .db('mcp_confirmations')
    .where({ id_hash: idHash, org_id: principal.org.id, token_id: principal.token.id, tool, args_hash: argsHash })
    .whereNull('used_at')
    .andWhere('expires_at', '>', now)
    .update({ used_at: now });
  if (used === 1) return;

  const row = (await app.db('mcp_confirmations').where({ id_hash: idHash }).first()) as ConfirmationRow | undefined;
  // Another organization's id answers like an unknown one.
  if (!row || row.org_id !== principal.org.id) {
    throw refuse('Unknown confirmation_id. Call the tool without confirm to get a preview and a confirmation_id.');
  }
  if (row.token_id !== principal.token.id) {
    throw refuse(
      'This confirmation_id was issued to another token; only the token that asked for the preview can confirm it.',
    );
  }
  if (row.tool !== tool) throw refuse(`This confirmation_id was issued for ${row.tool}, not ${tool}.`);
  if (row.used_at)
    throw refuse('This confirmation_id has already been used; call the tool without confirm for a new preview.');
  if (row.expires_at <= now) {
    throw refuse(
      `This confirmation_id expired (confirmations are valid ${CONFIRMATION_TTL_SECONDS} seconds); call the tool without confirm for a new preview.`,
    );
  }
  if (row.args_hash !== argsHash) {
    throw refuse(
      'The arguments differ from the ones previewed; send exactly the previewed arguments with confirm: true, or ask for a new preview.',
    );
  }
  // Every binding matched, so a concurrent call consumed it between the update and the read.
  throw refuse('This confirmation_id has already been used; call the tool without confirm for a new preview.');
}
