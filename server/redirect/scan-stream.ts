// The scan buffer's `stored` hook for scan_events and scan_actions: once a batch is in ClickHouse (sent, or replayed
// from a journal or spill file), it is recorded in the live stream's ledger with the organizations
// it holds, and every API process is notified (server/analytics/live-batches.ts). It never fails
// the batch: the scans are stored; a record that cannot be written after a few tries is logged, and
// live subscribers miss that batch (its scans are in the raw export). Once recorded, a batch that
// kept its row objects (while this process's hub has subscribers, ScanBuffer keepRows) is handed to
// that hub (live-handoff.ts), so it need not read the rows back from ClickHouse.
import { anyStreamOpen, pruneStoredBatches, recordStoredBatch, type BatchKind } from '../analytics/live-batches.js';
import { handOffStoredBatch } from '../analytics/live-handoff.js';
import type { AppContext } from '../context.js';
import type { Batch } from './scan-buffer.js';
import { batchCounts } from './scan-counts.js';

const ATTEMPTS = 3;
/** The ledger's rows past the resume window are deleted about hourly, by whoever writes it. */
const PRUNE_EVERY_MS = 3_600_000;
/** How often a redirect process looks whether a live stream is open anywhere. */
const WATCH_STREAMS_MS = 2000;

/**
 * While a live stream is open, of any organization on any process or machine, the scan and action
 * buffers flush every LIVE_STREAM_FLUSH_MS instead of their usual interval (the flush interval is
 * most of the time from a redirect's answer to its event); once none is, they flush as before.
 * Returns the function that stops watching.
 */
export function flushSoonerWhileStreamed(
  app: AppContext,
  buffers: { setFlushInterval(ms: number | null): void }[],
): () => void {
  let busy = false;
  const look = async () => {
    if (busy) return;
    busy = true;
    try {
      const open = await anyStreamOpen(app.db);
      for (const b of buffers) b.setFlushInterval(open ? app.config.liveStreamFlushMs : null);
    } catch {
      // Postgres unreachable: the buffers keep their interval; the next look tries again.
    } finally {
      busy = false;
    }
  };
  void look();
  const timer = setInterval(() => void look(), WATCH_STREAMS_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export function scanBatchPublisher(
  app: AppContext,
  columns: readonly string[],
  kind: BatchKind = 'scan',
): (batch: Batch) => Promise<void> {
  const { db, log } = app;
  const column = columns.indexOf('org_id');
  let pruned = Date.now();
  return async (batch) => {
    if (Date.now() - pruned > PRUNE_EVERY_MS) {
      pruned = Date.now();
      void pruneStoredBatches(db).catch((err) => log.warn({ err }, 'live stream: pruning the batch ledger failed'));
    }
    const orgRows = batchCounts(batch, column);
    for (let i = 1; ; i++) {
      try {
        const seq = await recordStoredBatch(db, batch.token, orgRows, kind);
        if (seq !== null && batch.objects)
          handOffStoredBatch(app, { seq, token: batch.token, kind, rows: batch.objects });
        return;
      } catch (err) {
        if (i >= ATTEMPTS) {
          log.error(
            { err, token: batch.token, rows: batch.rows },
            'live stream: a stored scan batch was not published',
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * i));
      }
    }
  };
}
