// webhook-deliver: one attempt of one webhook delivery (server/webhooks/delivery.ts). Queued with
// the event in the transaction of the change (webhook_emit), by a failed attempt for the next one,
// by a redelivery (manual: true) and by the sweep. A duplicate job finds the delivery done or
// leased and does nothing.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { attemptDelivery } from '../../server/webhooks/delivery.js';

export const webhookDeliver =
  (app: AppContext): Task =>
  async (payload) => {
    const p = payload as { delivery_id?: unknown; manual?: unknown } | null;
    const id = Number(p?.delivery_id);
    if (!Number.isSafeInteger(id)) {
      app.log.error({ payload }, 'webhook-deliver: malformed payload, dropped');
      return;
    }
    await attemptDelivery(app, id, { manual: p?.manual === true });
  };
