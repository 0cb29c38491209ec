// The password flow of a protected code: the form's answer checked against the code's hash
// (through the process's bounded PasswordWork, server/qr-codes/password.ts), remembered by a
// short-lived signed cookie, and attempts throttled per visitor address and code
// (./password-throttle.ts), counted before the check.
import crypto from 'node:crypto';
import type http from 'node:http';
import type { PasswordHashing } from '../context.js';
import type { PasswordThrottle } from './password-throttle.js';

// ---------------------------------------------------------------------------------------------
// The access cookie: `<expires unix seconds>.<hmac>`, bound to the code and its current password
// hash (changing the password ends every open session).

const COOKIE_TTL_SECONDS = 15 * 60;

export function cookieName(codeId: number): string {
  return `qr_pw_${codeId}`;
}

function sign(key: Buffer, codeId: number, expires: number, passwordHash: string): string {
  return crypto.createHmac('sha256', key).update(`pw:${codeId}:${expires}:${passwordHash}`).digest('base64url');
}

function issueCookie(key: Buffer, codeId: number, passwordHash: string, now: Date): string {
  const expires = Math.floor(now.getTime() / 1000) + COOKIE_TTL_SECONDS;
  return `${expires}.${sign(key, codeId, expires, passwordHash)}`;
}

export function cookieValid(
  key: Buffer,
  codeId: number,
  passwordHash: string,
  value: string | undefined,
  now: Date,
): boolean {
  if (!value) return false;
  const dot = value.indexOf('.');
  const expires = Number(value.slice(0, dot));
  if (dot < 1 || !Number.isInteger(expires) || expires <= now.getTime() / 1000) return false;
  const want = Buffer.from(sign(key, codeId, expires, passwordHash));
  const got = Buffer.from(value.slice(dot + 1));
  return want.length === got.length && crypto.timingSafeEqual(want, got);
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// The posted form.

/** The largest password form read (a password field of a few hundred characters fits many times over). */
export const FORM_LIMIT_BYTES = 4096;

/** The form, or 'too_large' once more than FORM_LIMIT_BYTES arrived (the rest is left unread). */
function readForm(req: http.IncomingMessage): Promise<URLSearchParams | 'too_large' | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > FORM_LIMIT_BYTES) {
        req.off('data', onData);
        req.pause();
        resolve('too_large');
      } else chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', () => resolve(null));
  });
}

export type PasswordAnswer =
  | { kind: 'throttled'; retryAfter: number }
  | { kind: 'wrong' }
  /** More than FORM_LIMIT_BYTES posted: 413, nothing counted. */
  | { kind: 'too_large' }
  /** The Set-Cookie value that remembers the right answer. */
  | { kind: 'right'; setCookie: string };

/**
 * Judges a posted password form for a code: throttled, wrong, or right (with the access cookie).
 * The attempt is counted before the answer is checked; an empty answer is wrong without a check.
 */
export async function answerPasswordForm(
  req: http.IncomingMessage,
  code: { id: number; passwordHash: string },
  opts: { throttle: PasswordThrottle; passwords: PasswordHashing; ip: string; now: Date; key: Buffer; secure: boolean },
): Promise<PasswordAnswer> {
  const form = await readForm(req);
  if (form === 'too_large') return { kind: 'too_large' };
  const given = form?.get('password') ?? '';
  if (!given) return { kind: 'wrong' };
  // Too many checks waiting in this process: refused before it counts against the visitor.
  if (opts.passwords.verifyBusy) return { kind: 'throttled', retryAfter: 1 };
  const wait = await opts.throttle.take(code.id, opts.ip, opts.now);
  if (wait > 0) return { kind: 'throttled', retryAfter: wait };
  if (!(await opts.passwords.verify(given, code.passwordHash))) return { kind: 'wrong' };
  await opts.throttle.clear(code.id, opts.ip);
  const cookie = issueCookie(opts.key, code.id, code.passwordHash, opts.now);
  return {
    kind: 'right',
    setCookie: `${cookieName(code.id)}=${cookie}; Max-Age=${COOKIE_TTL_SECONDS}; Path=/; HttpOnly; SameSite=Lax${opts.secure ? '; Secure' : ''}`,
  };
}
