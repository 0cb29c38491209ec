// webhook-log-prune (daily): deletes webhook events older than the delivery log keeps them, with
// their deliveries and attempts.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { pruneDeliveryLog } from '../../server/webhooks/delivery.js';

export const webhookLogPrune =
  (app: AppContext): Task =>
  async () => {
    const deleted = await pruneDeliveryLog(app);
    if (deleted) app.log.info({ deleted }, 'old webhook events deleted');
  };
