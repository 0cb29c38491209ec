// API tokens: creation (secret shown once, stored hashed), listing, revocation. Scoped by
// organization (first argument) and user in every query.
import type { Knex } from 'knex';
import { ABILITIES, missingForGrant, WILDCARD, type Ability } from '../auth/abilities.js';
import { hashSecret, newSecret, type OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';

interface TokenRow {
  id: number;
  org_id: number;
  user_id: number;
  name: string;
  abilities: string[];
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  /** OAuth grants (server/oauth/): the client that holds the token. */
  oauth_client_id?: string | null;
  oauth_client_name?: string | null;
  oauth_redirect_uri?: string | null;
}

export interface CreatedToken {
  /** The plain-text secret, `<id>|<random>`; it is not stored and cannot be shown again. */
  secret: string;
  token: ReturnType<typeof renderToken>;
}

export interface CreateTokenInput {
  userId: number;
  name: string;
  abilities: string[];
  expiresAt: Date | null;
}

function renderToken(r: TokenRow) {
  return {
    id: r.id,
    name: r.name,
    abilities: r.abilities,
    last_used_at: r.last_used_at?.toISOString() ?? null,
    expires_at: r.expires_at?.toISOString() ?? null,
    created_at: r.created_at?.toISOString() ?? null,
    // A connected app (an OAuth grant): expires_at is its current access token's; it renews itself
    // until it is revoked here or by the app.
    connected_app: r.oauth_client_id
      ? {
          client_id: r.oauth_client_id,
          client_name: r.oauth_client_name ?? null,
          redirect_host: r.oauth_redirect_uri ? new URL(r.oauth_redirect_uri).host || null : null,
        }
      : null,
  };
}

function normalizeAbilities(abilities: string[]): string[] {
  if (abilities.includes(WILDCARD)) return [WILDCARD];
  const unknown = abilities.filter((a) => !(ABILITIES as readonly string[]).includes(a));
  if (unknown.length) throw ApiError.field('abilities', `Unknown abilities: ${unknown.join(', ')}.`);
  return ABILITIES.filter((a) => abilities.includes(a));
}

export async function createToken(
  app: AppContext,
  db: Knex | Knex.Transaction,
  org: OrgRecord,
  input: CreateTokenInput,
): Promise<CreatedToken> {
  const now = app.clock.now();
  if (input.expiresAt && input.expiresAt <= now) throw ApiError.field('expires_at', 'Must be in the future.');
  const secret = newSecret();
  const [row] = (await db('api_tokens')
    .insert({
      org_id: org.id,
      user_id: input.userId,
      name: input.name,
      abilities: normalizeAbilities(input.abilities),
      secret_hash: hashSecret(secret),
      expires_at: input.expiresAt,
      created_at: now,
    })
    .returning('*')) as TokenRow[];
  return { secret: `${row.id}|${secret}`, token: renderToken(row) };
}

/** Creates a token on behalf of a caller, who can never grant an ability it does not hold. */
export async function createTokenAsCaller(
  app: AppContext,
  org: OrgRecord,
  caller: { userId: number; abilities: ReadonlySet<Ability> },
  input: { name: string; abilities: string[]; expiresAt: Date | null },
): Promise<CreatedToken> {
  const missing = missingForGrant(caller.abilities, input.abilities);
  if (missing.length) {
    throw ApiError.forbidden(missing[0], `You cannot grant abilities you do not hold: ${missing.join(', ')}.`);
  }
  return createToken(app, app.db, org, { userId: caller.userId, ...input });
}

export async function listTokens(db: Knex, org: OrgRecord, userId: number) {
  const rows = (await db('api_tokens')
    .where({ org_id: org.id, user_id: userId })
    .whereNull('revoked_at')
    .orderBy('id')) as TokenRow[];
  return rows.map(renderToken);
}

/**
 * Revokes one of the user's tokens in the organization; anyone else's token is not found. A caller
 * may revoke only a token whose abilities it holds itself (the rule of creation), and always itself.
 */
export async function revokeToken(
  app: AppContext,
  org: OrgRecord,
  /** tokenId: the calling token, null for a dashboard session. */
  caller: { userId: number; tokenId: number | null; abilities: ReadonlySet<Ability> },
  tokenId: number,
): Promise<void> {
  await app.db.transaction(async (trx) => {
    const target = (await trx('api_tokens')
      .where({ id: tokenId, org_id: org.id, user_id: caller.userId })
      .whereNull('revoked_at')
      .forUpdate()
      .first('id', 'abilities')) as Pick<TokenRow, 'id' | 'abilities'> | undefined;
    if (!target) throw ApiError.notFound('token');
    const missing = target.id === caller.tokenId ? [] : missingForGrant(caller.abilities, target.abilities);
    if (missing.length) {
      throw ApiError.forbidden(
        missing[0],
        `You cannot revoke a token with abilities you do not hold: ${missing.join(', ')}. ` +
          'Revoke it with a token that holds all of its abilities.',
      );
    }
    await trx('api_tokens').where({ id: target.id }).update({ revoked_at: app.clock.now() });
  });
  app.principals.forgetOrg(org.id);
}
