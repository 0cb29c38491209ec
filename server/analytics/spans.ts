// Aligned spans of days (clickhouse/0004_scan_spans.ts, lengths since clickhouse/0029): span k
// covers 2^k days starting at a multiple of 2^k days since 1970-01-01, for k in SPAN_LEVELS (1, 4,
// 16 and 64 days). A range of days is covered exactly by a few of them. The one-day spans are
// written as scans are recorded; the longer ones once their days are over (span-roll.ts), so a
// longer span is used only when its last day has been rolled.
import { SPAN_LEVELS } from '../../clickhouse/0029_scan_span_levels.js';

const DAY_MS = 86_400_000;

export interface Span {
  /** log2 of its length in days. */
  span: number;
  /** Its first day, YYYY-MM-DD (UTC). */
  start: string;
}

const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00.000Z`) / DAY_MS;
const dayString = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** The lengths kept, longest first; the shortest is one day, so every range can be covered. */
const LONGEST_FIRST = [...SPAN_LEVELS].sort((a, b) => b - a);

/**
 * The fewest aligned spans that cover the days from..to (inclusive, YYYY-MM-DD) exactly, oldest
 * first: from each day on, the longest span that starts there, ends within the range and, if longer
 * than a day, ends by `rolledThrough` (the last day whose longer spans are complete). A range of 7
 * days takes at most 4 spans, 30 days at most 12, 90 days at most 15 when every day is rolled, and
 * one a day for the days after `rolledThrough`.
 */
export function spansOf(from: string, to: string, rolledThrough: string): Span[] {
  const last = dayNumber(to);
  const rolled = dayNumber(rolledThrough);
  const out: Span[] = [];
  for (let day = dayNumber(from); day <= last;) {
    const fits = (l: number) => day % 2 ** l === 0 && day + 2 ** l - 1 <= (l > 0 ? Math.min(last, rolled) : last);
    const k = LONGEST_FIRST.find(fits) ?? 0;
    out.push({ span: k, start: dayString(day) });
    day += 2 ** k;
  }
  return out;
}
