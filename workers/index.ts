// graphile-worker, in the server process by default or alone (`make worker`). Each task lives in
// workers/tasks/<task-name>.ts and is built from the application context.
import { Logger as WorkerLogger, run, type Runner, type TaskList } from 'graphile-worker';
import type { AppContext } from '../server/context.js';
import { CLICKHOUSE_TASKS, crontab, taskFactories } from './tasks/index.js';

export interface WorkerOptions {
  /**
   * Whether this process has ClickHouse (default true). Without it the tasks that need it
   * (CLICKHOUSE_TASKS) are not taken: graphile-worker fetches only the jobs of the tasks a worker
   * lists, so they stay queued for a worker that has it. The crontab still schedules them.
   */
  clickhouse?: boolean;
}

export function buildTaskList(app: AppContext, opts: WorkerOptions = {}): TaskList {
  const list: TaskList = {};
  for (const [name, factory] of Object.entries(taskFactories)) {
    if (opts.clickhouse === false && CLICKHOUSE_TASKS.has(name)) continue;
    list[name] = factory(app);
  }
  return list;
}

export async function startWorker(app: AppContext, opts: WorkerOptions = {}): Promise<Runner> {
  const taskList = buildTaskList(app, opts);
  const runner = await run({
    connectionString: app.databaseUrl,
    concurrency: app.config.workerConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList,
    crontab,
    // graphile-worker's own messages go to our structured log.
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'info' : 'debug';
      app.log[method]({ worker: scope, ...meta }, message);
    }),
  });
  app.log.info({ concurrency: app.config.workerConcurrency, tasks: Object.keys(taskList) }, 'worker started');
  const left = Object.keys(taskFactories).filter((name) => !(name in taskList));
  if (left.length) {
    app.log.warn(
      { tasks: left },
      "this worker has no ClickHouse: these tasks are left to the server process's worker (ENABLE_WORKER=true, the default)",
    );
  }
  return runner;
}
