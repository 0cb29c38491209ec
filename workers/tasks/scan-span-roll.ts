// scan-span-roll (every 10 minutes): the longer spans of the days that are over
// (server/analytics/span-roll.ts). A run repeated, or two at once, counts nothing twice.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { rollFinishedDays } from '../../server/analytics/span-roll.js';

export const scanSpanRoll =
  (app: AppContext): Task =>
  async () => {
    const days = await rollFinishedDays(app.ch);
    if (days.length) app.log.info({ days }, 'longer analytics spans rolled');
  };
