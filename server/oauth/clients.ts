// OAuth clients: Client ID Metadata Documents (the client id is an https URL whose JSON the service
// fetches, under the webhooks' SSRF rules and limits, and caches for as long as its HTTP caching
// headers allow) and Dynamic Client Registration (RFC 7591) for clients that cannot host one,
// rate-limited per client address. Only public
// clients (token_endpoint_auth_method "none", PKCE) are registered. Redirect URIs are compared
// exactly, except that a loopback http redirect may use any port (OAuth 2.1 section 8.4.2).
import fs from 'node:fs';
import CachePolicy from 'http-cache-semantics';
import type { AppContext } from '../context.js';
import { newSecret } from '../auth/principal.js';
import type { JsonSchema } from '../schemas/validation.js';
import { requestOnce, TargetPolicy } from '../webhooks/target.js';
import { OAuthError } from './errors.js';

export interface OAuthClient {
  clientId: string;
  kind: 'dcr' | 'cimd';
  name: string | null;
  redirectUris: string[];
  clientUri: string | null;
}

interface ClientMetadata {
  client_id?: string;
  client_name?: string;
  client_uri?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  response_types?: string[];
  scope?: string;
  client_secret?: unknown;
}

/** A Client ID Metadata Document is at most this large (the draft's suggested 5 KB). */
const CIMD_MAX_BYTES = 5 * 1024;
/** How long a fetched document is used when its answer says nothing about caching. */
export const CIMD_CACHE_SECONDS = 3600;
/** The longest a fetched document is used, whatever its answer allows. */
export const CIMD_MAX_CACHE_SECONDS = 24 * 3600;

/**
 * How long a metadata document's answer may be used, in ms, as RFC 9111 says for a shared cache
 * (the service keeps one document for every user): max-age, s-maxage, Expires, Age, no-store,
 * no-cache and private are honoured (by http-cache-semantics); an answer with neither
 * Cache-Control nor Expires is kept CIMD_CACHE_SECONDS; never more than CIMD_MAX_CACHE_SECONDS.
 */
function metadataFreshMs(url: string, headers: Record<string, string | string[] | undefined>): number {
  if (headers['cache-control'] === undefined && headers.expires === undefined && headers.pragma === undefined)
    return CIMD_CACHE_SECONDS * 1000;
  const policy = new CachePolicy(
    { url, method: 'GET', headers: { accept: 'application/json' } },
    { status: 200, headers },
    { shared: true, cacheHeuristic: 0, immutableMinTimeToLive: 0 },
  );
  return policy.storable() ? Math.min(Math.max(0, policy.timeToLive()), CIMD_MAX_CACHE_SECONDS * 1000) : 0;
}

const uriList = { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 2000 } };

/** Client metadata as both registration paths accept it (RFC 7591 section 2); other members are kept out. */
export const clientMetadataSchema: JsonSchema = {
  $id: 'oauth.client_metadata',
  type: 'object',
  required: ['redirect_uris'],
  properties: {
    client_id: { type: 'string', maxLength: 2000 },
    redirect_uris: uriList,
    client_name: { type: 'string', minLength: 1, maxLength: 200 },
    client_uri: { type: 'string', maxLength: 2000 },
    logo_uri: { type: 'string', maxLength: 2000 },
    token_endpoint_auth_method: { type: 'string', maxLength: 100 },
    grant_types: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 100 } },
    response_types: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 100 } },
    scope: { type: 'string', maxLength: 2000 },
    software_id: { type: 'string', maxLength: 200 },
    software_version: { type: 'string', maxLength: 200 },
  },
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function isLoopbackHttp(u: URL): boolean {
  return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
}

/**
 * Whether a redirect URI may be registered: https, http on a loopback host (native apps), or a
 * private-use scheme with a dot (RFC 8252 section 7.1, e.g. com.example.app:/cb); never a fragment.
 */
function redirectUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI.`;
  }
  if (u.hash || uri.includes('#')) return `${uri} has a fragment.`;
  if (u.protocol === 'https:' || isLoopbackHttp(u)) return null;
  if (u.protocol === 'http:') return `${uri}: http is allowed only on a loopback host (127.0.0.1, [::1], localhost).`;
  if (/^[a-z][a-z0-9+-]*\.[a-z0-9.+-]+:$/i.test(u.protocol)) return null;
  return `${uri}: use https, a loopback http address or a private-use scheme such as com.example.app:.`;
}

/**
 * Whether the redirect_uri of a request is one of the client's: the same string, or for a loopback
 * http redirect the same URI on any port.
 */
export function redirectUriMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  let g: URL;
  try {
    g = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackHttp(g)) return false;
  const withoutPort = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    try {
      const u = new URL(r);
      return isLoopbackHttp(u) && withoutPort(u) === withoutPort(g) && !g.username && !g.password;
    } catch {
      return false;
    }
  });
}

/**
 * Whether a client_id names a metadata document: any URL does (and must then be an https URL with
 * a path, per the CIMD draft); registered clients' ids are not URLs.
 */
function isMetadataDocumentId(clientId: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(clientId);
}

function metadataProblems(meta: ClientMetadata): string | null {
  const auth = meta.token_endpoint_auth_method ?? 'none';
  if (auth !== 'none')
    return `token_endpoint_auth_method ${auth} is not supported: only public clients ("none") with PKCE.`;
  if (meta.client_secret !== undefined) return 'A public client has no client_secret.';
  for (const g of meta.grant_types ?? []) {
    if (g !== 'authorization_code' && g !== 'refresh_token') return `grant_type ${g} is not supported.`;
  }
  for (const r of meta.response_types ?? []) if (r !== 'code') return `response_type ${r} is not supported.`;
  if (meta.client_uri) {
    try {
      if (new URL(meta.client_uri).protocol !== 'https:') return 'client_uri must be an https URL.';
    } catch {
      return 'client_uri must be an https URL.';
    }
  }
  return null;
}

function checkMetadata(app: AppContext, raw: unknown, invalid: (msg: string) => OAuthError): ClientMetadata {
  let meta: ClientMetadata;
  try {
    meta = app.validators.check<ClientMetadata>(clientMetadataSchema, 'body', raw);
  } catch (err) {
    throw invalid(`The client metadata is invalid: ${(err as Error).message}`);
  }
  for (const uri of meta.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  const problem = metadataProblems(meta);
  if (problem) throw invalid(problem);
  return meta;
}

interface ClientRow {
  client_id: string;
  kind: 'dcr' | 'cimd';
  metadata: ClientMetadata;
  fetched_at: Date;
  fresh_until: Date | null;
}

function toClient(row: ClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    kind: row.kind,
    name: row.metadata.client_name ?? null,
    redirectUris: row.metadata.redirect_uris,
    clientUri: row.metadata.client_uri ?? null,
  };
}

/** Registers a client (RFC 7591 section 3.1); at most OAUTH_REGISTRATIONS_PER_HOUR per address. */
export async function registerClient(app: AppContext, raw: unknown, address: string) {
  const now = app.clock.now();
  const meta = checkMetadata(app, raw, (m) => new OAuthError('invalid_client_metadata', m));
  if (meta.client_id !== undefined)
    throw new OAuthError('invalid_client_metadata', 'client_id is assigned by the server.');
  const since = new Date(now.getTime() - 3600_000);
  const from = address.slice(0, 100);
  const clientId = `dcr_${newSecret(32)}`;
  const stored: ClientMetadata = {
    redirect_uris: meta.redirect_uris,
    ...(meta.client_name ? { client_name: meta.client_name } : {}),
    ...(meta.client_uri ? { client_uri: meta.client_uri } : {}),
    ...(meta.scope ? { scope: meta.scope } : {}),
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
  // Registrations from one address are counted and added one at a time (a transaction-scoped
  // advisory lock on the address), so concurrent requests never get past the limit together.
  await app.db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtextextended('oauth-dcr:' || ?, 0))`, [from]);
    const registered = (await trx('oauth_clients')
      .where({ kind: 'dcr', registered_from: from })
      .andWhere('created_at', '>', since)
      .orderBy('created_at')
      .select('created_at')) as { created_at: Date }[];
    const limit = app.config.oauthRegistrationsPerHour;
    if (registered.length >= limit) {
      // Room comes back when the oldest registration that counts leaves the hour.
      const oldest = registered[registered.length - limit].created_at.getTime();
      const retryAfter = Math.max(1, Math.ceil((oldest + 3600_000 - now.getTime()) / 1000));
      throw new OAuthError(
        'temporarily_unavailable',
        `At most ${limit} client registrations per hour from one address; try again in ${retryAfter} s.`,
        429,
        { 'Retry-After': String(retryAfter) },
      );
    }
    await trx('oauth_clients').insert({
      client_id: clientId,
      kind: 'dcr',
      metadata: stored,
      registered_from: from,
      fetched_at: now,
      created_at: now,
    });
  });
  return { client_id: clientId, client_id_issued_at: Math.floor(now.getTime() / 1000), ...stored };
}

