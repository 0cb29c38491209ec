// Waiting on Postgres notifications instead of sleeping: Postgres delivers the notifications of
// different transactions to a listener in commit order, so once a marker sent after a write has
// reached a process, so has every notification of that write.
import type { AppContext } from '../../server/context.js';

/**
 * Resolves once `app`'s LISTEN connection has handed `payload` on `channel` to its subscribers,
 * after every notification committed before this call; fails after `timeoutMs`. The payload must be
 * unique and harmless to the channel's real subscribers.
 */
export async function notifyBarrier(
  app: AppContext,
  channel: string,
  payload: string,
  timeoutMs = 10_000,
): Promise<void> {
  let arrived!: () => void;
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  await app.notify.subscribe(
    channel,
    (p) => {
      if (p === payload) arrived();
    },
    () => undefined,
  );
  await app.db.raw('select pg_notify(?, ?)', [channel, payload]);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`notification ${payload} on ${channel} not delivered within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([seen, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

let markers = 0;

/** A redirect_cache payload that names no key: the redirect cache drops nothing for it. */
export const redirectCacheMarker = (): string => JSON.stringify({ t: 'code', keys: [], marker: ++markers });
