// Server-side dashboard sessions in Postgres. The cookie holds a random secret; only its SHA-256
// is stored. A session ends at its absolute expiry, after the idle timeout, at sign-out, or when
// its user signs out everywhere or sets a new password. Each session has its own minute window
// for dashboard calls.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { hashSecret, newSecret, type OrgRecord } from '../auth/principal.js';
import { rateLimitHelpUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import type { Admission } from '../metering/admission.js';

export interface SessionUser {
  sessionId: number;
  userId: number;
  userUlid: string;
  email: string;
  name: string | null;
  isStaff: boolean;
  /** The CSRF token of this session: an HMAC of the session, never stored. */
  csrfToken: string;
  expiresAt: Date;
}

export interface ClientInfo {
  address: string;
  userAgent: string;
}

/** A CSRF token bound to a session secret (or a pre-session nonce) by the service's key. */
export function csrfTokenFor(app: AppContext, kind: 'session' | 'pre', secret: string): string {
  return crypto.createHmac('sha256', app.secretKey).update(`csrf:${kind}:${secret}`).digest('base64url');
}

export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Starts a session for the user; returns the cookie secret (shown to nobody else). */
export async function createSession(
  app: AppContext,
  db: Knex | Knex.Transaction,
  userId: number,
  client: ClientInfo,
): Promise<{ secret: string; expiresAt: Date }> {
  const now = app.clock.now();
  const secret = newSecret(48);
  const expiresAt = new Date(now.getTime() + app.config.webSessionMaxHours * 3_600_000);
  // Housekeeping: the user's ended sessions go when a new one starts.
  await db('web_sessions')
    .where({ user_id: userId })
    .andWhere((q) => q.where('expires_at', '<=', now).orWhere('last_seen_at', '<=', idleSince(app, now)))
    .delete();
  await db('web_sessions').insert({
    secret_hash: hashSecret(secret),
    user_id: userId,
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
    address: client.address.slice(0, 100),
    user_agent: client.userAgent.slice(0, 500),
  });
  return { secret, expiresAt };
}

interface SessionRow {
  id: number;
  user_id: number;
  expires_at: Date;
  ulid: string;
  email: string;
  name: string | null;
  is_staff: boolean;
}

function idleSince(app: AppContext, now: Date): Date {
  return new Date(now.getTime() - app.config.webSessionIdleMinutes * 60_000);
}

/** The live session of a cookie secret, touched (idle timer restarted), or null. */
export async function resolveSession(app: AppContext, secret: string | undefined): Promise<SessionUser | null> {
  if (!secret || !/^[A-Za-z0-9]{48}$/.test(secret)) return null;
  const now = app.clock.now();
  const { rows } = await app.db.raw<{ rows: SessionRow[] }>(
    `with s as (
       update web_sessions set last_seen_at = ?
        where secret_hash = ? and expires_at > ? and last_seen_at > ?
       returning id, user_id, expires_at)
     select s.id, s.user_id, s.expires_at, u.ulid, u.email, u.name, u.is_staff
       from s join users u on u.id = s.user_id`,
    [now, hashSecret(secret), now, idleSince(app, now)],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    sessionId: Number(row.id),
    userId: Number(row.user_id),
    userUlid: row.ulid,
    email: row.email,
    name: row.name,
    isStaff: row.is_staff,
    csrfToken: csrfTokenFor(app, 'session', secret),
    expiresAt: row.expires_at,
  };
}

export async function endSession(app: AppContext, sessionId: number): Promise<void> {
  await app.db('web_sessions').where({ id: sessionId }).delete();
}

/** Signs the user out everywhere: every session of the user ends. */
export async function endUserSessions(db: Knex | Knex.Transaction, userId: number): Promise<number> {
  return db('web_sessions').where({ user_id: userId }).delete();
}

/**
 * Admits one dashboard call of a session: the session's own minute window (429 past
 * WEB_RATE_LIMIT_PER_MIN). The organization's API window and metering are not touched; the
 * month's billable API calls are read for the overview.
 */
export async function admitSessionCall(app: AppContext, sessionId: number, org: OrgRecord): Promise<Admission> {
  const now = app.clock.now();
  const windowStart = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const month = `${now.toISOString().slice(0, 7)}-01`;
  const { rows } = await app.db.raw<{ rows: { hits: number; calls: string | null }[] }>(
    `with s as (
       update web_sessions
          set window_hits = case when window_start = ? then window_hits + 1 else 1 end, window_start = ?
        where id = ?
       returning window_hits)
     select s.window_hits as hits,
            (select calls from api_usage_months where org_id = ? and month = ?) as calls
       from s`,
    [windowStart, windowStart, sessionId, org.id, month],
  );
  const limit = app.config.webRateLimitPerMin;
  const resetAt = new Date(windowStart.getTime() + 60_000);
  const hits = rows[0]?.hits ?? limit + 1;
  if (hits > limit) {
    const retryAfter = Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
    throw ApiError.rateLimited(retryAfter, rateLimitHelpUrl(app.config, app.apiPort()));
  }
  return { limit, remaining: limit - hits, resetAt, callsUsedMonth: Number(rows[0]?.calls ?? 0) };
}
