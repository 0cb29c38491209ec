// Bulk import of QR codes in two phases: staging validates every row and keeps it with its errors;
// confirming with the token (valid 24 h, stored hashed) queues a graphile-worker job in the same
// transaction. The job creates codes in batches; each batch inserts its codes and marks its rows in
// one transaction, so a retried job never creates a code twice.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, type FieldErrors } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { getOrganizationById } from '../organizations/service.js';
import type { NewCodeRow } from '../qr-codes/repository.js';
import type { CodeWrite } from '../qr-codes/schema.js';
import {
  checkReferences,
  hashNewPasswords,
  insertPreparedCodes,
  prepareNewCodes,
  resolveReferences,
} from '../qr-codes/service.js';
import { emitEvent } from '../webhooks/events.js';
import type { StageImportInput } from './schema.js';

export const EXECUTE_TASK = 'bulk-import-execute';
export const CONFIRM_TTL_MS = 24 * 60 * 60 * 1000;
/** preview_errors in the payload stop here; GET .../errors lists every one. */
export const PREVIEW_ERRORS_SHOWN = 1000;
export const BATCH_SIZE = 500;

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

function flatten(row: number, errors: FieldErrors): RowError[] {
  return Object.entries(errors).flatMap(([field, msgs]) => msgs.map((message) => ({ row, field, message })));
}

const hashToken = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

// ---------------------------------------------------------------------------------------------
// Staging.

/** A row with the defaults filled in: a key the row gives (even null) wins over the default. */
export function withDefaults(row: Record<string, unknown>, defaults: StageImportInput['defaults']): CodeWrite {
  const out: Record<string, unknown> = { ...row };
  if (out.domain_ulid === undefined && defaults?.domain_ulid) out.domain_ulid = defaults.domain_ulid;
  if (out.brand_ulid === undefined && defaults?.brand_ulid) out.brand_ulid = defaults.brand_ulid;
  return out as CodeWrite;
}

/**
 * Stages rows for the organization; `tokenId` is the token that staged them (null from a dashboard
 * session), `source` its adapter.
 */
export async function stageImport(
  app: AppContext,
  org: OrgRecord,
  input: StageImportInput,
  opts: { tokenId: number | null; source?: string },
): Promise<{ data: BulkImportOut; confirmToken: string }> {
  const max = app.config.bulkImportMaxRows;
  if (input.rows.length > max)
    throw ApiError.field('rows', `At most ${max} rows per import; got ${input.rows.length}.`);
  const defaults = input.defaults ?? {};
  const refs = await resolveReferences(app.db, org, [defaults]);
  const defaultErrors: FieldErrors = {};
  checkReferences(defaultErrors, refs, defaults, 'defaults.');
  if (Object.keys(defaultErrors).length) throw ApiError.validation(defaultErrors);

  const rows = input.rows.map((r) => withDefaults(r, defaults));
  const prepared = await prepareNewCodes(app, app.db, org, rows);
  const rowErrors = prepared.errors.flatMap((e, i) => (e ? flatten(i, e) : []));
  const valid = prepared.errors.filter((e) => e === null).length;
  const now = app.clock.now();
  const token = crypto.randomBytes(32).toString('base64url');
  const row = await app.db.transaction(async (trx) => {
    const [created] = await trx('bulk_imports')
      .insert({
        ulid: newUlid(),
        org_id: org.id,
        token_id: opts.tokenId,
        type: 'qr_codes',
        status: 'staged',
        source: opts.source ?? 'api',
        defaults: JSON.stringify(defaults),
        confirm_token_hash: hashToken(token),
        confirm_expires_at: new Date(now.getTime() + CONFIRM_TTL_MS),
        total_rows: rows.length,
        valid_row_count: valid,
        preview_errors: JSON.stringify(rowErrors.slice(0, PREVIEW_ERRORS_SHOWN)),
        created_at: now,
        updated_at: now,
      })
      .returning('*');
    await trx.batchInsert(
      'bulk_import_rows',
      rows.map((data, i) => ({
        import_id: created.id,
        row_index: i,
        data: JSON.stringify(data),
        status: prepared.errors[i] ? 'invalid' : 'pending',
        error: prepared.errors[i] ? JSON.stringify(prepared.errors[i]) : null,
      })),
      1000,
    );
    return created as ImportRow;
  });
  return { data: renderImport(row), confirmToken: token };
}

// ---------------------------------------------------------------------------------------------
// Reading and confirming.

export async function findImport(db: Db, org: OrgRecord, ulid: string, forUpdate = false): Promise<ImportRow | null> {
  const q = db('bulk_imports').where({ org_id: org.id, ulid: ulid.toUpperCase() }).first();
  return ((await (forUpdate ? q.forUpdate() : q)) as ImportRow | undefined) ?? null;
}

/** Staged imports whose token has expired become expired (checked lazily on every read). */
async function expireIfStale(app: AppContext, db: Db, row: ImportRow): Promise<ImportRow> {
  const now = app.clock.now();
  if (row.status !== 'staged' || !row.confirm_expires_at || row.confirm_expires_at > now) return row;
  const [updated] = await db('bulk_imports')
    .where({ id: row.id, status: 'staged' })
    .update({ status: 'expired', confirm_token_hash: null, updated_at: now })
    .returning('*');
  return (updated as ImportRow | undefined) ?? row;
}

