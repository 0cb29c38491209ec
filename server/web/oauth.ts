// The OAuth 2.1 authorization server of the /mcp resource, on the API listener: discovery
// (RFC 9728, RFC 8414), the authorization endpoint (the dashboard's sign-in, then a consent page),
// the token endpoint (authorization_code with PKCE S256, refresh_token), revocation (RFC 7009) and
// Dynamic Client Registration (RFC 7591). An adapter: the rules are in server/oauth/ (clients.ts,
// grants.ts, metadata.ts).
import type Router from '@koa/router';
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { signIn, userOrganizations } from '../accounts/service.js';
import { csrfMatches, csrfTokenFor, resolveSession, type SessionUser } from '../accounts/sessions.js';
import { ROLE_ABILITIES, type Role } from '../auth/abilities.js';
import { newSecret } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { readJsonBody } from '../http-common/body.js';
import type { RequestState } from '../http-common/middleware.js';
import { clientIp, trustList } from '../http-common/client-ip.js';
import { readCookie, setCookie } from './cookies.js';
import {
  clientMetadataSchema,
  redirectUriMatches,
  registerClient,
  resolveClient,
  type OAuthClient,
} from '../oauth/clients.js';
import { OAuthError } from '../oauth/errors.js';
import { exchangeCode, grantedAbilities, issueCode, refreshGrant, revokeToken } from '../oauth/grants.js';
import {
  AS_METADATA_PATH,
  AUTHORIZE_PATH,
  authorizationServerMetadata,
  issuer,
  MCP_RESOURCE_PATH,
  OAUTH_SCOPES,
  PRM_PATH,
  protectedResourceMetadata,
  REGISTER_PATH,
  resourceUri,
  REVOKE_PATH,
  TOKEN_PATH,
} from '../oauth/metadata.js';
import { consentPage, errorPage, signInPage, type OrgChoice } from './oauth-pages.js';

/** The parameters of an authorization request that the forms carry through unchanged. */
const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
] as const;

/** A form body (application/x-www-form-urlencoded) with a size limit; a repeated parameter is refused. */
async function readForm(ctx: Koa.Context, limit: number, repeatable: readonly string[] = []): Promise<URLSearchParams> {
  const type = ctx.get('Content-Type');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  } catch {
    throw new OAuthError('invalid_request', `The body could not be read (at most ${limit} bytes).`);
  }
  const form = new URLSearchParams(raw);
  for (const key of new Set(form.keys())) {
    if (!repeatable.includes(key) && form.getAll(key).length > 1) {
      throw new OAuthError('invalid_request', `${key} is given more than once.`);
    }
  }
  return form;
}

/** An authorization request that passed every check: what the pages and the code need. */
interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  scopes: string[];
  /** The request's parameters as received, for the forms. */
  params: Record<string, string>;
}

