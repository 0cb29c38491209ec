// idempotency-keys-prune (hourly crontab): deletes idempotency keys past their 24 hours. Expired
// keys are ignored when claimed anyway; this only keeps the table small.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';

export const idempotencyKeysPrune =
  (app: AppContext): Task =>
  async () => {
    const deleted = await app.idempotency.prune();
    if (deleted) app.log.info({ deleted }, 'expired idempotency keys deleted');
  };
