// Executes a confirmed bulk import (enqueued by confirmImport, job key `bulk-import:<ulid>`).
// Idempotent: every batch commits its codes together with its rows' status, so a retry resumes
// with the rows left. After the last attempt the import is marked failed with the error.
import type { Task } from 'graphile-worker';
import { executeImport, failImport } from '../../server/bulk-imports/job.js';
import type { AppContext } from '../../server/context.js';

export function bulkImportExecute(app: AppContext): Task {
  return async (payload, helpers) => {
    const importId = Number((payload as { import_id?: unknown }).import_id);
    if (!Number.isSafeInteger(importId)) {
      helpers.logger.error(`bulk-import-execute: bad payload ${JSON.stringify(payload)}`);
      return;
    }
    try {
      await executeImport(app, importId);
    } catch (err) {
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await failImport(app, importId, err instanceof Error ? err.message : String(err));
        return;
      }
      throw err;
    }
  };
}