/** A refusal the client must hear about at its redirect URI (RFC 6749 section 4.1.2.1). */
class RedirectError extends Error {
  constructor(
    readonly redirectUri: string,
    readonly state: string | undefined,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

function withQuery(uri: string, values: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(values)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

export function mountOAuth(router: Router, app: AppContext): void {
  app.validators.compile(clientMetadataSchema, 'body');
  const trust = trustList(app.config.trustProxy);
  const address = (ctx: Koa.Context) =>
    clientIp(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, trust);

  /**
   * Checks an authorization request. The client and its redirect URI first: when either is wrong
   * the person sees an error page and nothing goes to the URI (OAuthError). Every later problem
   * goes back to the client (RedirectError).
   */
  async function checkRequest(get: (k: string) => string | null): Promise<AuthorizationRequest> {
    const params: Record<string, string> = {};
    for (const k of AUTHORIZE_PARAMS) {
      const v = get(k);
      if (v !== null) params[k] = v;
    }
    const client = await resolveClient(app, params.client_id ?? '');
    let redirectUri = params.redirect_uri;
    if (redirectUri === undefined) {
      if (client.redirectUris.length !== 1) {
        throw new OAuthError('invalid_request', 'redirect_uri is required: the client has several.');
      }
      redirectUri = client.redirectUris[0];
    } else if (!redirectUriMatches(client.redirectUris, redirectUri)) {
      throw new OAuthError('invalid_request', `redirect_uri ${redirectUri} is not one the client registered.`);
    }
    const state = params.state;
    const fail = (error: string, description: string) => new RedirectError(redirectUri, state, error, description);
    if (params.response_type !== 'code') throw fail('unsupported_response_type', 'response_type must be code.');
    if (!params.code_challenge || params.code_challenge_method !== 'S256') {
      throw fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method S256.');
    }
    if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) {
      throw fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters).');
    }
    const resource = params.resource ?? resourceUri(app);
    if (resource !== resourceUri(app)) {
      throw fail('invalid_target', `This server issues tokens for ${resourceUri(app)} only.`);
    }
    const asked = params.scope === undefined ? [...OAUTH_SCOPES] : params.scope.split(' ').filter(Boolean);
    const unknown = asked.filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
    if (unknown.length) throw fail('invalid_scope', `Unknown scopes: ${unknown.join(', ')}.`);
    const scopes = OAUTH_SCOPES.filter((s) => s === 'mcp.access' || asked.includes(s));
    return { client, redirectUri, state, codeChallenge: params.code_challenge, resource, scopes, params };
  }

  function redirectTo(ctx: Koa.Context, uri: string) {
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(uri);
    ctx.status = 303;
  }

  async function authorize(ctx: Koa.Context, run: () => Promise<void>) {
    (ctx.state as RequestState).route = AUTHORIZE_PATH;
    try {
      await run();
    } catch (err) {
      if (err instanceof RedirectError) {
        return redirectTo(
          ctx,
          withQuery(err.redirectUri, {
            error: err.error,
            error_description: err.description,
            state: err.state,
            iss: issuer(app),
          }),
        );
      }
      if (err instanceof OAuthError) return errorPage(ctx, err.error, err.description);
      throw err;
    }
  }

  function preCsrf(ctx: Koa.Context): string {
    let pre = readCookie(app, ctx, 'pre');
    if (!pre || !/^[A-Za-z0-9]{32}$/.test(pre)) {
      pre = newSecret(32);
      setCookie(app, ctx, 'pre', pre, 24 * 3600);
    }
    return csrfTokenFor(app, 'pre', pre);
  }

  async function showConsent(ctx: Koa.Context, req: AuthorizationRequest, session: SessionUser) {
    const memberships = await userOrganizations(app.db, session.userId);
    const orgs: OrgChoice[] = memberships.map((m) => ({
      ulid: m.ulid,
      name: m.name,
      role: m.role,
      grantable: ROLE_ABILITIES[m.role as Role].includes('mcp.access')
        ? grantedAbilities(m.role as Role, req.scopes)
        : [],
    }));
    consentPage(ctx, {
      client: req.client,
      redirectUri: req.redirectUri,
      params: req.params,
      csrf: session.csrfToken,
      email: session.email,
      orgs,
      requested: req.scopes,
    });
  }

  // GET /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp
  for (const path of [PRM_PATH, `${PRM_PATH}${MCP_RESOURCE_PATH}`]) {
    router.get(path, (ctx) => {
      (ctx.state as RequestState).route = path;
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = protectedResourceMetadata(app);
    });
  }

  // GET /.well-known/oauth-authorization-server
  router.get(AS_METADATA_PATH, (ctx) => {
    (ctx.state as RequestState).route = AS_METADATA_PATH;
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = authorizationServerMetadata(app);
  });

  // GET /oauth/authorize
  router.get(AUTHORIZE_PATH, (ctx) =>
    authorize(ctx, async () => {
      const query = new URLSearchParams(ctx.querystring);
      for (const k of AUTHORIZE_PARAMS) {
        if (query.getAll(k).length > 1) throw new OAuthError('invalid_request', `${k} is given more than once.`);
      }
      const req = await checkRequest((k) => query.get(k));
      const session = await resolveSession(app, readCookie(app, ctx, 'session'));
      if (!session) {
        return signInPage(ctx, {
          client: req.client,
          redirectUri: req.redirectUri,
          params: req.params,
          csrf: preCsrf(ctx),
        });
      }
      await showConsent(ctx, req, session);
    }),
  );

  // POST /oauth/authorize: the sign-in and consent forms
  router.post(AUTHORIZE_PATH, (ctx) =>
    authorize(ctx, async () => {
      const form = await readForm(ctx, 16 * 1024, ['abilities']);
      const req = await checkRequest((k) => form.get(k));
      const session = await resolveSession(app, readCookie(app, ctx, 'session'));
      const action = form.get('action');
      const given = form.get('csrf_token') ?? undefined;
      if (action === 'sign_in') {
        const pre = readCookie(app, ctx, 'pre');
        if (!pre || !csrfMatches(csrfTokenFor(app, 'pre', pre), given)) throw ApiError.csrfFailed();
        try {
          const started = await signIn(
            app,
            { email: form.get('email') ?? '', password: form.get('password') ?? '' },
            { address: address(ctx), userAgent: ctx.get('User-Agent') },
          );
          const now = app.clock.now();
          setCookie(app, ctx, 'session', started.secret, (started.expiresAt.getTime() - now.getTime()) / 1000);
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 401) throw err;
          const csrf = preCsrf(ctx);
          return signInPage(ctx, { ...req, params: req.params, csrf, error: err.message });
        }
        return redirectTo(ctx, `${AUTHORIZE_PATH}?${new URLSearchParams(req.params).toString()}`);
      }
      if (!session || !csrfMatches(session.csrfToken, given)) throw ApiError.csrfFailed();
      if (action === 'deny') {
        throw new RedirectError(
          req.redirectUri,
          req.state,
          'access_denied',
          'The person did not allow the connection.',
        );
      }
      if (action !== 'allow') throw new OAuthError('invalid_request', 'action must be sign_in, allow or deny.');
      const orgUlid = form.get('org_ulid') ?? '';
      const membership = (await userOrganizations(app.db, session.userId)).find((m) => m.ulid === orgUlid);
      const role = membership?.role as Role | undefined;
      if (!membership || !role || !ROLE_ABILITIES[role].includes('mcp.access')) {
        throw new OAuthError('access_denied', 'Choose an organization in which your role may use the tool interface.');
      }
      const org = await app.db('organizations').where({ ulid: orgUlid }).first('id');
      const ticked = form.getAll('abilities').filter((a) => req.scopes.includes(a));
      const code = await issueCode(app, {
        client: req.client,
        redirectUri: req.redirectUri,
        codeChallenge: req.codeChallenge,
        resource: req.resource,
        orgId: Number(org.id),
        userId: session.userId,
        role,
        abilities: ticked,
      });
      redirectTo(ctx, withQuery(req.redirectUri, { code, state: req.state, iss: issuer(app) }));
    }),
  );

