// Reads the source of a new import and records its preview (enqueued by createImport, job key
// `import-preview:<ulid>`). A retry goes on from the last page recorded; after the last attempt the
// import is failed with the error.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { previewImport } from '../../server/imports/job.js';
import { failImport } from '../../server/imports/service.js';
import { importTask } from './import-run.js';

export function importPreview(app: AppContext): Task {
  return importTask(app, 'import-preview', (id) => previewImport(app, id), failImport);
}
