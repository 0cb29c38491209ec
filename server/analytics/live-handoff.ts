// The in-process handoff of stored batches to the live stream's hub (docs/stream.md, "How it
// works"). When the process that stored a scan batch in ClickHouse also serves streams (the default
// single process), the batch's own row objects go to its hub right after the batch is recorded in
// the ledger, so the hub need not read them back from ClickHouse nor parse the batch's text. The
// ledger stays the one order: the hub still reads the ledger's rows after the last one it handled
// and takes a handed batch's rows for the seq it was recorded under; batches of other processes and
// machines, batches replayed from a journal or spill file, and any batch whose rows are not at hand
// are read back as before.
import type { BatchKind } from './live-batches.js';
import type { LiveAction, LiveScan } from './queries.js';
import type { ScanAction, ScanEvent } from './scan-event.js';

/** A batch just stored and recorded: its ledger seq, its token, and its rows as the redirect pushed them. */
export interface HandedBatch {
  seq: number;
  token: string;
  kind: BatchKind;
  /** ScanEvent rows for kind `scan`, ScanAction rows for `action`. */
  rows: readonly object[];
}

/** The hub of an application context, once it runs (one per process in the default mode). */
export interface BatchReceiver {
  /** Whether batches' row objects are worth keeping now (the hub has subscribers). */
  wanted(): boolean;
  receive(batch: HandedBatch): void;
}

const receivers = new WeakMap<object, BatchReceiver>();

/** The hub of `app` takes the batches stored in this process (null: no longer). */
export function receiveStoredBatches(app: object, receiver: BatchReceiver | null): void {
  if (receiver) receivers.set(app, receiver);
  else receivers.delete(app);
}

/** Whether the scan buffers of `app` should keep their batches' row objects for its hub (ScanBuffer keepRows). */
export function storedRowsWanted(app: object): boolean {
  return receivers.get(app)?.wanted() ?? false;
}

/** Offers a stored, recorded batch to the hub of the same application context, if one runs. */
export function handOffStoredBatch(app: object, batch: HandedBatch): void {
  receivers.get(app)?.receive(batch);
}

const TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})$/;
let lastTime = '';
let lastMs = NaN;
/** DateTime64(3, 'UTC') as the redirect writes it ('2026-11-27 05:01:02.345') in epoch ms; NaN for anything else. */
function timeMs(s: unknown): number {
  if (s === lastTime) return lastMs;
  const m = typeof s === 'string' ? TIME.exec(s) : null;
  const ms = m ? Date.parse(`${m[1]}T${m[2]}Z`) : NaN;
  if (m) [lastTime, lastMs] = [s as string, ms];
  return ms;
}

const DIGITS = /^\d{1,20}$/;
/** visitor_hash (UInt64 in decimal) as the hub reads it back: leftPad(hex(visitor_hash), 16, '0'). */
const hex16 = (s: string): string => BigInt(s).toString(16).toUpperCase().padStart(16, '0');

/**
 * The rows of a handed batch of the given organizations, exactly as the hub would read them back
 * from ClickHouse (scansOfBatches, actionsOfBatches), or null when a row is not as the redirect
 * writes it (the hub then reads the batch back).
 */
export function rowsOfHandedBatch(
  b: HandedBatch,
  orgIds: ReadonlySet<number>,
): (LiveScan & { kind: 'scan' })[] | (LiveAction & { kind: 'action' })[] | null {
  const scans: (LiveScan & { kind: 'scan' })[] = [];
  const actions: (LiveAction & { kind: 'action' })[] = [];
  for (const row of b.rows as readonly (ScanEvent | ScanAction)[]) {
    if (!orgIds.has(row.org_id)) continue;
    const ms = timeMs(row.scanned_at);
    if (Number.isNaN(ms) || !DIGITS.test(row.visitor_hash) || (row.is_bot !== 0 && row.is_bot !== 1)) return null;
    if (b.kind === 'scan') {
      const r = row as ScanEvent;
      scans.push({
        kind: 'scan',
        batch: b.token,
        scan_id: r.scan_id,
        scanned_at_ms: ms,
        org_id: r.org_id,
        brand_id: r.brand_id,
        domain_id: r.domain_id,
        code_id: r.code_id,
        visitor_hash: hex16(r.visitor_hash),
        is_bot: r.is_bot,
        country: r.country,
        device_type: r.device_type,
        os: r.os,
        browser: r.browser,
        referrer: r.referrer,
        language: r.language,
        provider: r.provider,
        matched_rule: r.matched_rule,
      });
    } else {
      const a = row as ScanAction;
      actions.push({
        kind: 'action',
        batch: b.token,
        action_id: a.action_id,
        scanned_at_ms: ms,
        org_id: a.org_id,
        brand_id: a.brand_id,
        domain_id: a.domain_id,
        code_id: a.code_id,
        visitor_hash: hex16(a.visitor_hash),
        is_bot: a.is_bot,
        action: a.action,
        target: a.target,
      });
    }
  }
  return b.kind === 'scan' ? scans : actions;
}
