// The task registry: task name -> factory taking the application context.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { bulkImportExecute } from './bulk-import-execute.js';
import { domainCertificate } from './domain-certificate.js';
import { idempotencyKeysPrune } from './idempotency-keys-prune.js';

export type TaskFactory = (app: AppContext) => Task;

export const taskFactories: Record<string, TaskFactory> = {
  'bulk-import-execute': bulkImportExecute,
  'domain-certificate': domainCertificate,
  'idempotency-keys-prune': idempotencyKeysPrune,
};

/** Recurring jobs, in graphile-worker's crontab format (one line per schedule). */
export const crontab = ['0 * * * * idempotency-keys-prune'].join('\n');
