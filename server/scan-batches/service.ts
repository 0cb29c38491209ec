// The scans.batch webhook event: scan counts per code per minute, for organizations with an
// enabled endpoint that lists the type (no endpoint lists it unless asked: it is off by default).
// Never one request per scan: one event per organization and minute (split when more than
// MAX_CODES_PER_EVENT codes were scanned in it).
//
// The per-minute job (workers/tasks/scans-batch.ts) announces each minute once it is LAG_MS old,
// counted by scanned_at from the raw scan events in ClickHouse. Each organization has a mark
// (scan_batch_marks.sent_through): the minutes before it have been announced. The mark starts
// where the organization first listens (no backfill), moves in the transaction that writes the
// events, and after a pause of the worker at most MAX_CATCH_UP_MINUTES are sent.
import { codeScansPerMinute } from '../analytics/queries.js';
import type { AppContext } from '../context.js';
import { emitEvents } from '../webhooks/events.js';

/** How old a minute must be before it is announced: scans reach ClickHouse in batches within it. */
export const LAG_MS = 2 * 60_000;
/** After a pause of the worker, only this many of the latest minutes are announced. */
export const MAX_CATCH_UP_MINUTES = 60;
/** Codes in one event; a minute with more scanned codes is sent as several events. */
export const MAX_CODES_PER_EVENT = 1000;

const MINUTE_MS = 60_000;

export interface CodeCount {
  ulid: string;
  slug: string;
  name: string | null;
  scans: number;
  bot_scans: number;
}

export interface ScansBatch {
  /** The minute's start (UTC). */
  minute: string;
  /** The organization's scans in the minute, humans and bots apart (all parts together). */
  scans: number;
  bot_scans: number;
  /** 1-based, of `parts`: a minute with more than MAX_CODES_PER_EVENT codes comes in parts. */
  part: number;
  parts: number;
  /** Most scanned first. */
  codes: CodeCount[];
}

/** Organizations with an enabled endpoint that lists scans.batch. */
async function listeningOrgs(app: AppContext): Promise<number[]> {
  const ids = await app
    .db('webhook_endpoints')
    .where({ enabled: true })
    .whereRaw("'scans.batch' = any (events)")
    .distinct()
    .pluck('org_id');
  return ids.map(Number);
}

/** The events of the minutes in `counts` (one minute's codes sorted, then cut into parts). */
export function batchesOf(
  counts: { code_id: number; minute: Date; scans: number; bot_scans: number }[],
  codes: Map<number, Omit<CodeCount, 'scans' | 'bot_scans'>>,
): ScansBatch[] {
  const byMinute = new Map<number, CodeCount[]>();
  for (const c of counts) {
    const code = codes.get(c.code_id);
    if (!code) continue; // a code removed for good since
    const list = byMinute.get(c.minute.getTime()) ?? [];
    list.push({ ...code, scans: c.scans, bot_scans: c.bot_scans });
    byMinute.set(c.minute.getTime(), list);
  }
  const out: ScansBatch[] = [];
  for (const [minute, list] of [...byMinute].sort(([a], [b]) => a - b)) {
    list.sort((a, b) => b.scans - a.scans || b.bot_scans - a.bot_scans || a.ulid.localeCompare(b.ulid));
    const scans = list.reduce((n, c) => n + c.scans, 0);
    const botScans = list.reduce((n, c) => n + c.bot_scans, 0);
    const parts = Math.ceil(list.length / MAX_CODES_PER_EVENT);
    for (let p = 0; p < parts; p++) {
      out.push({
        minute: new Date(minute).toISOString(),
        scans,
        bot_scans: botScans,
        part: p + 1,
        parts,
        codes: list.slice(p * MAX_CODES_PER_EVENT, (p + 1) * MAX_CODES_PER_EVENT),
      });
    }
  }
  return out;
}

/**
 * Announces every finished minute (older than LAG_MS at `now`) not yet announced, for every
 * organization that listens. Returns the events written.
 */
export async function sendScanBatches(app: AppContext, now: Date): Promise<number> {
  const through = new Date(Math.floor((now.getTime() - LAG_MS) / MINUTE_MS) * MINUTE_MS);
  const earliest = new Date(through.getTime() - MAX_CATCH_UP_MINUTES * MINUTE_MS);
  let sent = 0;
  for (const orgId of await listeningOrgs(app)) {
    sent += await app.db.transaction(async (trx) => {
      // The first run for an organization starts its mark here: nothing before it is announced.
      await trx('scan_batch_marks').insert({ org_id: orgId, sent_through: through }).onConflict('org_id').ignore();
      // Locked, so two runs at once announce each minute once.
      const mark = await trx('scan_batch_marks').where({ org_id: orgId }).forUpdate().first<{ sent_through: Date }>();
      const from = new Date(Math.max(mark!.sent_through.getTime(), earliest.getTime()));
      if (from >= through) return 0;
      const counts = await codeScansPerMinute(app.ch, orgId, from, through);
      let batches: ScansBatch[] = [];
      if (counts.length) {
        const rows = await trx('qr_codes')
          .where({ org_id: orgId })
          .whereIn('id', [...new Set(counts.map((c) => c.code_id))])
          .select('id', 'ulid', 'slug', 'name');
        const codes = new Map(rows.map((r) => [Number(r.id), { ulid: r.ulid, slug: r.slug, name: r.name }]));
        batches = batchesOf(counts, codes);
        await emitEvents(trx, orgId, 'scans.batch', batches, now);
      }
      await trx('scan_batch_marks').where({ org_id: orgId }).update({ sent_through: through });
      return batches.length;
    });
  }
  return sent;
}
