// scan-alerts (daily crontab, 01:15 UTC): judges the UTC day that just ended for scan anomalies
// (server/scan-alerts/service.ts). A run repeated for the same day sends nothing twice.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { detectScanAnomalies } from '../../server/scan-alerts/service.js';

export const scanAlerts =
  (app: AppContext): Task =>
  async (payload) => {
    // The crontab's scheduled time (so a backfilled run judges its own day), else now.
    const ts = (payload as { _cron?: { ts?: string } } | null)?._cron?.ts;
    const at = ts ? new Date(ts) : app.clock.now();
    const day = new Date(at.getTime() - 86_400_000).toISOString().slice(0, 10);
    const sent = await detectScanAnomalies(app, day);
    app.log.info({ day, sent }, 'scan alerts judged');
  };
