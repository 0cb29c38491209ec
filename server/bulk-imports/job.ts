// The bulk-import-execute job (enqueued by confirmImport): creates the codes of a confirmed import
// in batches; each batch inserts its codes and marks its rows in one transaction, so a retried job
// never creates a code twice and resumes with the rows left. After the last attempt the import is
// failed with the error.
import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { getOrganizationById } from '../organizations/service.js';
import type { NewCodeRow } from '../qr-codes/repository.js';
import { hashNewPasswords, insertPreparedCodes, prepareNewCodes } from '../qr-codes/service.js';
import { emitEvent } from '../webhooks/events.js';
import {
  lockForBatch,
  markFailed,
  markFinished,
  recordOutcomes,
  renderImport,
  unhandledRows,
  type ImportRow,
  type RowOutcome,
} from './repository.js';

export const EXECUTE_TASK = 'bulk-import-execute';
const BATCH_SIZE = 500;

const FINAL = new Set(['completed', 'completed_with_errors', 'failed', 'expired', 'staged']);

/**
 * Processes one batch of unprocessed rows in one transaction: invalid rows become skipped; the
 * others are validated again (references and slugs may have changed since staging) and inserted;
 * each row's status and code_id are written with its code. Returns the rows handled (0: done).
 */
export async function executeBatch(app: AppContext, importId: number, batchSize = BATCH_SIZE): Promise<number> {
  return app.db.transaction(async (trx) => {
    const now = app.clock.now();
    const imp = await lockForBatch(trx, importId, now);
    if (!imp || FINAL.has(imp.status)) return 0;
    const rows = await unhandledRows(trx, importId, batchSize);
    if (!rows.length) return 0;
    const org = await getOrganizationById(trx, imp.org_id);
    const pending = rows.filter((r) => r.status === 'pending');
    const prepared = await prepareNewCodes(
      app,
      trx,
      org,
      pending.map((r) => r.data),
    );
    await hashNewPasswords(app, prepared);
    const toInsert = prepared.rows.filter((r): r is NewCodeRow => r !== null);
    const ids = await insertPreparedCodes(trx, toInsert);
    const updates: RowOutcome[] = [];
    for (const r of rows)
      if (r.status === 'invalid') updates.push({ row: r.row_index, status: 'skipped', codeId: null, error: null });
    pending.forEach((r, i) => {
      const code = prepared.rows[i];
      const id = code ? ids.get(code.slug.toLowerCase()) : undefined;
      if (id !== undefined) updates.push({ row: r.row_index, status: 'created', codeId: id, error: null });
      else
        updates.push({
          row: r.row_index,
          status: 'failed',
          codeId: null,
          error: prepared.errors[i] ?? { slug: ['The slug has already been taken.'] },
        });
    });
    await recordOutcomes(trx, importId, updates, now);
    return rows.length;
  });
}

/** bulk_import.completed (completed or completed_with_errors) or bulk_import.failed, in the trx of the change. */
async function emitFinished(trx: Knex.Transaction, row: ImportRow, now: Date): Promise<void> {
  await emitEvent(
    trx,
    row.org_id,
    row.status === 'failed' ? 'bulk_import.failed' : 'bulk_import.completed',
    renderImport(row),
    now,
  );
}

/** Sets the final status from the counters once no row is left. */
async function finishImport(app: AppContext, importId: number): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
    const rows = await markFinished(trx, importId, now);
    for (const row of rows) await emitFinished(trx, row, now);
  });
}

export async function executeImport(app: AppContext, importId: number, batchSize = BATCH_SIZE): Promise<void> {
  while ((await executeBatch(app, importId, batchSize)) > 0) {
    // each batch commits on its own, so progress is visible and a retry resumes where it stopped
  }
  await finishImport(app, importId);
}

/** After the last attempt: the import is failed with the reason; rows already created stay. */
export async function failImport(app: AppContext, importId: number, message: string): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
    const rows = await markFailed(trx, importId, message, now);
    for (const row of rows) await emitFinished(trx, row, now);
  });
}
