// Scan anomaly alerts: a code scanned steadily that suddenly drops well below, or jumps well above,
// its own recent baseline sends code.scans_dropped or code.scans_spiked. Codes opt in with
// settings.scan_alerts, their own or their brand's (the code's own value wins).
//
// The rule, for the day D just ended (UTC):
//   baseline = the median of the code's scans on the same weekday of the 4 weeks before
//              (D-7, D-14, D-21, D-28; a day without scans counts 0)
//   nothing is judged when the baseline is under MIN_BASELINE scans a day (quiet codes)
//   dropped  = scans on D below DROP_RATIO x baseline
//   spiked   = scans on D above SPIKE_RATIO x baseline
// Bots are left out. The daily job (workers/tasks/scan-alerts.ts) reads the daily rollup in one
// ClickHouse query per organization, and records each alert (scan_alerts) in the transaction that
// writes its event, so a second run for the same day sends nothing twice.
import type { Knex } from 'knex';
import { codeScansOnDays } from '../analytics/queries.js';
import type { AppContext } from '../context.js';
import { emitEvents } from '../webhooks/events.js';

const MIN_BASELINE = 50;
const DROP_RATIO = 0.1;
const SPIKE_RATIO = 10;
const BASELINE_WEEKS = 4;

const ALERT_EVENTS = ['code.scans_dropped', 'code.scans_spiked'] as const;

export type Verdict = { kind: 'dropped' | 'spiked'; baseline: number } | null;

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The rule: `scans` on the day against the same weekday of the previous weeks (oldest last or first). */
export function judge(scans: number, sameWeekdays: number[]): Verdict {
  const baseline = median(sameWeekdays);
  if (baseline < MIN_BASELINE) return null;
  if (scans < DROP_RATIO * baseline) return { kind: 'dropped', baseline };
  if (scans > SPIKE_RATIO * baseline) return { kind: 'spiked', baseline };
  return null;
}

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** D and the same weekday of the BASELINE_WEEKS weeks before it, newest first. */
export function alertDays(day: string): string[] {
  const d = Date.parse(`${day}T00:00:00Z`);
  return Array.from({ length: BASELINE_WEEKS + 1 }, (_, w) => isoDay(d - w * 7 * DAY_MS));
}

interface OptedIn {
  id: number;
  ulid: string;
  name: string | null;
  slug: string;
}

/** Active codes of the organization that opted in, by their own settings or their brand's. */
async function optedInCodes(db: Knex, orgId: number): Promise<OptedIn[]> {
  const rows = await db('qr_codes as c')
    .leftJoin('brands as b', 'b.id', 'c.brand_id')
    .where({ 'c.org_id': orgId, 'c.status': 'active' })
    .whereNull('c.deleted_at')
    .whereRaw(
      `case when c.settings -> 'scan_alerts' is not null then c.settings -> 'scan_alerts' = 'true'::jsonb
            else coalesce(b.settings -> 'scan_alerts' = 'true'::jsonb, false) end`,
    )
    .select('c.id', 'c.ulid', 'c.name', 'c.slug');
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** Organizations with an enabled endpoint that wants scan alerts. */
async function subscribedOrgs(db: Knex): Promise<number[]> {
  const ids = await db('webhook_endpoints')
    .where({ enabled: true })
    .whereRaw('events && ?::text[]', [[...ALERT_EVENTS]])
    .distinct()
    .pluck('org_id');
  return ids.map(Number);
}

/**
 * Judges `day` (YYYY-MM-DD, a finished UTC day) for every organization that listens, and sends
 * each alert once. Returns the alerts sent.
 */
export async function detectScanAnomalies(app: AppContext, day: string): Promise<number> {
  const days = alertDays(day);
  let sent = 0;
  for (const orgId of await subscribedOrgs(app.db)) {
    const codes = await optedInCodes(app.db, orgId);
    if (!codes.length) continue;
    const scans = new Map<string, number>();
    for (const r of await codeScansOnDays(
      app.ch,
      orgId,
      codes.map((c) => c.id),
      days,
    )) {
      scans.set(`${r.code_id}:${r.day}`, r.scans);
    }
    const of = (code: OptedIn, d: string) => scans.get(`${code.id}:${d}`) ?? 0;
    const alerts = codes.flatMap((code) => {
      const observed = of(code, day);
      const weeks = days.slice(1).map((d) => ({ day: d, scans: of(code, d) }));
      const verdict = judge(
        observed,
        weeks.map((w) => w.scans),
      );
      return verdict ? [{ code, observed, weeks, ...verdict }] : [];
    });
    if (!alerts.length) continue;
    sent += await app.db.transaction(async (trx) => {
      const now = app.clock.now();
      const recorded = await trx('scan_alerts')
        .insert(
          alerts.map((a) => ({
            org_id: orgId,
            code_id: a.code.id,
            day,
            kind: a.kind,
            observed: a.observed,
            baseline: a.baseline,
            created_at: now,
          })),
        )
        .onConflict(['code_id', 'day', 'kind'])
        .ignore()
        .returning(['code_id', 'kind']);
      const fresh = new Set(recorded.map((r: { code_id: number; kind: string }) => `${Number(r.code_id)}:${r.kind}`));
      const data = (kind: 'dropped' | 'spiked') =>
        alerts
          .filter((a) => a.kind === kind && fresh.has(`${a.code.id}:${kind}`))
          .map((a) => ({
            code: { ulid: a.code.ulid, name: a.code.name, slug: a.code.slug },
            day,
            scans: a.observed,
            baseline: a.baseline,
            ratio: Math.round((a.observed / a.baseline) * 1000) / 1000,
            baseline_days: a.weeks,
            rule:
              kind === 'dropped'
                ? `fewer than ${DROP_RATIO * 100}% of the median of the same weekday over the previous ${BASELINE_WEEKS} weeks`
                : `more than ${SPIKE_RATIO} times the median of the same weekday over the previous ${BASELINE_WEEKS} weeks`,
          }));
      await emitEvents(trx, orgId, 'code.scans_dropped', data('dropped'), now);
      await emitEvents(trx, orgId, 'code.scans_spiked', data('spiked'), now);
      return fresh.size;
    });
  }
  return sent;
}
