import { expect } from 'chai';
import { Logger, runOnce } from 'graphile-worker';
import { buildTaskList } from '../../workers/index.js';
import { CLICKHOUSE_TASKS } from '../../workers/tasks/index.js';
import { runJobs } from '../helpers/jobs.js';
import { startTestService, type TestService } from '../helpers/harness.js';

// A worker without ClickHouse (`make worker` beside embedded chDB, which the server process owns)
// leaves the tasks that need it queued for the server's own worker instead of failing them.
describe('a worker without ClickHouse', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.close());

  const queued = async () =>
    (await svc.app
      .db('graphile_worker.jobs')
      .whereLike('key', 'wtest-%')
      .orderBy('key')
      .select('key', 'task_identifier', 'attempts')) as { key: string; task_identifier: string; attempts: number }[];

  it('lists every task but those that read or write ClickHouse', () => {
    const all = Object.keys(buildTaskList(svc.app));
    const without = Object.keys(buildTaskList(svc.app, { clickhouse: false }));
    expect([...CLICKHOUSE_TASKS].sort()).to.deep.equal(['import-run', 'scan-alerts', 'scan-span-roll', 'scans-batch']);
    expect(without).to.deep.equal(all.filter((t) => !CLICKHOUSE_TASKS.has(t)));
    expect(all).to.include.members([...CLICKHOUSE_TASKS]);
  });

  it('does not take their jobs, which the worker with ClickHouse then runs; it runs the others', async () => {
    for (const [task, key] of [
      ['scan-span-roll', 'wtest-1-roll'],
      ['scans-batch', 'wtest-2-batch'],
      ['idempotency-keys-prune', 'wtest-3-prune'],
    ]) {
      await svc.app.db.raw(`select graphile_worker.add_job(?, '{}'::json, job_key => ?)`, [task, key]);
    }
    await runOnce({
      connectionString: svc.app.databaseUrl,
      taskList: buildTaskList(svc.app, { clickhouse: false }),
      noHandleSignals: true,
      logger: new Logger(() => () => undefined),
    });
    // The two ClickHouse jobs untouched (never attempted), the other done.
    expect(await queued()).to.deep.equal([
      { key: 'wtest-1-roll', task_identifier: 'scan-span-roll', attempts: 0 },
      { key: 'wtest-2-batch', task_identifier: 'scans-batch', attempts: 0 },
    ]);
    await runJobs(svc.app);
    expect(await queued()).to.deep.equal([]);
  });
});