  /** Token, revocation and registration answer OAuth's JSON, never cached, to any origin (no cookies). */
  async function oauthJson(ctx: Koa.Context, route: string, run: () => Promise<{ status: number; body?: unknown }>) {
    (ctx.state as RequestState).route = route;
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.set('Access-Control-Allow-Origin', '*');
    try {
      const answer = await run();
      ctx.status = answer.status;
      if (answer.body !== undefined) ctx.body = answer.body;
      else ctx.body = null;
      ctx.status = answer.status;
    } catch (err) {
      const e =
        err instanceof OAuthError
          ? err
          : err instanceof ApiError && err.status < 500
            ? new OAuthError('invalid_request', err.message)
            : null;
      if (!e) throw err;
      ctx.status = e.status;
      ctx.set(e.headers);
      ctx.body = e.body();
    }
  }

  // OPTIONS on the endpoints browser-based clients call across origins (CORS preflight).
  for (const path of [
    TOKEN_PATH,
    REVOKE_PATH,
    REGISTER_PATH,
    AS_METADATA_PATH,
    PRM_PATH,
    `${PRM_PATH}${MCP_RESOURCE_PATH}`,
  ]) {
    router.options(path, (ctx) => {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
    });
  }

  // POST /oauth/token
  router.post(TOKEN_PATH, (ctx) =>
    oauthJson(ctx, TOKEN_PATH, async () => {
      const form = await readForm(ctx, 16 * 1024);
      const clientId = form.get('client_id');
      if (!clientId) throw new OAuthError('invalid_client', 'client_id is required (public clients only).', 401);
      const grantType = form.get('grant_type');
      const resource = form.get('resource') ?? undefined;
      if (resource !== undefined && resource !== resourceUri(app)) {
        throw new OAuthError('invalid_target', `This server issues tokens for ${resourceUri(app)} only.`);
      }
      if (grantType === 'authorization_code') {
        const code = form.get('code');
        const verifier = form.get('code_verifier');
        if (!code) throw new OAuthError('invalid_request', 'code is required.');
        if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).');
        const body = await exchangeCode(app, {
          code,
          clientId,
          redirectUri: form.get('redirect_uri') ?? undefined,
          codeVerifier: verifier,
          resource,
        });
        return { status: 200, body };
      }
      if (grantType === 'refresh_token') {
        const refreshToken = form.get('refresh_token');
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required.');
        const body = await refreshGrant(app, {
          refreshToken,
          clientId,
          scope: form.get('scope') ?? undefined,
          resource,
        });
        return { status: 200, body };
      }
      throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
    }),
  );

  // POST /oauth/revoke
  router.post(REVOKE_PATH, (ctx) =>
    oauthJson(ctx, REVOKE_PATH, async () => {
      const form = await readForm(ctx, 16 * 1024);
      const token = form.get('token');
      const clientId = form.get('client_id');
      if (!token) throw new OAuthError('invalid_request', 'token is required.');
      if (!clientId) throw new OAuthError('invalid_client', 'client_id is required (public clients only).', 401);
      await revokeToken(app, token, clientId);
      return { status: 200 };
    }),
  );

  // POST /oauth/register
  router.post(REGISTER_PATH, (ctx) =>
    oauthJson(ctx, REGISTER_PATH, async () => {
      let raw: unknown;
      try {
        raw = await readJsonBody(ctx, 16 * 1024);
      } catch (err) {
        if (err instanceof ApiError) throw new OAuthError('invalid_client_metadata', err.message);
        throw err;
      }
      return { status: 201, body: await registerClient(app, raw ?? {}, address(ctx)) };
    }),
  );
}
