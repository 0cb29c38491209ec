// webhook-sweep (every minute): queues again the due webhook deliveries whose job was lost, e.g.
// with a worker killed mid-attempt (server/webhooks/delivery.ts sweepDeliveries).
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { sweepDeliveries } from '../../server/webhooks/delivery.js';

export const webhookSweep =
  (app: AppContext): Task =>
  async () => {
    const queued = await sweepDeliveries(app);
    if (queued) app.log.warn({ queued }, 'webhook deliveries without a job queued again');
  };
