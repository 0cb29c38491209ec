// The task registry: task name -> factory taking the application context. A task a service
// enqueues takes its name from the constant the service enqueues it with; a crontab-only task's
// name is declared here once, for the registry and the crontab alike.
import type { Task } from 'graphile-worker';
import { EXECUTE_TASK } from '../../server/bulk-imports/job.js';
import type { AppContext } from '../../server/context.js';
import { CERTIFICATE_TASK } from '../../server/domains/certificate-jobs.js';
import { EXPORT_TASK, PRUNE_TASK as EXPORTS_PRUNE_TASK } from '../../server/qr-code-exports/job.js';
import { PREVIEW_TASK, RUN_TASK } from '../../server/imports/service.js';
import { DELIVER_TASK } from '../../server/webhooks/service.js';
import { bulkImportExecute } from './bulk-import-execute.js';
import { domainCertificate } from './domain-certificate.js';
import { domainMaintenance } from './domain-maintenance.js';
import { idempotencyKeysPrune } from './idempotency-keys-prune.js';
import { importPreview } from './import-preview.js';
import { importRun } from './import-run.js';
import { qrCodeExport } from './qr-code-export.js';
import { qrCodeExportsPrune } from './qr-code-exports-prune.js';
import { scanAlerts } from './scan-alerts.js';
import { scanSpanRoll } from './scan-span-roll.js';
import { scansBatch } from './scans-batch.js';
import { webhookDeliver } from './webhook-deliver.js';
import { webhookLogPrune } from './webhook-log-prune.js';
import { webhookSweep } from './webhook-sweep.js';

export type TaskFactory = (app: AppContext) => Task;

// Crontab-only tasks.
const DOMAIN_MAINTENANCE_TASK = 'domain-maintenance';
const IDEMPOTENCY_PRUNE_TASK = 'idempotency-keys-prune';
const SCAN_ALERTS_TASK = 'scan-alerts';
const SCANS_BATCH_TASK = 'scans-batch';
const SCAN_SPAN_ROLL_TASK = 'scan-span-roll';
const WEBHOOK_LOG_PRUNE_TASK = 'webhook-log-prune';
const WEBHOOK_SWEEP_TASK = 'webhook-sweep';

export const taskFactories: Record<string, TaskFactory> = {
  [EXECUTE_TASK]: bulkImportExecute,
  [CERTIFICATE_TASK]: domainCertificate,
  [DOMAIN_MAINTENANCE_TASK]: domainMaintenance,
  [IDEMPOTENCY_PRUNE_TASK]: idempotencyKeysPrune,
  [PREVIEW_TASK]: importPreview,
  [RUN_TASK]: importRun,
  [EXPORT_TASK]: qrCodeExport,
  [EXPORTS_PRUNE_TASK]: qrCodeExportsPrune,
  [SCAN_ALERTS_TASK]: scanAlerts,
  [SCANS_BATCH_TASK]: scansBatch,
  [SCAN_SPAN_ROLL_TASK]: scanSpanRoll,
  [DELIVER_TASK]: webhookDeliver,
  [WEBHOOK_LOG_PRUNE_TASK]: webhookLogPrune,
  [WEBHOOK_SWEEP_TASK]: webhookSweep,
};

/**
 * The tasks that read or write ClickHouse. A worker without it (`make worker` beside embedded chDB,
 * which the server process owns) does not take them, so they wait for the server's own worker rather
 * than failing there and, an import after its last attempt, for good. A new task that reaches
 * `app.ch` (directly or through a service) belongs here.
 */
export const CLICKHOUSE_TASKS: ReadonlySet<string> = new Set([
  RUN_TASK,
  SCAN_ALERTS_TASK,
  SCANS_BATCH_TASK,
  SCAN_SPAN_ROLL_TASK,
]);

/**
 * Recurring jobs, in graphile-worker's crontab format (one line per schedule, UTC). domain-maintenance
 * runs daily at 03:17; `fill=1d` runs a missed one when the worker comes back within a day.
 */
export const crontab = [
  `0 * * * * ${IDEMPOTENCY_PRUNE_TASK}`,
  `40 * * * * ${EXPORTS_PRUNE_TASK}`,
  `17 3 * * * ${DOMAIN_MAINTENANCE_TASK} ?fill=1d`,
  `* * * * * ${WEBHOOK_SWEEP_TASK}`,
  `30 3 * * * ${WEBHOOK_LOG_PRUNE_TASK}`,
  `15 1 * * * ${SCAN_ALERTS_TASK}`,
  `* * * * * ${SCANS_BATCH_TASK}`,
  `*/10 * * * * ${SCAN_SPAN_ROLL_TASK}`,
].join('\n');
