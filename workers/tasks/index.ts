// The task registry: task name -> factory taking the application context.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { bulkImportExecute } from './bulk-import-execute.js';
import { domainCertificate } from './domain-certificate.js';
import { domainMaintenance } from './domain-maintenance.js';
import { idempotencyKeysPrune } from './idempotency-keys-prune.js';
import { importPreview } from './import-preview.js';
import { importRun } from './import-run.js';
import { qrCodeExport } from './qr-code-export.js';
import { qrCodeExportsPrune } from './qr-code-exports-prune.js';
import { scanAlerts } from './scan-alerts.js';
import { scansBatch } from './scans-batch.js';
import { webhookDeliver } from './webhook-deliver.js';
import { webhookLogPrune } from './webhook-log-prune.js';
import { webhookSweep } from './webhook-sweep.js';

export type TaskFactory = (app: AppContext) => Task;

export const taskFactories: Record<string, TaskFactory> = {
  'bulk-import-execute': bulkImportExecute,
  'domain-certificate': domainCertificate,
  'domain-maintenance': domainMaintenance,
  'idempotency-keys-prune': idempotencyKeysPrune,
  'import-preview': importPreview,
  'import-run': importRun,
  'qr-code-export': qrCodeExport,
  'qr-code-exports-prune': qrCodeExportsPrune,
  'scan-alerts': scanAlerts,
  'scans-batch': scansBatch,
  'webhook-deliver': webhookDeliver,
  'webhook-log-prune': webhookLogPrune,
  'webhook-sweep': webhookSweep,
};

/**
 * Recurring jobs, in graphile-worker's crontab format (one line per schedule, UTC). domain-maintenance
 * runs daily at 03:17; `fill=1d` runs a missed one when the worker comes back within a day.
 */
export const crontab = [
  '0 * * * * idempotency-keys-prune',
  '40 * * * * qr-code-exports-prune',
  '17 3 * * * domain-maintenance ?fill=1d',
  '* * * * * webhook-sweep',
  '30 3 * * * webhook-log-prune',
  '15 1 * * * scan-alerts',
  '* * * * * scans-batch',
].join('\n');
