// Renders a print run into its ZIP (enqueued by createExport, job key `qr-code-export:<ulid>`, one
// queue per organization so one organization's runs go one at a time). A retry starts the ZIP over.
// A refusal no retry can change (the override style was deleted meanwhile) and the last attempt's
// error mark the export failed.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { ApiError } from '../../server/errors.js';
import { failExport, runExport } from '../../server/qr-code-exports/job.js';

export function qrCodeExport(app: AppContext): Task {
  return async (payload, helpers) => {
    const exportId = Number((payload as { export_id?: unknown }).export_id);
    if (!Number.isSafeInteger(exportId)) {
      helpers.logger.error(`qr-code-export: bad payload ${JSON.stringify(payload)}`);
      return;
    }
    try {
      await runExport(app, exportId);
    } catch (err) {
      if (err instanceof ApiError || helpers.job.attempts >= helpers.job.max_attempts) {
        await failExport(app, exportId, err instanceof Error ? err.message : String(err));
        return;
      }
      throw err;
    }
  };
}
