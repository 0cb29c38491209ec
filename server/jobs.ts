// Background jobs go through graphile-worker. They are enqueued with SQL in the caller's
// transaction, so a job exists exactly when the write that needs it commits.
import type { Knex } from 'knex';

export interface EnqueueOptions {
  /** Deduplicates: a pending job with the same key is replaced instead of added twice. */
  jobKey?: string;
  runAt?: Date;
  maxAttempts?: number;
  queueName?: string;
}

export async function enqueueJob(
  db: Knex | Knex.Transaction,
  task: string,
  payload: Record<string, unknown>,
  opts: EnqueueOptions = {},
): Promise<void> {
  await db.raw(
    `select graphile_worker.add_job(?, payload => ?::json, queue_name => ?, run_at => ?, max_attempts => ?, job_key => ?)`,
    [
      task,
      JSON.stringify(payload),
      opts.queueName ?? null,
      opts.runAt ?? null,
      opts.maxAttempts ?? 25,
      opts.jobKey ?? null,
    ],
  );
}
