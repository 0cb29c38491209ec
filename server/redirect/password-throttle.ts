// The password form's throttle: attempts per (visitor address, code) in a fixed window, kept in
// Postgres (sql/0012_password_attempts.sql) so every redirect process shares it. An attempt is
// counted, in one atomic upsert, BEFORE the password is checked: however many guesses arrive at
// once, at most `maxAttempts` per window ever reach scrypt. A right answer clears the count.
import crypto from 'node:crypto';
import type { Knex } from 'knex';

export interface ThrottleOptions {
  /** Attempts per visitor and code per window (default 5). */
  maxAttempts?: number;
  /** The window, in ms (default 5 minutes). */
  windowMs?: number;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_WINDOW_MS = 5 * 60_000;

export class PasswordThrottle {
  readonly maxAttempts: number;
  readonly windowMs: number;
  private nextSweep = 0;

  constructor(
    private readonly db: Knex,
    private readonly key: Buffer,
    opts: ThrottleOptions = {},
  ) {
    this.maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
  }

  private visitor(ip: string): Buffer {
    return crypto.createHmac('sha256', this.key).update(`pw-attempt:${ip}`).digest().subarray(0, 16);
  }

  /**
   * Counts one attempt of a visitor at a code. 0: it may be checked now; otherwise the seconds until
   * the window ends (the attempt is refused, and counted all the same).
   */
  async take(codeId: number, ip: string, now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.windowMs);
    const { rows } = await this.db.raw<{ rows: { attempts: number; window_start: Date }[] }>(
      `insert into password_attempts as a (code_id, visitor, window_start, attempts)
       values (?, ?, ?, 1)
       on conflict (code_id, visitor) do update set
         attempts = case when a.window_start <= ? then 1 else a.attempts + 1 end,
         window_start = case when a.window_start <= ? then excluded.window_start else a.window_start end
       returning attempts, window_start`,
      [codeId, this.visitor(ip), now, cutoff, cutoff],
    );
    this.sweep(now, cutoff);
    const { attempts, window_start } = rows[0];
    if (attempts <= this.maxAttempts) return 0;
    return Math.max(1, Math.ceil((new Date(window_start).getTime() + this.windowMs - now.getTime()) / 1000));
  }

  /** A right answer: the visitor starts afresh. */
  async clear(codeId: number, ip: string): Promise<void> {
    await this.db('password_attempts')
      .where({ code_id: codeId, visitor: this.visitor(ip) })
      .delete();
  }

  /** Deletes rows of windows that ended, at most once a window per process, without waiting. */
  private sweep(now: Date, cutoff: Date): void {
    if (now.getTime() < this.nextSweep) return;
    this.nextSweep = now.getTime() + this.windowMs;
    this.db('password_attempts')
      .where('window_start', '<=', cutoff)
      .delete()
      .catch(() => undefined);
  }
}
