// Code passwords: stored as scrypt hashes, checked by the redirect's form, remembered by a
// short-lived signed cookie, and wrong answers throttled per visitor address and code.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: crypto.ScryptOptions,
) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1 };

/** `scrypt$N=16384,r=8,p=1$<salt base64url>$<hash base64url>` */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...PARAMS, maxmem: 64 * 1024 * 1024 });
  return `scrypt$N=${PARAMS.N},r=${PARAMS.r},p=${PARAMS.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5], 'base64url');
  const got = await scrypt(password, Buffer.from(m[4], 'base64url'), expected.length, {
    N,
    r,
    p,
    maxmem: 256 * N * r + 1024 * 1024,
  });
  return got.length === expected.length && crypto.timingSafeEqual(got, expected);
}

// ---------------------------------------------------------------------------------------------
// The access cookie: `<expires unix seconds>.<hmac>`, bound to the code and its current password
// hash (changing the password ends every open session).

export const COOKIE_TTL_SECONDS = 15 * 60;

export function cookieName(codeId: number): string {
  return `qr_pw_${codeId}`;
}

function sign(key: Buffer, codeId: number, expires: number, passwordHash: string): string {
  return crypto.createHmac('sha256', key).update(`pw:${codeId}:${expires}:${passwordHash}`).digest('base64url');
}

export function issueCookie(key: Buffer, codeId: number, passwordHash: string, now: Date): string {
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

export interface ThrottleOptions {
  /** Wrong answers allowed per window before the form is locked. */
  maxFailures?: number;
  windowMs?: number;
}

/** Wrong passwords per (address, code) in a fixed window; in memory, per process. */
export class PasswordThrottle {
  private failures = new Map<string, { count: number; resetAt: number }>();
  private readonly max: number;
  private readonly windowMs: number;

  constructor(opts: ThrottleOptions = {}) {
    this.max = opts.maxFailures ?? 5;
    this.windowMs = opts.windowMs ?? 5 * 60_000;
  }

  /** Seconds to wait before another attempt is accepted, 0 when one may be tried now. */
  retryAfter(key: string, now: number): number {
    const f = this.failures.get(key);
    if (!f || f.resetAt <= now) return 0;
    return f.count >= this.max ? Math.ceil((f.resetAt - now) / 1000) : 0;
  }

  fail(key: string, now: number): void {
    if (this.failures.size > 100_000) for (const [k, v] of this.failures) if (v.resetAt <= now) this.failures.delete(k);
    const f = this.failures.get(key);
    if (!f || f.resetAt <= now) this.failures.set(key, { count: 1, resetAt: now + this.windowMs });
    else f.count++;
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
