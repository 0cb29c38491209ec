// webhook-deliver: drains one webhook endpoint's due deliveries (server/webhooks/delivery.ts).
// Queued with every event in the transaction of the change (webhook_emit), by a redelivery, by the
// sweep, and by the drain itself for the next retry due. Job key webhook:<id>: one job per
// endpoint at a time; a duplicate finds nothing due and only schedules the next one.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { drainEndpoint } from '../../server/webhooks/delivery.js';

export const webhookDeliver =
  (app: AppContext): Task =>
  async (payload) => {
    const id = Number((payload as { webhook_id?: unknown } | null)?.webhook_id);
    if (!Number.isSafeInteger(id)) {
      app.log.error({ payload }, 'webhook-deliver: malformed payload, dropped');
      return;
    }
    await drainEndpoint(app, id);
  };
