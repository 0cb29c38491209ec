// Bulk import of QR codes in two phases: staging validates every row and keeps it with its errors;
// confirming with the token (valid 24 h, stored hashed) queues the job (job.ts) in the same
// transaction. Data access is repository.ts.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, type FieldErrors } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import type { CodeWrite } from '../qr-codes/schema.js';
import { checkReferences, prepareNewCodes, requireCodeFeatures, resolveReferences } from '../qr-codes/service.js';
import { csvRowErrors, csvRows } from './csv.js';
import { EXECUTE_TASK } from './job.js';
import {
  findImport,
  flatten,
  insertImport,
  markExpired,
  markQueued,
  renderImport,
  rowsWithErrors,
  type BulkImportOut,
  type ImportRow,
  type RowError,
} from './repository.js';
import type { StageImportInput } from './schema.js';

export const CONFIRM_TTL_MS = 24 * 60 * 60 * 1000;
/** preview_errors in the payload stop here; GET .../errors lists every one. */
export const PREVIEW_ERRORS_SHOWN = 1000;

type Db = Knex | Knex.Transaction;

const hashToken = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

// ---------------------------------------------------------------------------------------------
// Staging.

/** A row with the defaults filled in: a key the row gives (even null) wins over the default. */
function withDefaults(row: Record<string, unknown>, defaults: StageImportInput['defaults']): CodeWrite {
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
  if ((input.rows === undefined) === (input.csv === undefined))
    throw ApiError.field('rows', 'Give the rows to import either as rows or as a CSV file (csv), not both.');
  const csv = input.csv === undefined ? null : csvRows(input.csv);
  const given = csv ? csv.rows : input.rows!;
  const max = app.config.bulkImportMaxRows;
  if (given.length > max)
    throw ApiError.field(csv ? 'csv' : 'rows', `At most ${max} rows per import; got ${given.length}.`);
  const defaults = input.defaults ?? {};
  const refs = await resolveReferences(app.db, org, [defaults]);
  const defaultErrors: FieldErrors = {};
  checkReferences(defaultErrors, refs, defaults, 'defaults.');
  if (Object.keys(defaultErrors).length) throw ApiError.validation(defaultErrors);

  const rows = given.map((r) => withDefaults(r, defaults));
  // A plan-gated key (custom_js) refuses the whole request, as POST /v1/qr-codes does.
  for (const r of rows) requireCodeFeatures(org, r);
  const prepared = await prepareNewCodes(app, app.db, org, rows);
  // A CSV file is refused whole, its errors by line: the lines cannot be fixed in a preview.
  const csvError = csv && csvRowErrors(csv, prepared.errors);
  if (csvError) throw csvError;
  const rowErrors = prepared.errors.flatMap((e, i) => (e ? flatten(i, e) : []));
  const valid = prepared.errors.filter((e) => e === null).length;
  const now = app.clock.now();
  const token = crypto.randomBytes(32).toString('base64url');
  const row = await app.db.transaction(async (trx) => {
    return insertImport(
      trx,
      {
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
      },
      rows.map((data, i) => ({ data, error: prepared.errors[i] })),
    );
  });
  return { data: renderImport(row), confirmToken: token };
}

// ---------------------------------------------------------------------------------------------
// Reading and confirming.

/** Staged imports whose token has expired become expired (checked lazily on every read). */
async function expireIfStale(app: AppContext, db: Db, row: ImportRow): Promise<ImportRow> {
  const now = app.clock.now();
  if (row.status !== 'staged' || !row.confirm_expires_at || row.confirm_expires_at > now) return row;
  return (await markExpired(db, row.id, now)) ?? row;
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
    const updated = await markQueued(trx, row.id, now);
    await enqueueJob(trx, EXECUTE_TASK, { import_id: row.id }, { jobKey: `bulk-import:${row.ulid}`, maxAttempts: 5 });
    return { row: updated };
  });
  // The expiry is committed before answering 422, so the import reads as expired afterwards.
  if ('expired' in outcome) throw expired();
  return renderImport(outcome.row);
}

/** Every row error, staging and execution, in row order. */
export async function importErrors(app: AppContext, org: OrgRecord, importUlid: string): Promise<RowError[]> {
  const row = await findImport(app.db, org, importUlid);
  if (!row) throw ApiError.notFound('bulk import');
  const rows = await rowsWithErrors(app.db, row.id);
  return rows.flatMap((r) => flatten(r.row_index, r.error));
}
