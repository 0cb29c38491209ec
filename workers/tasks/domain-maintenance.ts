// domain-maintenance: the daily crontab job of custom domains (server/domains/maintenance.ts):
// expire old claims, re-check TXT records (unverified after the grace period), queue renewals.
// Safe to run twice: every step looks at the current state.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { runDomainMaintenance } from '../../server/domains/maintenance.js';

export const domainMaintenance =
  (app: AppContext): Task =>
  async () => {
    await runDomainMaintenance(app);
  };
