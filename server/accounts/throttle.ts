// Sign-in throttling per account and per client address, in fixed windows kept in Postgres so that
// every process shares them. An attempt is counted before its password is checked: of any number
// of concurrent attempts, at most the limit reach the password check, the rest are 429.
import { rateLimitHelpUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';

export interface AttemptSource {
  email: string;
  address: string;
}

function keys(src: AttemptSource): { account: string; address: string } {
  return { account: `account:${src.email.trim().toLowerCase()}`, address: `address:${src.address}` };
}

/** Counts one attempt for the account and the address; throws 429 when either is over its limit. */
export async function reserveSignInAttempt(app: AppContext, src: AttemptSource): Promise<void> {
  const now = app.clock.now();
  const windowMs = app.config.webSignInWindowMinutes * 60_000;
  const start = new Date(Math.floor(now.getTime() / windowMs) * windowMs);
  const k = keys(src);
  const { rows } = await app.db.raw<{ rows: { key: string; attempts: number }[] }>(
    `insert into sign_in_windows as w (key, window_start, attempts) values (?, ?, 1), (?, ?, 1)
     on conflict (key) do update
       set attempts = case when w.window_start = excluded.window_start then w.attempts + 1 else 1 end,
           window_start = excluded.window_start
     returning key, attempts`,
    [k.account, start, k.address, start],
  );
  const over = rows.some(
    (r) => r.attempts > (r.key === k.account ? app.config.webSignInAccountLimit : app.config.webSignInAddressLimit),
  );
  if (over) {
    const retryAfter = Math.max(1, Math.ceil((start.getTime() + windowMs - now.getTime()) / 1000));
    throw ApiError.rateLimited(retryAfter, rateLimitHelpUrl(app.config, app.apiPort()));
  }
}

/** A successful sign-in clears the account's count (the address keeps its own). */
export async function clearAccountAttempts(app: AppContext, email: string): Promise<void> {
  await app
    .db('sign_in_windows')
    .where({ key: keys({ email, address: '' }).account })
    .delete();
}
