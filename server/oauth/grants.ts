// Grants: a person's consent to one client in one organization. The authorization code (single
// use, PKCE S256, bound to client, redirect URI and resource) is exchanged for an access token and
// a refresh token. The access token is the secret of one api_tokens row (audience = the /mcp
// resource), so it is authenticated, admitted, metered, listed and revoked like any token; every
// refresh rotates both secrets, and a refresh token or code presented a second time revokes the
// whole grant (OAuth 2.1 sections 4.1.3 and 4.3.1).
import crypto from 'node:crypto';
import { ROLE_ABILITIES, type Ability, type Role } from '../auth/abilities.js';
import { hashSecret, newSecret } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { OAuthError } from './errors.js';
import { ACCESS_TOKEN_SECONDS, CODE_SECONDS, OAUTH_SCOPES, REFRESH_TOKEN_DAYS } from './metadata.js';
import type { OAuthClient } from './clients.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** What the person granted on the consent page, before it becomes a code. */
export interface Consent {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  orgId: number;
  userId: number;
  role: Role;
  /** The abilities ticked; narrowed here to the role's and the scopes'. */
  abilities: string[];
}

/** The abilities a grant holds: those ticked that are scopes and the role holds, mcp.access always. */
export function grantedAbilities(role: Role, ticked: readonly string[]): Ability[] {
  const roleHolds = new Set(ROLE_ABILITIES[role]);
  return OAUTH_SCOPES.filter((a) => roleHolds.has(a) && (a === 'mcp.access' || ticked.includes(a)));
}

/** Issues a single-use authorization code for the consent; returns the code. */
export async function issueCode(app: AppContext, consent: Consent): Promise<string> {
  const code = newSecret(48);
  const now = app.clock.now();
  await app.db('oauth_codes').insert({
    code_hash: hashSecret(code),
    client_id: consent.client.clientId,
    org_id: consent.orgId,
    user_id: consent.userId,
    abilities: grantedAbilities(consent.role, consent.abilities),
    redirect_uri: consent.redirectUri,
    code_challenge: consent.codeChallenge,
    resource: consent.resource,
    expires_at: new Date(now.getTime() + CODE_SECONDS * 1000),
    created_at: now,
  });
  return code;
}

/** PKCE S256 (RFC 7636 section 4.6): BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const given = Buffer.from(challenge);
  return computed.length === given.length && crypto.timingSafeEqual(computed, given);
}

/** Revokes a grant: its token row (so the access token at once) and with it every refresh token. */
async function revokeGrant(app: AppContext, trxOrDb: AppContext['db'], tokenId: number): Promise<void> {
  const [row] = (await trxOrDb('api_tokens')
    .where({ id: tokenId })
    .whereNull('revoked_at')
    .update({ revoked_at: app.clock.now() })
    .returning('org_id')) as { org_id: number }[];
  if (row) app.principals.forgetOrg(Number(row.org_id));
}

interface CodeRow {
  client_id: string;
  org_id: number;
  user_id: number;
  abilities: string[];
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  expires_at: Date;
  used_at: Date | null;
  token_id: number | null;
}

function secrets() {
  return { access: newSecret(48), refresh: newSecret(48) };
}

async function storeRefresh(db: AppContext['db'], app: AppContext, tokenId: number, secret: string) {
  const now = app.clock.now();
  await db('oauth_refresh_tokens').insert({
    token_id: tokenId,
    secret_hash: hashSecret(secret),
    expires_at: new Date(now.getTime() + REFRESH_TOKEN_DAYS * 86_400_000),
    created_at: now,
  });
}

function tokenResponse(tokenId: number, s: { access: string; refresh: string }, abilities: string[]): TokenResponse {
  return {
    access_token: `${tokenId}|${s.access}`,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: `${tokenId}.${s.refresh}`,
    scope: abilities.join(' '),
  };
}

/** grant_type=authorization_code (OAuth 2.1 section 4.1.3). */
export async function exchangeCode(
  app: AppContext,
  input: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string; resource?: string },
): Promise<TokenResponse> {
  const now = app.clock.now();
  const invalid = (m: string) => new OAuthError('invalid_grant', m);
  let reused: number | null = null;
  const answer = await app.db.transaction(async (trx) => {
    const row = (await trx('oauth_codes')
      .where({ code_hash: hashSecret(input.code) })
      .forUpdate()
      .first()) as CodeRow | undefined;
    if (!row) throw invalid('The authorization code is unknown.');
    if (row.used_at) {
      reused = row.token_id;
      return null;
    }
    if (row.client_id !== input.clientId) throw invalid('The authorization code was issued to another client.');
    if (row.expires_at <= now) throw invalid('The authorization code has expired.');
    if (input.redirectUri !== row.redirect_uri) {
      throw invalid('redirect_uri must be exactly the one of the authorization request.');
    }
    if (input.resource !== undefined && input.resource !== row.resource) {
      throw new OAuthError('invalid_target', 'resource must be the one of the authorization request.');
    }
    if (!pkceMatches(input.codeVerifier, row.code_challenge))
      throw invalid('The code_verifier does not match the code_challenge.');
    const client = (await trx('oauth_clients').where({ client_id: row.client_id }).first('metadata')) as
      { metadata: { client_name?: string } } | undefined;
    const name = client?.metadata.client_name ?? new URL(row.redirect_uri).host ?? row.client_id;
    const s = secrets();
    const [token] = (await trx('api_tokens')
      .insert({
        org_id: row.org_id,
        user_id: row.user_id,
        name: `Connected app: ${name}`.slice(0, 255),
        abilities: row.abilities,
        secret_hash: hashSecret(s.access),
        expires_at: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
        created_at: now,
        audience: row.resource,
        oauth_client_id: row.client_id,
        oauth_client_name: client?.metadata.client_name ?? null,
        oauth_redirect_uri: row.redirect_uri,
      })
      .returning('id')) as { id: number }[];
    const tokenId = Number(token.id);
    await trx('oauth_codes')
      .where({ code_hash: hashSecret(input.code) })
      .update({ used_at: now, token_id: tokenId });
    await storeRefresh(trx, app, tokenId, s.refresh);
    return tokenResponse(tokenId, s, row.abilities);
  });
  if (answer) return answer;
  // A code used twice: whoever holds it is not to be trusted, nor what it already gave.
  if (reused !== null) await revokeGrant(app, app.db, reused);
  throw invalid('The authorization code was already used; the grant it produced is revoked.');
}

