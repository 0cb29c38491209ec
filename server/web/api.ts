// The dashboard's JSON endpoints under /app/api: the session (sign-in, sign-out, sign-out
// everywhere, one-time links), every operation of an organization the user belongs to, and the
// staff area. Organization calls run through executeOperation with the member's role and the
// web Via (not metered, not in the API window, the session's own limit); this file holds no
// business rule. Every write needs the CSRF token of the session (or, before sign-in, of the
// pre-session cookie) in X-CSRF-Token.
import type Router from '@koa/router';
import type Koa from 'koa';
import { ROLE_ABILITIES } from '../auth/abilities.js';
import {
  describeLink,
  memberPrincipal,
  redeemLink,
  signIn,
  userOrganizations,
  type StartedSession,
} from '../accounts/service.js';
import {
  csrfMatches,
  csrfTokenFor,
  endSession,
  endUserSessions,
  resolveSession,
  type ClientInfo,
  type SessionUser,
} from '../accounts/sessions.js';
import { newSecret } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { readFormBody, readJsonBody } from '../http-common/body.js';
import { escapeHtml } from '../http-common/html.js';
import { clientIp, trustList } from '../http-common/client-ip.js';
import type { RequestState } from '../http-common/middleware.js';
import { respond, routerPath, WEB_API } from '../http-common/respond.js';
import { executeOperation } from '../operations/execute.js';
import { idempotencyKeyHeader } from '../operations/idempotency.js';
import type { Operation } from '../operations/operation.js';
import { requireOrganization, searchOrganizations } from '../organizations/service.js';
import { landingPreview } from '../qr-codes/landing-preview.js';
import { objectSchema } from '../schemas/common.js';
import { parseAmount, formatMinor } from '../wallet/money.js';
import { topUp } from '../wallet/service.js';
import { clearCookie, readCookie, setCookie } from './cookies.js';
import { webVia } from './via.js';

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
/** Form posts of the dashboard's pages: their CSRF token is a form field, checked by the route. */
const FORM_POSTS = /^\/app\/api\/orgs\/[^/]+\/landing-preview$/;
const SESSION_LABEL = 'Dashboard session';

const signInBody = objectSchema(
  'web.sign_in.body',
  {
    email: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1000 },
  },
  ['email', 'password'],
);
const linkBody = objectSchema(
  'web.link.body',
  {
    password: { type: 'string', minLength: 1, maxLength: 1000 },
    name: { type: 'string', maxLength: 255 },
  },
  ['password'],
);
const topUpBody = objectSchema(
  'web.staff.top_up.body',
  {
    amount: {
      type: 'string',
      minLength: 1,
      maxLength: 20,
      description: 'Decimal amount in the organization’s currency.',
    },
    reference: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'Payment reference, e.g. an invoice number.',
    },
  },
  ['amount', 'reference'],
);
const staffQuery = objectSchema('web.staff.organizations.query', {
  search: { type: 'string', maxLength: 200, default: '' },
});

interface WebState extends RequestState {
  session?: SessionUser | null;
}

function notSignedIn(): ApiError {
  return new ApiError('unauthenticated', 'Sign in to the dashboard first.');
}

