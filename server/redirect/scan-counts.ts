// redirects_count, counted from the scan batches themselves: each batch's rows are summed per
// code_id and added once per batch token (countScanBatch, the sql/0025 ledger), before the batch is
// sent and again (a no-op if it was counted) whenever a journal or spill file is replayed. So the
// count follows the stored scans: a process killed outright leaves its rows in a journal, and
// whoever replays the journal counts them, once. A capped code's redirects were counted when they
// were reserved (counters.ts): the batch its process sends settles that reservation instead, and a
// replayed batch adds them, its process's reservations being released (sql/0022). A batch written by
// a version before that (its token older than sql/0022 here) is counted as that version counted it,
// and its capped codes recounted from the stored scans once it is in (leftovers.ts).
import { decodeTime } from 'ulid';
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import { countLegacyScanBatch, countScanBatch, SCAN_BATCH_COUNT_DAYS } from '../qr-codes/scan-lookup.js';
import { postgresAppliedAt } from '../stores/migrate.js';
import type { Batch } from './scan-buffer.js';

const DAY_MS = 86_400_000;

/**
 * The rows per value of a whole-number column of a batch's TabSeparated rows (`column`: its
 * position; code_id for redirects_count, org_id for the live stream's ledger). A field that is not a
 * positive whole number is not counted. Read in place, on the batch's bytes as the buffer encoded
 * them: each line's fields up to the column byte by byte, then the next line break by indexOf.
 * Splitting lines into fields (a string per field) took 23-38 ms of the event loop for 24,000 rows,
 * against 2.7-3.0 ms; a text batch (replayed from a file) is read as its UTF-8 bytes.
 */
export function countsOf(tsv: string | Buffer, column: number): [value: number, n: number][] {
  const bytes = typeof tsv === 'string' ? Buffer.from(tsv, 'utf8') : tsv;
  const counts = new Map<number, number>();
  const length = bytes.length;
  let start = 0;
  while (start < length) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = length;
    // Tabs and line breaks inside a text are escaped (tsvText), so every tab ends a field.
    // A line with fewer fields leaves `field` at its end: an empty field, not counted.
    let field = start;
    for (let c = 0; c < column && field < end; field++) if (bytes[field] === 9) c++;
    const value = wholeNumber(bytes, field, end);
    if (value > 0) counts.set(value, (counts.get(value) ?? 0) + 1);
    start = end + 1;
  }
  return [...counts];
}

/** The rows per value of a batch's column: its tally when the buffer that formed it kept one, else countsOf its rows. */
export function batchCounts(batch: Batch, column: number): [value: number, n: number][] {
  const tally = batch.tallies?.get(column);
  return tally ? [...tally] : countsOf(batch.tsv, column);
}

/** The field of `bytes` starting at `from` (ended by a tab or `end`) as a safe whole number, or -1. */
function wholeNumber(bytes: Buffer, from: number, end: number): number {
  let value = 0;
  let i = from;
  for (; i < end; i++) {
    const c = bytes[i];
    if (c === 9) break;
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return i > from && Number.isSafeInteger(value) ? value : -1;
}

/** The Postgres migrations that changed how scans are counted: the ledger, and recorded reservations. */
const LEDGER_MIGRATION = 25;
const RESERVATIONS_MIGRATION = 22;

/**
 * When this database began counting scan batches in the ledger (sql/0025) and recording
 * reservations (sql/0022), epoch ms: a batch whose token is older was written by a version before.
 */
export async function countingEras(db: Knex): Promise<{ ledgerSince: number; reservationsSince: number }> {
  const at = await postgresAppliedAt(db, [LEDGER_MIGRATION, RESERVATIONS_MIGRATION]);
  return { ledgerSince: at.get(LEDGER_MIGRATION) ?? 0, reservationsSince: at.get(RESERVATIONS_MIGRATION) ?? 0 };
}

/**
 * The scan buffer's `count` hook for scan_events. `holder`: the reservation holder of the process's
 * counters (counters.ts), which its own batches settle; none for a buffer that only replays.
 */
export function scanBatchCounter(
  db: Knex,
  log: Logger,
  columns: readonly string[],
  holder: string | null = null,
): (batch: Batch, own: boolean) => Promise<void> {
  const column = columns.indexOf('code_id');
  let eras: ReturnType<typeof countingEras> | null = null;
  return async (batch, own) => {
    let sealedAt = Date.now();
    try {
      sealedAt = decodeTime(batch.token);
    } catch {
      // Not a ULID (none of ours): counted like a new batch.
    }
    if (!own) {
      eras ??= countingEras(db).catch((err: unknown) => {
        eras = null;
        throw err;
      });
      const { ledgerSince, reservationsSince } = await eras;
      if (sealedAt < reservationsSince) {
        // Older than the ledger keeps its tokens: its other codes are recounted too.
        const ledger = sealedAt >= ledgerSince && Date.now() - sealedAt <= (SCAN_BATCH_COUNT_DAYS - 1) * DAY_MS;
        await countLegacyScanBatch(db, batch.token, batchCounts(batch, column), ledger);
        return;
      }
    }
    // Older than the ledger keeps its tokens: it may have been counted already, so it is not again.
    if (Date.now() - sealedAt > (SCAN_BATCH_COUNT_DAYS - 1) * DAY_MS) {
      log.warn({ token: batch.token, rows: batch.rows }, 'scan batch too old to count into redirects_count');
      return;
    }
    await countScanBatch(db, batch.token, batchCounts(batch, column), own ? holder : null);
  };
}
