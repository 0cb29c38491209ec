// Data access for print runs (qr_code_exports, their frozen selection qr_code_export_items and
// their ZIP in qr_code_export_chunks). Reads by ULID take the organization first; the job's reads
// go by id.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { findCodes, type CodeRow } from '../qr-codes/repository.js';
import type { ExportFormat, ExportStatus, SelectionKind } from './schema.js';

/** Codes rendered between two progress updates. */
const PAGE_SIZE = 100;

type Db = Knex | Knex.Transaction;

export interface ExportRow {
  id: number;
  ulid: string;
  org_id: number;
  source: string | null;
  status: ExportStatus;
  format: ExportFormat;
  size: number | null;
  style_id: number | null;
  style_ulid: string | null;
  style_name: string | null;
  gs1_compressed: boolean;
  selection_kind: SelectionKind;
  selection_ulid: string | null;
  total: number;
  done: number;
  attempts: number;
  zip_bytes: string | number | null;
  error_message: string | null;
  completed_at: Date | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const EXPORT_SELECT = `select e.*, s.ulid as style_ulid, s.name as style_name
    from qr_code_exports e left join qr_styles s on s.id = e.style_id`;

export async function findExport(db: Db, org: OrgRecord, ulid: string): Promise<ExportRow | null> {
  const { rows } = await db.raw<{ rows: ExportRow[] }>(`${EXPORT_SELECT} where e.org_id = ? and e.ulid = ?`, [
    org.id,
    ulid.toUpperCase(),
  ]);
  return rows[0] ?? null;
}

export async function exportById(db: Db, id: number): Promise<ExportRow | null> {
  const { rows } = await db.raw<{ rows: ExportRow[] }>(`${EXPORT_SELECT} where e.id = ?`, [id]);
  return rows[0] ?? null;
}

/** A new queued export and its frozen selection (one more row than `max` at most); returns its id, ULID and size. */
export async function insertExport(
  trx: Knex.Transaction,
  row: {
    org_id: number;
    token_id: number | null;
    source: string;
    format: ExportFormat;
    size: number | null;
    style_id: number | null;
    gs1_compressed: boolean;
    selection_kind: SelectionKind;
    selection_ulid: string | null;
    now: Date;
  },
  selection: { sql: string; binds: (string | number | string[])[] },
  max: number,
): Promise<{ id: number; ulid: string; count: number }> {
  const { now, ...fields } = row;
  const [created] = await trx('qr_code_exports')
    .insert({ ulid: newUlid(), ...fields, status: 'queued', total: 0, created_at: now, updated_at: now })
    .returning<{ id: number; ulid: string }[]>(['id', 'ulid']);
  // One more than the limit is enough to refuse; the selection is never read whole into memory.
  const { rowCount } = await trx.raw<{ rowCount: number }>(
    `insert into qr_code_export_items (export_id, position, code_id)
     select ?, (row_number() over (order by s.ord))::int - 1, s.code_id from (${selection.sql} limit ?) s`,
    [created.id, ...selection.binds, max + 1],
  );
  if (rowCount <= max) await trx('qr_code_exports').where({ id: created.id }).update({ total: rowCount });
  return { ...created, count: rowCount };
}

/** Chunk `seq` of an export's ZIP, or null after the last. */
export async function readChunk(db: Db, exportId: number, seq: number): Promise<Buffer | null> {
  const chunk = await db('qr_code_export_chunks').where({ export_id: exportId, seq }).first<{ data: Buffer }>('data');
  return chunk?.data ?? null;
}

/** Appends chunk `seq` of an export's ZIP. */
export async function writeChunk(db: Db, exportId: number, seq: number, data: Buffer): Promise<void> {
  await db('qr_code_export_chunks').insert({ export_id: exportId, seq, data });
}

/** Ids of completed exports past their expiry, the soonest first. */
export async function exportsDue(db: Db, now: Date, limit: number): Promise<number[]> {
  return db('qr_code_exports')
    .where({ status: 'completed' })
    .andWhere('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .pluck<number[]>('id');
}

/** Items after `afterPosition` with their live codes (deleted since the request: left out). */
export async function itemsPage(
  db: Db,
  org: OrgRecord,
  exportId: number,
  afterPosition: number,
): Promise<{ last: number; codes: CodeRow[] } | null> {
  const items = await db('qr_code_export_items as i')
    .join('qr_codes as c', 'c.id', 'i.code_id')
    .where('i.export_id', exportId)
    .andWhere('i.position', '>', afterPosition)
    .orderBy('i.position')
    .limit(PAGE_SIZE)
    .select<{ position: number; ulid: string }[]>('i.position', 'c.ulid');
  if (!items.length) return null;
  const byUlid = new Map(
    (
      await findCodes(
        db,
        org,
        items.map((i) => i.ulid),
      )
    ).map((c) => [c.ulid, c]),
  );
  return {
    last: items[items.length - 1].position,
    codes: items.map((i) => byUlid.get(i.ulid)).filter((c): c is CodeRow => c !== undefined),
  };
}

/**
 * Claims the export for one attempt: processing, counters reset and the chunks of an earlier
 * attempt deleted. Null when there is nothing to do (finished, or gone).
 */
export async function claimExport(app: AppContext, exportId: number): Promise<ExportRow | null> {
  return app.db.transaction(async (trx) => {
    const row = await trx('qr_code_exports').where({ id: exportId }).forUpdate().first<ExportRow | undefined>();
    if (!row || (row.status !== 'queued' && row.status !== 'processing')) return null;
    await trx('qr_code_export_chunks').where({ export_id: exportId }).del();
    const now = app.clock.now();
    await trx('qr_code_exports')
      .where({ id: exportId })
      .update({ status: 'processing', done: 0, attempts: row.attempts + 1, started_at: now, updated_at: now });
    return exportById(trx, exportId);
  });
}

/** Updates an export while its attempt `attempt` is still the one processing it (a later one wins). */
export async function updateAttempt(
  db: Db,
  exportId: number,
  attempt: number,
  patch: Record<string, unknown>,
): Promise<void> {
  await db('qr_code_exports').where({ id: exportId, status: 'processing', attempts: attempt }).update(patch);
}

/** Marks a queued or processing export failed with the reason and deletes its chunks. */
export async function markFailed(db: Knex, exportId: number, message: string, now: Date): Promise<void> {
  await db.transaction(async (trx) => {
    const updated = await trx('qr_code_exports')
      .where({ id: exportId })
      .whereIn('status', ['queued', 'processing'])
      .update({ status: 'failed', error_message: message.slice(0, 1000), completed_at: now, updated_at: now });
    if (updated) await trx('qr_code_export_chunks').where({ export_id: exportId }).del();
  });
}

/** Completed exports lose their ZIP and frozen selection and become expired. */
export async function expireExports(app: AppContext, ids: number[]): Promise<void> {
  if (!ids.length) return;
  await app.db.transaction(async (trx) => {
    const expired = await trx('qr_code_exports')
      .whereIn('id', ids)
      .andWhere({ status: 'completed' })
      .update({ status: 'expired', updated_at: app.clock.now() })
      .returning<{ id: number }[]>('id');
    const gone = expired.map((e) => e.id);
    if (!gone.length) return;
    await trx('qr_code_export_chunks').whereIn('export_id', gone).del();
    await trx('qr_code_export_items').whereIn('export_id', gone).del();
  });
}
