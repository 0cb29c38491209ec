// The dashboard's cookies: the session (HttpOnly, SameSite=Lax, Secure behind https) and a
// pre-session nonce that binds the CSRF token of the sign-in and link forms. Behind https the
// names carry the __Host- prefix, so no other host or path can set them.
import type Koa from 'koa';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';

export type CookieKind = 'session' | 'pre';

/** Whether the dashboard is served over https: a TLS request or an https PUBLIC_API_URL (a proxy in front). */
function isSecure(app: AppContext, ctx: Koa.Context): boolean {
  return ctx.secure || apiBaseUrl(app.config).startsWith('https:');
}

function cookieName(secure: boolean, kind: CookieKind): string {
  const base = kind === 'session' ? 'qr_session' : 'qr_pre';
  return secure ? `__Host-${base}` : base;
}

export function readCookie(app: AppContext, ctx: Koa.Context, kind: CookieKind): string | undefined {
  return ctx.cookies.get(cookieName(isSecure(app, ctx), kind)) || undefined;
}

export function setCookie(app: AppContext, ctx: Koa.Context, kind: CookieKind, value: string, maxAgeSeconds: number) {
  const secure = isSecure(app, ctx);
  const attrs = [`Path=/`, `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Lax'];
  if (secure) attrs.push('Secure');
  ctx.append('Set-Cookie', `${cookieName(secure, kind)}=${value}; ${attrs.join('; ')}`);
}

export function clearCookie(app: AppContext, ctx: Koa.Context, kind: CookieKind) {
  setCookie(app, ctx, kind, '', 0);
}
