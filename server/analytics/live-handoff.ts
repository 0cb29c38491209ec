// The in-process handoff of stored batches to the live stream's hub (docs/stream.md, "How it
// works"). When the process that stored a scan batch in ClickHouse also serves streams (the default
// single process), the batch's own rows go to its hub right after the batch is recorded in the
// ledger, so the hub need not read them back from ClickHouse. The ledger stays the one order: the
// hub still reads the ledger's rows after the last one it handled and takes a handed batch's rows
// for the seq it was recorded under; batches of other processes and machines, and any batch whose
// rows are not at hand, are read back as before.
import type { BatchKind } from './live-batches.js';
import type { LiveAction, LiveScan } from './queries.js';
import { SCAN_ACTION_COLUMNS, SCAN_EVENT_COLUMNS } from './scan-event.js';

/** A batch just stored and recorded: its ledger seq, its token, and its rows as they were inserted (TabSeparated). */
export interface HandedBatch {
  seq: number;
  token: string;
  kind: BatchKind;
  tsv: string;
  /** The insert's columns, in order. */
  columns: readonly string[];
}

type Receiver = (batch: HandedBatch) => void;

/** The hub of each application context, once it runs (one per process in the default mode). */
const receivers = new WeakMap<object, Receiver>();

/** The hub of `app` takes the batches stored in this process (null: no longer). */
export function receiveStoredBatches(app: object, receiver: Receiver | null): void {
  if (receiver) receivers.set(app, receiver);
  else receivers.delete(app);
}

/** Offers a stored, recorded batch to the hub of the same application context, if one runs. */
export function handOffStoredBatch(app: object, batch: HandedBatch): void {
  receivers.get(app)?.(batch);
}

const UNESCAPE = /\\(.)/gs;
const UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r', '0': '\0' };
/** A TabSeparated field as text (the escapes tsvText writes, server/redirect/scan-buffer.ts). */
const text = (s: string): string => (s.includes('\\') ? s.replace(UNESCAPE, (_, c: string) => UNESCAPES[c] ?? c) : s);

const TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})$/;
/** DateTime64(3, 'UTC') as inserted ('2026-11-27 05:01:02.345') in epoch ms; NaN for anything else. */
const timeMs = (s: string): number => {
  const m = TIME.exec(s);
  return m ? Date.parse(`${m[1]}T${m[2]}Z`) : NaN;
};

const DIGITS = /^\d{1,20}$/;
/** visitor_hash (UInt64, inserted in decimal) as the hub reads it back: leftPad(hex(visitor_hash), 16, '0'). */
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
  const names: readonly string[] = b.kind === 'scan' ? SCAN_EVENT_COLUMNS : SCAN_ACTION_COLUMNS;
  const at: Record<string, number> = {};
  for (const n of names) {
    at[n] = b.columns.indexOf(n);
    if (at[n] < 0) return null;
  }
  const scans: (LiveScan & { kind: 'scan' })[] = [];
  const actions: (LiveAction & { kind: 'action' })[] = [];
  const tsv = b.tsv;
  for (let start = 0; start < tsv.length;) {
    let end = tsv.indexOf('\n', start);
    if (end < 0) end = tsv.length;
    const f = tsv.slice(start, end).split('\t');
    start = end + 1;
    if (f.length !== b.columns.length) return null;
    const orgId = Number(f[at.org_id]);
    if (!orgIds.has(orgId)) continue;
    const [brand, domain, code, visitor, bot] = [
      f[at.brand_id],
      f[at.domain_id],
      f[at.code_id],
      f[at.visitor_hash],
      f[at.is_bot],
    ];
    const ms = timeMs(f[at.scanned_at]);
    if (
      Number.isNaN(ms) ||
      ![brand, domain, code, visitor].every((v) => DIGITS.test(v)) ||
      (bot !== '0' && bot !== '1')
    )
      return null;
    const common = {
      batch: b.token,
      scanned_at_ms: ms,
      org_id: orgId,
      brand_id: Number(brand),
      domain_id: Number(domain),
      code_id: Number(code),
      visitor_hash: hex16(visitor),
      is_bot: bot === '1' ? 1 : 0,
    } as const;
    if (b.kind === 'scan') {
      const rule = Number(f[at.matched_rule]);
      if (!Number.isInteger(rule)) return null;
      scans.push({
        ...common,
        kind: 'scan',
        scan_id: f[at.scan_id],
        country: text(f[at.country]),
        device_type: text(f[at.device_type]),
        os: text(f[at.os]),
        browser: text(f[at.browser]),
        referrer: text(f[at.referrer]),
        language: text(f[at.language]),
        provider: text(f[at.provider]),
        matched_rule: rule,
      });
    } else {
      const target = Number(f[at.target]);
      if (!Number.isInteger(target)) return null;
      actions.push({ ...common, kind: 'action', action_id: f[at.action_id], action: text(f[at.action]), target });
    }
  }
  return b.kind === 'scan' ? scans : actions;
}
