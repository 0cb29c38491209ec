// scans-batch (every minute): the scans.batch webhook event, scan counts per code per minute, for
// organizations that listen (server/scan-batches/service.ts). A run repeated sends nothing twice.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { sendScanBatches } from '../../server/scan-batches/service.js';

export const scansBatch =
  (app: AppContext): Task =>
  async () => {
    const sent = await sendScanBatches(app, app.clock.now());
    if (sent) app.log.info({ sent }, 'scan batches announced');
  };
