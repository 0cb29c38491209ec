// What the service publishes as the OAuth 2.1 authorization server of its own /mcp resource: the
// protected resource metadata (RFC 9728), the authorization server metadata (RFC 8414), and the
// scopes, which are abilities one to one.
import { ABILITIES, type Ability } from '../auth/abilities.js';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';

export const MCP_RESOURCE_PATH = '/mcp';
export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/oauth/token';
export const REVOKE_PATH = '/oauth/revoke';
export const REGISTER_PATH = '/oauth/register';
export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const PRM_PATH = '/.well-known/oauth-protected-resource';

/**
 * The scopes a client may ask for: the abilities the MCP tools need (token, member, wallet-top-up
 * and webhook management are not exposed as tools), mcp.access first. A grant always holds
 * mcp.access; the rest are what the person ticks, never beyond their role.
 */
/** Abilities that are not tools' and are never granted to an assistant. */
const NOT_FOR_ASSISTANTS: ReadonlySet<Ability> = new Set([
  'api.tokens.manage',
  'members.manage',
  'wallet.manage',
  'webhooks.manage',
]);
export const OAUTH_SCOPES: readonly Ability[] = [
  'mcp.access',
  ...ABILITIES.filter((a) => a !== 'mcp.access' && !NOT_FOR_ASSISTANTS.has(a)),
];

/** Lifetimes: the access token (the api_tokens row's expires_at), the refresh token, the code. */
export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_DAYS = 30;
export const CODE_SECONDS = 60;

/** The issuer identifier: the API's public base URL (PUBLIC_API_URL or the listener). */
export function issuer(app: AppContext): string {
  return apiBaseUrl(app.config, app.apiPort());
}

/** The canonical URI of the /mcp resource (RFC 8707): what tokens are bound to. */
export function resourceUri(app: AppContext): string {
  return `${issuer(app)}${MCP_RESOURCE_PATH}`;
}

/** The protected resource metadata of /mcp (RFC 9728 section 2). */
export function protectedResourceMetadata(app: AppContext) {
  return {
    resource: resourceUri(app),
    authorization_servers: [issuer(app)],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'QR code service (MCP)',
    resource_documentation: `${issuer(app)}/docs`,
  };
}

/** Where the protected resource metadata of /mcp is (RFC 9728 section 3.1: the path after the well-known part). */
function protectedResourceMetadataUrl(app: AppContext): string {
  return `${issuer(app)}${PRM_PATH}${MCP_RESOURCE_PATH}`;
}

/** The authorization server metadata (RFC 8414 section 2). */
export function authorizationServerMetadata(app: AppContext) {
  const base = issuer(app);
  return {
    issuer: base,
    authorization_endpoint: `${base}${AUTHORIZE_PATH}`,
    token_endpoint: `${base}${TOKEN_PATH}`,
    revocation_endpoint: `${base}${REVOKE_PATH}`,
    registration_endpoint: `${base}${REGISTER_PATH}`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${base}/docs`,
  };
}

/** The WWW-Authenticate challenge of an unauthenticated /mcp call (RFC 9728 section 5.1, RFC 6750). */
export function bearerChallenge(app: AppContext, error?: { code: string; description: string }): string {
  const parts = [`resource_metadata="${protectedResourceMetadataUrl(app)}"`, `scope="${OAUTH_SCOPES.join(' ')}"`];
  if (error) parts.push(`error="${error.code}"`, `error_description="${error.description.replace(/["\\]/g, '')}"`);
  return `Bearer ${parts.join(', ')}`;
}