/** grant_type=refresh_token (OAuth 2.1 section 4.3): rotates both tokens; a reused one revokes the grant. */
export async function refreshGrant(
  app: AppContext,
  input: { refreshToken: string; clientId: string; scope?: string; resource?: string },
): Promise<TokenResponse> {
  const now = app.clock.now();
  const invalid = (m: string) => new OAuthError('invalid_grant', m);
  const m = /^(\d{1,15})\.([A-Za-z0-9]{48})$/.exec(input.refreshToken);
  if (!m) throw invalid('The refresh token is malformed.');
  let reusedGrant: number | null = null;
  const answer = await app.db.transaction(async (trx) => {
    const row = (await trx('oauth_refresh_tokens as r')
      .join('api_tokens as t', 't.id', 'r.token_id')
      .where({ 'r.secret_hash': hashSecret(m[2]), 'r.token_id': Number(m[1]) })
      .forUpdate()
      .first(
        'r.id',
        'r.used_at',
        'r.expires_at',
        't.id as token_id',
        't.org_id',
        't.revoked_at',
        't.oauth_client_id',
        't.abilities',
        't.audience',
      )) as
      | {
          id: number;
          used_at: Date | null;
          expires_at: Date;
          token_id: number;
          org_id: number;
          revoked_at: Date | null;
          oauth_client_id: string;
          abilities: string[];
          audience: string;
        }
      | undefined;
    if (!row || row.revoked_at) throw invalid('The refresh token is invalid or its grant was revoked.');
    if (row.oauth_client_id !== input.clientId) throw invalid('The refresh token was issued to another client.');
    if (row.used_at) {
      reusedGrant = Number(row.token_id);
      return null;
    }
    if (row.expires_at <= now) throw invalid('The refresh token has expired.');
    if (input.resource !== undefined && input.resource !== row.audience) {
      throw new OAuthError('invalid_target', 'resource must be the resource of the grant.');
    }
    let abilities = row.abilities;
    if (input.scope !== undefined) {
      const asked = input.scope.split(' ').filter(Boolean);
      const beyond = asked.filter((a) => !row.abilities.includes(a));
      if (beyond.length) throw new OAuthError('invalid_scope', `Not part of the grant: ${beyond.join(', ')}.`);
      abilities = row.abilities.filter((a) => a === 'mcp.access' || asked.includes(a));
    }
    const s = secrets();
    await trx('oauth_refresh_tokens').where({ id: row.id }).update({ used_at: now });
    await trx('api_tokens')
      .where({ id: row.token_id })
      .update({
        secret_hash: hashSecret(s.access),
        abilities,
        expires_at: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
      });
    await storeRefresh(trx, app, Number(row.token_id), s.refresh);
    return { orgId: Number(row.org_id), response: tokenResponse(Number(row.token_id), s, abilities) };
  });
  if (answer) {
    // The row's secret changed: this process's cached principal goes now, the others' on the NOTIFY.
    app.principals.forgetOrg(answer.orgId);
    return answer.response;
  }
  if (reusedGrant !== null) await revokeGrant(app, app.db, reusedGrant);
  throw invalid('The refresh token was already used; the whole grant is revoked.');
}

/**
 * Token revocation (RFC 7009): an access or refresh token of this client ends its whole grant.
 * An unknown or foreign token is answered 200 all the same (section 2.2).
 */
export async function revokeToken(app: AppContext, token: string, clientId: string): Promise<void> {
  const access = /^(\d{1,15})\|([A-Za-z0-9]{48})$/.exec(token);
  const refresh = /^(\d{1,15})\.([A-Za-z0-9]{48})$/.exec(token);
  let tokenId: number | null = null;
  if (access) {
    const row = (await app
      .db('api_tokens')
      .where({ id: Number(access[1]), oauth_client_id: clientId })
      .first('id', 'secret_hash')) as { id: number; secret_hash: Buffer } | undefined;
    if (row && crypto.timingSafeEqual(row.secret_hash, hashSecret(access[2]))) tokenId = Number(row.id);
  } else if (refresh) {
    const row = (await app
      .db('oauth_refresh_tokens as r')
      .join('api_tokens as t', 't.id', 'r.token_id')
      .where({ 'r.secret_hash': hashSecret(refresh[2]), 't.id': Number(refresh[1]), 't.oauth_client_id': clientId })
      .first('t.id')) as { id: number } | undefined;
    if (row) tokenId = Number(row.id);
  }
  if (tokenId !== null) await revokeGrant(app, app.db, tokenId);
}
