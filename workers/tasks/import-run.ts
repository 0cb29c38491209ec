// Runs a confirmed import (enqueued by confirmImport and resumeImport, job key `import-run:<ulid>`):
// codes first, then scans. Idempotent: each step commits with its progress and the continue token,
// so a retry goes on where the last one stopped. After the last attempt the import is failed.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { runImport } from '../../server/imports/job.js';
import { failImport } from '../../server/imports/service.js';

export function importTask(
  app: AppContext,
  name: string,
  work: (importId: number) => Promise<void>,
  fail: typeof failImport,
): Task {
  return async (payload, helpers) => {
    const importId = Number((payload as { import_id?: unknown }).import_id);
    if (!Number.isSafeInteger(importId)) {
      helpers.logger.error(`${name}: bad payload ${JSON.stringify(payload)}`);
      return;
    }
    try {
      await work(importId);
    } catch (err) {
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await fail(app, importId, err instanceof Error ? err.message : String(err));
        return;
      }
      throw err;
    }
  };
}

export function importRun(app: AppContext): Task {
  return importTask(app, 'import-run', (id) => runImport(app, id), failImport);
}
