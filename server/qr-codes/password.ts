// Code passwords: stored as scrypt hashes. scrypt runs on libuv's thread pool, off the event loop;
// PasswordWork (one per process, on the application context) bounds how many hashes and checks run
// at once, so a bulk import full of passwords cannot starve the redirect's password form (or the
// pool's other users: DNS, files). The redirect's form checks answers through it
// (server/redirect/password.ts keeps the cookie, server/redirect/password-throttle.ts the throttle).
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { PasswordHashing } from '../context.js';

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

/** Thrown when more password checks are waiting than the process queues. */
export class PasswordWorkBusy extends Error {}

/** A counting semaphore: at most `max` tasks run, the others wait in arrival order. */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly max: number,
    /** Tasks allowed to wait; one more is refused (Infinity: never). */
    readonly maxWaiting = Infinity,
  ) {}

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) {
      if (this.waiting.length >= this.maxWaiting) throw new PasswordWorkBusy('too many tasks waiting');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter (running stays the same), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export interface PasswordWorkOptions {
  hashConcurrency: number;
  verifyConcurrency: number;
  /** Checks allowed to wait for a slot; more are refused with PasswordWorkBusy. */
  verifyQueue: number;
  /** Called once per password check that runs scrypt (a metric). */
  onVerify?: () => void;
  /** Called once per password hashed (a metric). */
  onHash?: () => void;
}

/** The process's scrypt work: hashing new passwords and checking answers, each bounded. */
export class PasswordWork implements PasswordHashing {
  private readonly hashing: Limiter;
  private readonly checking: Limiter;

  constructor(private readonly opts: PasswordWorkOptions) {
    this.hashing = new Limiter(opts.hashConcurrency);
    this.checking = new Limiter(opts.verifyConcurrency, opts.verifyQueue);
  }

  hash(password: string): Promise<string> {
    return this.hashing.run(() => {
      this.opts.onHash?.();
      return hashPassword(password);
    });
  }

  /** Whether a check would be refused right now (the form answers 429 without counting an attempt). */
  get verifyBusy(): boolean {
    return this.checking.queued >= this.opts.verifyQueue;
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.checking.run(() => {
      this.opts.onVerify?.();
      return verifyPassword(password, stored);
    });
  }
}
