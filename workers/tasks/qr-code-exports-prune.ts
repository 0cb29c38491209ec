// Hourly: completed print runs past their expiry (QR_EXPORT_TTL_HOURS) lose their ZIP and become expired.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';
import { pruneExports } from '../../server/qr-code-exports/job.js';

export function qrCodeExportsPrune(app: AppContext): Task {
  return async (_payload, helpers) => {
    const n = await pruneExports(app);
    if (n) helpers.logger.info(`qr-code-exports-prune: ${n} export(s) expired`);
  };
}
