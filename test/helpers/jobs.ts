// Runs every due graphile-worker job of a test service once, with the service's own tasks, and
// returns when none is left (graphile-worker's runOnce), its log quiet.
import { Logger, runOnce } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { buildTaskList } from '../../workers/index.js';

const quiet = new Logger(() => () => undefined);

export function runJobs(app: AppContext): Promise<void> {
  return runOnce({
    connectionString: app.databaseUrl,
    taskList: buildTaskList(app),
    noHandleSignals: true,
    logger: quiet,
  });
}