export async function readImport(app: AppContext, org: OrgRecord, importUlid: string): Promise<BulkImportOut> {
  const row = await findImport(app.db, org, importUlid);
  if (!row) throw ApiError.notFound('bulk import');
  return renderImport(await expireIfStale(app, app.db, row));
}

/**
 * Confirms a staged import with its token: status queued and the job enqueued in one transaction.
 * Wrong or expired token: 422; anything but staged: 409.
 */
export async function confirmImport(
  app: AppContext,
  org: OrgRecord,
  importUlid: string,
  token: string,
): Promise<BulkImportOut> {
  const expired = () => ApiError.field('confirm_token', 'The confirm token has expired; stage the rows again.');
  const outcome = await app.db.transaction(async (trx) => {
    const found = await findImport(trx, org, importUlid, true);
    if (!found) throw ApiError.notFound('bulk import');
    const row = await expireIfStale(app, trx, found);
    if (row.status === 'expired') return { expired: true as const };
    if (row.status !== 'staged')
      throw ApiError.conflict(`The import is already ${row.status}; it can be confirmed only once.`);
    const given = hashToken(token);
    if (!row.confirm_token_hash || !crypto.timingSafeEqual(given, row.confirm_token_hash)) {
      throw ApiError.field('confirm_token', 'The confirm token does not match this import.');
    }
    const now = app.clock.now();
    const [updated] = await trx('bulk_imports')
      .where({ id: row.id })
      .update({ status: 'queued', confirmed_at: now, confirm_token_hash: null, updated_at: now })
      .returning('*');
    await enqueueJob(trx, EXECUTE_TASK, { import_id: row.id }, { jobKey: `bulk-import:${row.ulid}`, maxAttempts: 5 });
    return { row: updated as ImportRow };
  });
  // The expiry is committed before answering 422, so the import reads as expired afterwards.
  if ('expired' in outcome) throw expired();
  return renderImport(outcome.row);
}

/** Every row error, staging and execution, in row order. */
export async function importErrors(app: AppContext, org: OrgRecord, importUlid: string): Promise<RowError[]> {
  const row = await findImport(app.db, org, importUlid);
  if (!row) throw ApiError.notFound('bulk import');
  const rows = await app
    .db('bulk_import_rows')
    .where({ import_id: row.id })
    .whereNotNull('error')
    .orderBy('row_index')
    .select<{ row_index: number; error: FieldErrors }[]>('row_index', 'error');
  return rows.flatMap((r) => flatten(r.row_index, r.error));
}

// ---------------------------------------------------------------------------------------------
// Execution (the graphile-worker task calls executeImport).

const FINAL = new Set(['completed', 'completed_with_errors', 'failed', 'expired', 'staged']);

/**
 * Processes one batch of unprocessed rows in one transaction: invalid rows become skipped; the
 * others are validated again (references and slugs may have changed since staging) and inserted;
 * each row's status and code_id are written with its code. Returns the rows handled (0: done).
 */
export async function executeBatch(app: AppContext, importId: number, batchSize = BATCH_SIZE): Promise<number> {
  return app.db.transaction(async (trx) => {
    const imp = (await trx('bulk_imports').where({ id: importId }).forUpdate().first()) as ImportRow | undefined;
    if (!imp || FINAL.has(imp.status)) return 0;
    const now = app.clock.now();
    if (imp.status === 'queued')
      await trx('bulk_imports').where({ id: importId }).update({ status: 'processing', updated_at: now });
    const rows = (await trx('bulk_import_rows')
      .where({ import_id: importId })
      .whereIn('status', ['pending', 'invalid'])
      .orderBy('row_index')
      .limit(batchSize)
      .select('row_index', 'status', 'data')) as { row_index: number; status: string; data: CodeWrite }[];
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
    const updates: { row: number; status: string; codeId: number | null; error: FieldErrors | null }[] = [];
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
    const values = updates.map(() => '(?::int, ?::text, ?::bigint, ?::jsonb)').join(', ');
    await trx.raw(
      `update bulk_import_rows r
          set status = v.status, code_id = v.code_id, error = coalesce(v.error, r.error)
         from (values ${values}) as v(row_index, status, code_id, error)
        where r.import_id = ? and r.row_index = v.row_index`,
      [...updates.flatMap((u) => [u.row, u.status, u.codeId, u.error ? JSON.stringify(u.error) : null]), importId],
    );
    // Counters are recounted from the rows, so they are exact whatever happened before.
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
export async function finishImport(app: AppContext, importId: number): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
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
    const rows = await trx('bulk_imports')
      .where({ id: importId })
      .whereIn('status', ['queued', 'processing'])
      .update({ status: 'failed', error_message: message.slice(0, 1000), completed_at: now, updated_at: now })
      .returning<ImportRow[]>('*');
    for (const row of rows) await emitFinished(trx, row, now);
  });
}