export function mountWebApi(router: Router, app: AppContext, operations: readonly Operation[]): void {
  for (const s of [signInBody, linkBody, topUpBody]) app.validators.compile(s, 'body');
  app.validators.compile(staffQuery, 'query');
  const trust = trustList(app.config.trustProxy);

  const client = (ctx: Koa.Context): ClientInfo => ({
    address: clientIp(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, trust),
    userAgent: ctx.get('User-Agent'),
  });

  async function session(ctx: Koa.Context): Promise<SessionUser | null> {
    const state = ctx.state as WebState;
    if (state.session === undefined) state.session = await resolveSession(app, readCookie(app, ctx, 'session'));
    return state.session;
  }

  async function requireSession(ctx: Koa.Context): Promise<SessionUser> {
    const s = await session(ctx);
    if (!s) throw notSignedIn();
    return s;
  }

  /** Every write carries the CSRF token of the session, or before sign-in of the pre-session cookie. */
  async function checkCsrf(ctx: Koa.Context): Promise<void> {
    const s = await session(ctx);
    const pre = readCookie(app, ctx, 'pre');
    const expected = s ? s.csrfToken : pre ? csrfTokenFor(app, 'pre', pre) : null;
    if (!expected || !csrfMatches(expected, ctx.get('X-CSRF-Token') || undefined)) throw ApiError.csrfFailed();
  }

  async function body<T>(ctx: Koa.Context, schema: Record<string, unknown>): Promise<T> {
    const raw = await readJsonBody(ctx, app.config.bodyLimitBytes);
    return app.validators.check<T>(schema, 'body', raw ?? {});
  }

  async function sessionPayload(ctx: Koa.Context, s: SessionUser | null) {
    if (!s) {
      let pre = readCookie(app, ctx, 'pre');
      if (!pre || !/^[A-Za-z0-9]{32}$/.test(pre)) {
        pre = newSecret(32);
        setCookie(app, ctx, 'pre', pre, 24 * 3600);
      }
      return { user: null, organizations: [], csrf_token: csrfTokenFor(app, 'pre', pre) };
    }
    const orgs = await userOrganizations(app.db, s.userId);
    return {
      user: { ulid: s.userUlid, email: s.email, name: s.name, is_staff: s.isStaff },
      organizations: orgs.map((o) => ({ ...o, abilities: ROLE_ABILITIES[o.role] })),
      csrf_token: s.csrfToken,
      expires_at: s.expiresAt.toISOString(),
    };
  }

  async function started(ctx: Koa.Context, started: StartedSession) {
    const now = app.clock.now();
    setCookie(app, ctx, 'session', started.secret, (started.expiresAt.getTime() - now.getTime()) / 1000);
    (ctx.state as WebState).session = await resolveSession(app, started.secret);
    ctx.body = await sessionPayload(ctx, (ctx.state as WebState).session!);
  }

  function route(ctx: Koa.Context, template: string) {
    (ctx.state as RequestState).route = template;
    ctx.set('Cache-Control', 'no-store');
  }

  // Every /app/api request: no caching, CSRF on writes (before any body is read).
  router.use(WEB_API, async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    if (WRITES.has(ctx.method) && !FORM_POSTS.test(ctx.path)) await checkCsrf(ctx);
    await next();
  });

  // GET /app/api/session
  router.get(`${WEB_API}/session`, async (ctx) => {
    route(ctx, `${WEB_API}/session`);
    ctx.body = await sessionPayload(ctx, await session(ctx));
  });

  // POST /app/api/sign-in
  router.post(`${WEB_API}/sign-in`, async (ctx) => {
    route(ctx, `${WEB_API}/sign-in`);
    const input = await body<{ email: string; password: string }>(ctx, signInBody);
    await started(ctx, await signIn(app, input, client(ctx)));
  });

  // POST /app/api/sign-out
  router.post(`${WEB_API}/sign-out`, async (ctx) => {
    route(ctx, `${WEB_API}/sign-out`);
    const s = await session(ctx);
    if (s) await endSession(app, s.sessionId);
    clearCookie(app, ctx, 'session');
    ctx.status = 204;
  });

  // POST /app/api/sign-out-everywhere
  router.post(`${WEB_API}/sign-out-everywhere`, async (ctx) => {
    route(ctx, `${WEB_API}/sign-out-everywhere`);
    const s = await requireSession(ctx);
    const ended = await endUserSessions(app.db, s.userId);
    clearCookie(app, ctx, 'session');
    ctx.body = { sessions_ended: ended };
  });

  // GET /app/api/links/{secret}
  router.get(`${WEB_API}/links/:secret`, async (ctx) => {
    route(ctx, `${WEB_API}/links/{secret}`);
    ctx.body = { data: await describeLink(app, ctx.params.secret) };
  });

  // POST /app/api/links/{secret}
  router.post(`${WEB_API}/links/:secret`, async (ctx) => {
    route(ctx, `${WEB_API}/links/{secret}`);
    const input = await body<{ password: string; name?: string }>(ctx, linkBody);
    await started(ctx, await redeemLink(app, ctx.params.secret, input, client(ctx)));
  });

  // GET /app/api/staff/organizations
  router.get(`${WEB_API}/staff/organizations`, async (ctx) => {
    route(ctx, `${WEB_API}/staff/organizations`);
    await requireStaff(ctx);
    const q = app.validators.check<{ search: string }>(staffQuery, 'query', { ...ctx.query });
    ctx.body = { data: await searchOrganizations(app.db, q.search, 50) };
  });

  // POST /app/api/staff/organizations/{org_ulid}/top-ups
  router.post(`${WEB_API}/staff/organizations/:org_ulid/top-ups`, async (ctx) => {
    route(ctx, `${WEB_API}/staff/organizations/{org_ulid}/top-ups`);
    const staff = await requireStaff(ctx);
    const input = await body<{ amount: string; reference: string }>(ctx, topUpBody);
    const org = await requireOrganization(app.db, ctx.params.org_ulid);
    const minor = parseAmount(input.amount, org.currency);
    if (minor === null || minor <= 0) {
      throw ApiError.field('amount', `Must be a positive amount with at most the decimals of ${org.currency}.`);
    }
    const done = await topUp(app, org, minor, {
      reference: input.reference.trim(),
      actor: { userId: staff.userId, name: staff.email },
    });
    ctx.status = 201;
    ctx.body = {
      data: {
        organization: org.ulid,
        credited: formatMinor(minor, org.currency),
        balance: formatMinor(done.balanceMinor, org.currency),
        currency: org.currency,
        transaction_ulid: done.transactionUlid,
      },
    };
  });

  async function requireStaff(ctx: Koa.Context): Promise<SessionUser> {
    const s = await requireSession(ctx);
    if (!s.isStaff) throw new ApiError('forbidden', 'Only platform staff may use the staff area.');
    return s;
  }

  // POST /app/api/orgs/{org_ulid}/landing-preview
  // The landing page of the code being edited, for the preview frame of the code form: a form post
  // (fields csrf_token and draft, the JSON of type, destination, landing_config, brand_ulid and
  // language) whose target is the frame, answered with the page and its own Content-Security-Policy.
  router.post(`${WEB_API}/orgs/:org_ulid/landing-preview`, async (ctx) => {
    route(ctx, `${WEB_API}/orgs/{org_ulid}/landing-preview`);
    const s = await requireSession(ctx);
    const form = await readFormBody(ctx, app.config.bodyLimitBytes);
    if (!csrfMatches(s.csrfToken, form.get('csrf_token') ?? undefined)) throw ApiError.csrfFailed();
    const principal = await memberPrincipal(app.db, s, ctx.params.org_ulid, SESSION_LABEL);
    if (!principal.abilities.has('codes.create') && !principal.abilities.has('codes.update')) {
      throw ApiError.forbidden('codes.update');
    }
    let draft: unknown;
    try {
      draft = JSON.parse(form.get('draft') ?? '');
    } catch (err) {
      throw ApiError.invalidJson((err as Error).message);
    }
    // The frame shows the page, or what keeps it from being drawn yet (a field still empty).
    ctx.set('X-Frame-Options', 'SAMEORIGIN');
    ctx.type = 'text/html; charset=utf-8';
    try {
      const page = await landingPreview(app, principal.org, draft, ctx.get('Accept-Language') || undefined);
      ctx.set('Content-Security-Policy', page.csp.replace("frame-ancestors 'none'", "frame-ancestors 'self'"));
      ctx.body = page.html;
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'validation_failed') throw err;
      ctx.status = 422;
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'self'; base-uri 'none'");
      ctx.body = previewProblems((err.extra.errors ?? {}) as Record<string, string[]>);
    }
  });

  // Every operation of an organization: /app/api/orgs/{org_ulid}<operation path>.
  for (const op of operations) {
    const template = `${WEB_API}/orgs/{org_ulid}${op.path}`;
    const method = op.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    router[method](routerPath(template), async (ctx: Koa.Context) => {
      route(ctx, template);
      const s = await requireSession(ctx);
      const principal = await memberPrincipal(app.db, s, ctx.params.org_ulid, SESSION_LABEL);
      const state = ctx.state as RequestState;
      state.orgUlid = principal.org.ulid;
      const { org_ulid: _org, ...params } = ctx.params;
      const result = await executeOperation(
        app,
        principal,
        op,
        async () => ({
          params,
          query: { ...ctx.query },
          body: WRITES.has(ctx.method) ? await readJsonBody(ctx, app.config.bodyLimitBytes) : undefined,
        }),
        {
          requestId: state.requestId,
          log: app.log.child({ request_id: state.requestId }),
          accept: ctx.get('Accept'),
          ifNoneMatch: ctx.get('If-None-Match'),
          lastEventId: ctx.get('Last-Event-ID'),
          via: webVia(s.sessionId),
          idempotencyKey: idempotencyKeyHeader(ctx.headers),
        },
      );
      respond(ctx, result);
    });
  }
}

/** The preview frame's page when the draft cannot be drawn yet: the fields to fill in or mend. */
function previewProblems(errors: Record<string, string[]>): string {
  const items = Object.entries(errors)
    .map(([field, messages]) => `<li><code>${escapeHtml(field)}</code>: ${escapeHtml(messages.join(' '))}</li>`)
    .join('');
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Preview</title></head><body>' +
    `<main><h1>Not yet a page</h1><p>Fill in or correct these fields to see the page:</p><ul>${items}</ul></main>` +
    '</body></html>'
  );
}
