// The ledger of stored scan batches that the live stream follows (sql/0046_scan_stream.sql): one
// row per batch of scan_events or scan_actions (`kind`, sql/0073) stored in ClickHouse, numbered in commit order, and a NOTIFY on
// `scan_stream` in the same transaction. Every API process, on every machine, reads the rows after
// the last one it handled; the number (`seq`) is the first half of every event id.
import type { Knex } from 'knex';

/** The NOTIFY channel every API process LISTENs on. */
export const SCAN_STREAM_CHANNEL = 'scan_stream';

/** How long a stored batch can be resumed from (Last-Event-ID), and how long its row is kept. */
export const RESUME_WINDOW_MS = 24 * 3_600_000;
const KEEP_HOURS = 25;
/** An open stream (scan_stream_sessions) whose process stopped refreshing it no longer counts after this. */
export const STALE_STREAM_SECONDS = 45;

/** Which table a stored batch's rows are in: scan_events or scan_actions (sql/0073). */
export type BatchKind = 'scan' | 'action';

export interface StoredBatch {
  seq: number;
  token: string;
  kind: BatchKind;
  stored_at: Date;
  org_ids: number[];
  org_rows: number[];
}

const COLUMNS = ['seq', 'token', 'kind', 'stored_at', 'org_ids', 'org_rows'] as const;

function toBatch(r: Record<string, unknown>): StoredBatch {
  return {
    seq: Number(r.seq),
    token: String(r.token),
    kind: r.kind === 'action' ? 'action' : 'scan',
    stored_at: r.stored_at as Date,
    org_ids: (r.org_ids as (string | number)[]).map(Number),
    org_rows: (r.org_rows as number[]).map(Number),
  };
}

/**
 * Records a batch just stored in ClickHouse and notifies. The transaction's advisory lock makes
 * seq order commit order, so a reader that has seen seq N has seen every batch before it. A batch
 * stored twice (a replayed journal: ClickHouse dropped the copy) is recorded once.
 */
export async function recordStoredBatch(
  db: Knex,
  token: string,
  orgRows: [orgId: number, rows: number][],
  kind: BatchKind = 'scan',
): Promise<number | null> {
  if (!orgRows.length) return null;
  return db.transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtextextended('scan_stream_batches', 0))");
    const r = await trx.raw(
      `insert into scan_stream_batches (token, kind, org_ids, org_rows) values (?, ?, ?::bigint[], ?::integer[])
       on conflict (token) do nothing returning seq`,
      [token, kind, orgRows.map(([o]) => o), orgRows.map(([, n]) => n)],
    );
    const seq = r.rows[0] ? Number(r.rows[0].seq) : null;
    if (seq !== null) await trx.raw('select pg_notify(?, ?)', [SCAN_STREAM_CHANNEL, String(seq)]);
    return seq;
  });
}

/** Batches after `seq` (all organizations, or those holding rows of `orgId`), in order. */
export async function batchesAfter(
  db: Knex,
  after: number,
  limit: number,
  opts: { orgId?: number; upTo?: number } = {},
): Promise<StoredBatch[]> {
  const q = db('scan_stream_batches').where('seq', '>', after).orderBy('seq').limit(limit).select(COLUMNS);
  if (opts.orgId !== undefined) q.whereRaw('org_ids @> array[?]::bigint[]', [opts.orgId]);
  if (opts.upTo !== undefined) q.where('seq', '<=', opts.upTo);
  return (await q).map(toBatch);
}

export async function batchAt(db: Knex, seq: number): Promise<StoredBatch | null> {
  const r = await db('scan_stream_batches').where({ seq }).first(COLUMNS);
  return r ? toBatch(r) : null;
}

export async function lastBatchSeq(db: Knex): Promise<number> {
  const r = await db('scan_stream_batches').max('seq as seq').first();
  return Number(r?.seq ?? 0);
}

/** Whether any live stream is open, of any organization on any process (a row refreshed lately). */
export async function anyStreamOpen(db: Knex): Promise<boolean> {
  const r = await db('scan_stream_sessions')
    .whereRaw(`seen_at > now() - interval '${STALE_STREAM_SECONDS} seconds'`)
    .first(db.raw('1 as open'));
  return r !== undefined;
}

/** Drops batches past the resume window (and an hour more). */
export async function pruneStoredBatches(db: Knex): Promise<void> {
  await db('scan_stream_batches').whereRaw(`stored_at < now() - interval '${KEEP_HOURS} hours'`).delete();
}
