// The longer spans of finished days (clickhouse/0031_scan_span_roll.ts). Recording a scan writes its
// one-day rollup rows only (`pending = 1` while its day is not over); once a day is over, its
// pending one-day rows are rolled into the spans of 4, 16 and 64 days that hold it, once, and the day
// is recorded in scan_span_rolls. Readers use a longer span only when every day of it has been
// rolled (spans.ts); the one-day spans are always complete.
//
// Exactly once:
// - The roll's insert carries a deduplication token of its day, so a roll retried after a crash
//   between the insert and the record of the day is dropped by ClickHouse (the tables' windows).
// - The view marks a row pending when it ran before the end of the row's day (ClickHouse's clock).
//   After the day is over no pending row of it appears: a scan of that day stored later (a spill or
//   a journal replayed, an import) has its longer spans written by the view at once. The roll waits
//   until the day has been over for ROLL_DELAY_MS, and until no insert begun before the day's end is
//   still running (system.processes), so it reads every pending row the day will have.
// - Days are rolled in order, each after the one before is recorded: the last day rolled is also the
//   last day every span of which is complete.
import type { ClickHouseHandle } from '../stores/clickhouse.js';
import { insertSelect } from '../stores/clickhouse.js';
import { SPAN_LEVELS } from '../../clickhouse/0029_scan_span_levels.js';

const DAY_MS = 86_400_000;

/** How long after a day's end (UTC, by ClickHouse's clock) its longer spans are rolled. */
export const ROLL_DELAY_MS = 10 * 60_000;

/** How long a process keeps the last day rolled before it asks ClickHouse again. */
const ROLLED_TTL_MS = 60_000;

export const SPAN_COLUMNS = [
  'org_id',
  'scope',
  'dimension',
  'code_id',
  'brand_id',
  'is_bot',
  'span',
  'start',
  'value',
  'scans',
  'visitors',
] as const;

/**
 * Whether a one-day rollup row of `day` is pending: its day is not over by ClickHouse's clock, in
 * UTC (not today(), the day of the server's time zone). clickhouse/0031's view has the same rule.
 */
export const pendingOf = (day: string): string => `toUInt8(${day} >= toDate(now(), 'UTC'))`;

const dayString = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dayMs = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);

/**
 * The longer spans (every length but one day) of the one-day rows of `source` that match `rows`:
 * each row's scans and visitor state added to the span of each length that holds its day. In the
 * table's key order, so that the same rows always make the same insert blocks: a deduplication token
 * drops a retried insert's blocks by their number, whatever they hold.
 */
export function longerSpansOf(source: string, rows: string): string {
  const levels = SPAN_LEVELS.filter((l) => l > 0).join(', ');
  return `SELECT org_id, scope, dimension, code_id, brand_id, is_bot, level AS span,
       d - (toUInt32(d) % bitShiftLeft(toUInt32(1), level)) AS start, value,
       sum(s) AS scans, uniqCombinedMergeState(12)(v) AS visitors
FROM (SELECT org_id, scope, dimension, code_id, brand_id, is_bot, start AS d, value, scans AS s, visitors AS v
        FROM ${source}
       WHERE span = 0 AND (${rows}))
ARRAY JOIN CAST([${levels}] AS Array(UInt8)) AS level
GROUP BY org_id, scope, dimension, code_id, brand_id, is_bot, span, start, value
ORDER BY org_id, scope, dimension, is_bot, span, start, code_id, brand_id, value`;
}

/** The last day rolled, per handle, and when it was read. */
const rolled = new WeakMap<ClickHouseHandle, { day: string; at: number }>();

/** Rolls one day: its longer spans, then the record that it is rolled (both deduplicated by the day). */
export async function rollDay(ch: ClickHouseHandle, day: string): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
  const db = ch.database;
  await insertSelect(ch.client, {
    table: `${db}.scan_spans`,
    columns: SPAN_COLUMNS,
    select: longerSpansOf(`${db}.scan_spans`, `pending = 1 AND start = toDate('${day}')`),
    dedupToken: `span-roll-${day}`,
  });
  await insertSelect(ch.client, {
    table: `${db}.scan_span_rolls`,
    columns: ['day'],
    select: `SELECT toDate('${day}')`,
    dedupToken: `span-roll-mark-${day}`,
  });
  rolled.set(ch, { day, at: Date.now() });
}

async function one<T>(ch: ClickHouseHandle, query: string): Promise<T> {
  const rs = await ch.client.query({ query, format: 'JSONEachRow' });
  const [row] = await rs.json<T>();
  return row;
}

/** The last day rolled, as ClickHouse records it now. */
async function lastRolled(ch: ClickHouseHandle): Promise<string> {
  const { day } = await one<{ day: string }>(
    ch,
    `SELECT toString(max(day)) AS day FROM ${ch.database}.scan_span_rolls`,
  );
  rolled.set(ch, { day, at: Date.now() });
  return day;
}

/**
 * The last day whose longer spans are complete. Kept for a minute: it only grows, so a reader that
 * has not seen the latest roll yet uses one-day spans where it could have used longer ones, with
 * the same answer.
 */
export async function rolledThrough(ch: ClickHouseHandle): Promise<string> {
  const kept = rolled.get(ch);
  if (kept && Date.now() - kept.at < ROLLED_TTL_MS) return kept.day;
  return lastRolled(ch);
}

/** The days after `rolledThrough`, in order, that ended at least ROLL_DELAY_MS before `nowMs`. */
export function daysDue(rolledThrough: string, nowMs: number): string[] {
  const out: string[] = [];
  for (let day = dayMs(rolledThrough) + DAY_MS; day + DAY_MS + ROLL_DELAY_MS <= nowMs; day += DAY_MS) {
    out.push(dayString(day));
  }
  return out;
}

/** How long the roll waits for inserts begun before a day's end to finish, before it gives up for now. */
const IN_FLIGHT_WAIT_MS = 60_000;

/**
 * Waits until no insert that began before `endMs` is still running (on any node of a cluster): the
 * last inserts that may hold pending rows of the day that ended then.
 */
async function insertsBefore(ch: ClickHouseHandle, endMs: number): Promise<void> {
  const processes = ch.cluster ? `clusterAllReplicas('${ch.cluster}', system.processes)` : 'system.processes';
  for (const t0 = Date.now(); ;) {
    const { n } = await one<{ n: string }>(
      ch,
      `SELECT count() AS n FROM ${processes}
        WHERE query_kind = 'Insert' AND toUnixTimestamp64Milli(now64(3)) - elapsed * 1000 < ${endMs}`,
    );
    if (Number(n) === 0) return;
    if (Date.now() - t0 > IN_FLIGHT_WAIT_MS) {
      throw new Error(`${n} insert(s) begun before ${new Date(endMs).toISOString()} still running; the roll waits`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Rolls every finished day not rolled yet, oldest first (ClickHouse's clock decides which days are
 * over, as it decides which rows are pending). Returns the days rolled.
 */
export async function rollFinishedDays(ch: ClickHouseHandle): Promise<string[]> {
  const { now } = await one<{ now: string }>(ch, 'SELECT toUnixTimestamp64Milli(now64(3)) AS now');
  const due = daysDue(await lastRolled(ch), Number(now));
  for (const day of due) {
    await insertsBefore(ch, dayMs(day) + DAY_MS);
    await rollDay(ch, day);
  }
  return due;
}
