// graphile-worker, in the server process by default or alone (`make worker`). Each task lives in
// workers/tasks/<task-name>.ts and is built from the application context.
import { Logger as WorkerLogger, run, type Runner, type TaskList } from 'graphile-worker';
import type { AppContext } from '../server/context.js';
import { crontab, taskFactories } from './tasks/index.js';

export function buildTaskList(app: AppContext): TaskList {
  const list: TaskList = {};
  for (const [name, factory] of Object.entries(taskFactories)) list[name] = factory(app);
  return list;
}

export async function startWorker(app: AppContext): Promise<Runner> {
  const runner = await run({
    connectionString: app.databaseUrl,
    concurrency: app.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: buildTaskList(app),
    crontab,
    // graphile-worker's own messages go to our structured log.
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'info' : 'debug';
      app.log[method]({ worker: scope, ...meta }, message);
    }),
  });
  app.log.info({ concurrency: app.config.workerConcurrency, tasks: Object.keys(taskFactories) }, 'worker started');
  return runner;
}
