// Aligned spans of days (clickhouse/0004_scan_spans.ts, lengths since clickhouse/0029): span k
// covers 2^k days starting at a multiple of 2^k days since 1970-01-01, for k in SPAN_LEVELS (1, 4,
// 16 and 64 days). A range of days is covered exactly by a few of them.
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
 * first: from each day on, the longest span that starts there and ends within the range. A range
 * of 7 days takes at most 4 spans, 30 days at most 12, 90 days at most 15.
 */
export function spansOf(from: string, to: string): Span[] {
  const last = dayNumber(to);
  const out: Span[] = [];
  for (let day = dayNumber(from); day <= last;) {
    const k = LONGEST_FIRST.find((l) => day % 2 ** l === 0 && day + 2 ** l - 1 <= last) ?? 0;
    out.push({ span: k, start: dayString(day) });
    day += 2 ** k;
  }
  return out;
}
