// Data access for bulk imports (bulk_imports and their rows, bulk_import_rows), and the import as
// the API and its webhook events show it (renderImport: the service answers with it, the job
// emits it). Reads by ULID take the organization first; the job's go by id.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { FieldErrors } from '../errors.js';
import type { CodeWrite } from '../qr-codes/schema.js';

type Db = Knex | Knex.Transaction;

export interface RowError {
  row: number;
  field: string;
  message: string;
}

export interface ImportRow {
  id: number;
  ulid: string;
  org_id: number;
  type: string;
  status: string;
  source: string | null;
  confirm_token_hash: Buffer | null;
  confirm_expires_at: Date | null;
  total_rows: number;
  valid_row_count: number | null;
  processed_rows: number;
  success_count: number;
  failed_count: number;
  skipped_count: number;
  preview_errors: RowError[];
  error_message: string | null;
  confirmed_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface BulkImportOut {
  ulid: string;
  type: string;
  status: string;
  source: string | null;
  awaiting_confirmation: boolean;
  total_rows: number;
  processed_rows: number;
  success_count: number;
  failed_count: number;
  skipped_count: number;
  valid_row_count: number | null;
  progress_percent: number;
  preview_errors: RowError[];
  error_message: string | null;
  has_error_report: boolean;
  confirmed_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export function renderImport(r: ImportRow): BulkImportOut {
  return {
    ulid: r.ulid,
    type: r.type,
    status: r.status,
    source: r.source,
    awaiting_confirmation: r.status === 'staged',
    total_rows: r.total_rows,
    processed_rows: r.processed_rows,
    success_count: r.success_count,
    failed_count: r.failed_count,
    skipped_count: r.skipped_count,
    valid_row_count: r.valid_row_count,
    progress_percent: r.total_rows ? Math.floor((r.processed_rows * 100) / r.total_rows) : 0,
    preview_errors: r.preview_errors,
    error_message: r.error_message,
    has_error_report: (r.valid_row_count ?? r.total_rows) < r.total_rows || r.failed_count > 0,
    confirmed_at: r.confirmed_at?.toISOString() ?? null,
    completed_at: r.completed_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function flatten(row: number, errors: FieldErrors): RowError[] {
  return Object.entries(errors).flatMap(([field, msgs]) => msgs.map((message) => ({ row, field, message })));
}

/** A staged import and its rows (invalid ones with their errors), in the caller's transaction. */
export async function insertImport(
  trx: Knex.Transaction,
  fields: Record<string, unknown>,
  rows: { data: CodeWrite; error: FieldErrors | null }[],
): Promise<ImportRow> {
  const [created] = await trx('bulk_imports')
    .insert({ ulid: newUlid(), ...fields })
    .returning('*');
  await trx.batchInsert(
    'bulk_import_rows',
    rows.map((r, i) => ({
      import_id: created.id,
      row_index: i,
      data: JSON.stringify(r.data),
      status: r.error ? 'invalid' : 'pending',
      error: r.error ? JSON.stringify(r.error) : null,
    })),
    1000,
  );
  return created as ImportRow;
}

export async function findImport(db: Db, org: OrgRecord, ulid: string, forUpdate = false): Promise<ImportRow | null> {
  const q = db('bulk_imports').where({ org_id: org.id, ulid: ulid.toUpperCase() }).first();
  return ((await (forUpdate ? q.forUpdate() : q)) as ImportRow | undefined) ?? null;
}

/** A staged import marked expired, its token forgotten; null when it is no longer staged. */
export async function markExpired(db: Db, id: number, now: Date): Promise<ImportRow | null> {
  const [updated] = await db('bulk_imports')
    .where({ id, status: 'staged' })
    .update({ status: 'expired', confirm_token_hash: null, updated_at: now })
    .returning('*');
  return (updated as ImportRow | undefined) ?? null;
}

/** A staged import marked queued (confirmed), its token forgotten. */
export async function markQueued(trx: Knex.Transaction, id: number, now: Date): Promise<ImportRow> {
  const [updated] = await trx('bulk_imports')
    .where({ id })
    .update({ status: 'queued', confirmed_at: now, confirm_token_hash: null, updated_at: now })
    .returning('*');
  return updated as ImportRow;
}

/** Rows with an error, in row order. */
export async function rowsWithErrors(db: Db, importId: number): Promise<{ row_index: number; error: FieldErrors }[]> {
  return db('bulk_import_rows')
    .where({ import_id: importId })
    .whereNotNull('error')
    .orderBy('row_index')
    .select<{ row_index: number; error: FieldErrors }[]>('row_index', 'error');
}

/** The import locked for its batch; a queued one becomes processing. */
export async function lockForBatch(trx: Knex.Transaction, importId: number, now: Date): Promise<ImportRow | null> {
  const imp = (await trx('bulk_imports').where({ id: importId }).forUpdate().first()) as ImportRow | undefined;
  if (imp?.status === 'queued')
    await trx('bulk_imports').where({ id: importId }).update({ status: 'processing', updated_at: now });
  return imp ?? null;
}

/** Up to `limit` rows not handled yet (pending or invalid), in row order. */
export async function unhandledRows(
  trx: Knex.Transaction,
  importId: number,
  limit: number,
): Promise<{ row_index: number; status: string; data: CodeWrite }[]> {
  return (await trx('bulk_import_rows')
    .where({ import_id: importId })
    .whereIn('status', ['pending', 'invalid'])
    .orderBy('row_index')
    .limit(limit)
    .select('row_index', 'status', 'data')) as { row_index: number; status: string; data: CodeWrite }[];
}

export interface RowOutcome {
  row: number;
  status: string;
  codeId: number | null;
  error: FieldErrors | null;
}

/** Writes each row's outcome, then recounts the import's counters from its rows (exact whatever happened before). */
export async function recordOutcomes(
  trx: Knex.Transaction,
  importId: number,
  updates: RowOutcome[],
  now: Date,
): Promise<void> {
  const values = updates.map(() => '(?::int, ?::text, ?::bigint, ?::jsonb)').join(', ');
  await trx.raw(
    `update bulk_import_rows r
        set status = v.status, code_id = v.code_id, error = coalesce(v.error, r.error)
       from (values ${values}) as v(row_index, status, code_id, error)
      where r.import_id = ? and r.row_index = v.row_index`,
    [...updates.flatMap((u) => [u.row, u.status, u.codeId, u.error ? JSON.stringify(u.error) : null]), importId],
  );
  await trx.raw(
    `update bulk_imports i
        set processed_rows = c.processed, success_count = c.created, failed_count = c.failed,
            skipped_count = c.skipped, updated_at = ?
       from (select count(*) filter (where status in ('created', 'failed', 'skipped'))::int as processed,
                    count(*) filter (where status = 'created')::int as created,
                    count(*) filter (where status = 'failed')::int as failed,
                    count(*) filter (where status = 'skipped')::int as skipped
               from bulk_import_rows where import_id = ?) c
      where i.id = ?`,
    [now, importId, importId],
  );
}

/** The final status from the counters, once no row is left; the imports it finished. */
export async function markFinished(trx: Knex.Transaction, importId: number, now: Date): Promise<ImportRow[]> {
  const { rows } = await trx.raw<{ rows: ImportRow[] }>(
    `update bulk_imports
        set status = case when success_count = 0 then 'failed'
                          when failed_count + skipped_count = 0 then 'completed'
                          else 'completed_with_errors' end,
            error_message = case when success_count = 0 then 'No row could be created; see the error report.' else null end,
            completed_at = ?, updated_at = ?
      where id = ? and status in ('queued', 'processing')
        and not exists (select 1 from bulk_import_rows where import_id = ? and status in ('pending', 'invalid'))
      returning *`,
    [now, now, importId, importId],
  );
  return rows;
}

/** A queued or processing import marked failed with the reason; the imports it failed. */
export async function markFailed(
  trx: Knex.Transaction,
  importId: number,
  message: string,
  now: Date,
): Promise<ImportRow[]> {
  return trx('bulk_imports')
    .where({ id: importId })
    .whereIn('status', ['queued', 'processing'])
    .update({ status: 'failed', error_message: message.slice(0, 1000), completed_at: now, updated_at: now })
    .returning<ImportRow[]>('*');
}