let caCache: { file: string; pem: string } | null = null;
function extraCa(app: AppContext): string | undefined {
  const file = app.config.oauthClientMetadataCaFile;
  if (!file) return undefined;
  if (caCache?.file !== file) caCache = { file, pem: fs.readFileSync(file, 'utf8') };
  return caCache.pem;
}

function cimdUrlProblem(clientId: string): string | null {
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    return 'The client_id is not a URL.';
  }
  if (u.protocol !== 'https:') return 'A client_id URL must use https.';
  if (u.pathname === '/' || u.pathname === '') return 'A client_id URL must have a path.';
  if (u.hash || u.username || u.password) return 'A client_id URL has no fragment and no user information.';
  if (/\/\.\.?(\/|$)/.test(clientId.slice(u.origin.length))) return 'A client_id URL has no dot segments.';
  return null;
}

/** Fetches a Client ID Metadata Document under the webhooks' SSRF rules, time limit and size limit. */
async function fetchMetadataDocument(
  app: AppContext,
  clientId: string,
): Promise<{ meta: ClientMetadata; freshMs: number }> {
  const invalid = (m: string) => new OAuthError('invalid_client', m);
  const problem = cimdUrlProblem(clientId);
  if (problem) throw invalid(problem);
  const outcome = await requestOnce(
    new URL(clientId),
    { method: 'GET', headers: { accept: 'application/json' } },
    {
      policy: new TargetPolicy(app.config.webhookAllowedTargets),
      timeoutMs: app.config.webhookTimeoutMs,
      maxBytes: CIMD_MAX_BYTES,
      ca: extraCa(app),
    },
  );
  if (outcome.error) throw invalid(`The client metadata document could not be fetched: ${outcome.error}`);
  if (outcome.truncated) throw invalid(`The client metadata document is larger than ${CIMD_MAX_BYTES} bytes.`);
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(outcome.contentType)) {
    throw invalid('The client metadata document is not served as application/json.');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(outcome.body.toString('utf8'));
  } catch {
    throw invalid('The client metadata document is not JSON.');
  }
  const meta = checkMetadata(app, doc, invalid);
  if (meta.client_id !== clientId) throw invalid('The document’s client_id must be the URL it is served from.');
  return { meta, freshMs: metadataFreshMs(clientId, outcome.headers) };
}

/** The client of a client_id: a registered one, or a metadata document (cached, fetched when stale). */
export async function resolveClient(app: AppContext, clientId: string): Promise<OAuthClient> {
  if (!clientId || clientId.length > 2000) throw new OAuthError('invalid_client', 'client_id is missing or too long.');
  const row = (await app.db('oauth_clients').where({ client_id: clientId }).first()) as ClientRow | undefined;
  if (!isMetadataDocumentId(clientId)) {
    if (!row || row.kind !== 'dcr') throw new OAuthError('invalid_client', 'Unknown client_id.');
    return toClient(row);
  }
  const now = app.clock.now();
  const freshUntil = row && (row.fresh_until ?? new Date(row.fetched_at.getTime() + CIMD_CACHE_SECONDS * 1000));
  if (row && freshUntil && now < freshUntil) return toClient(row);
  const { meta, freshMs } = await fetchMetadataDocument(app, clientId);
  const fresh = {
    client_id: clientId,
    kind: 'cimd' as const,
    metadata: meta,
    fetched_at: now,
    fresh_until: new Date(now.getTime() + freshMs),
  };
  await app.db('oauth_clients').insert(fresh).onConflict('client_id').merge(['metadata', 'fetched_at', 'fresh_until']);
  return toClient(fresh);
}
