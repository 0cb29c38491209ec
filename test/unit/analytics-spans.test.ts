import { expect } from 'chai';
import { SPAN_LEVELS } from '../../clickhouse/0029_scan_span_levels.js';
import { spansOf } from '../../server/analytics/spans.js';

const DAY_MS = 86_400_000;
const dayNumber = (day: string) => Date.parse(`${day}T00:00:00.000Z`) / DAY_MS;
const dayString = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

describe('analytics: aligned spans covering a range of days (scan_spans)', () => {
  it('covers 2026-08-29..2026-11-26 (90 days) with nine aligned spans of 1, 4 and 16 days, oldest first', () => {
    expect(spansOf('2026-08-29', '2026-11-26', '2026-11-26')).to.deep.equal([
      { span: 0, start: '2026-08-29' },
      { span: 0, start: '2026-08-30' },
      { span: 2, start: '2026-08-31' },
      { span: 2, start: '2026-09-04' },
      { span: 4, start: '2026-09-08' },
      { span: 4, start: '2026-09-24' },
      { span: 4, start: '2026-10-10' },
      { span: 4, start: '2026-10-26' },
      { span: 4, start: '2026-11-11' },
    ]);
  });

  it('covers one day with the day itself', () => {
    expect(spansOf('2026-03-15', '2026-03-15', '2026-03-15')).to.deep.equal([{ span: 0, start: '2026-03-15' }]);
  });

  it('covers every 7, 30 and 90-day range ending on any day of two years exactly once, with aligned spans of 1, 4, 16 or 64 days', () => {
    const most: Record<number, number> = {};
    const first = dayNumber('2025-01-01');
    for (let end = first; end < first + 730; end++) {
      for (const n of [7, 30, 90]) {
        const spans = spansOf(dayString(end - n + 1), dayString(end), dayString(end));
        const covered: number[] = [];
        for (const s of spans) {
          const start = dayNumber(s.start);
          expect(SPAN_LEVELS).to.include(s.span);
          expect(start % 2 ** s.span, `${s.start} is aligned to 2^${s.span} days`).to.equal(0);
          for (let d = start; d < start + 2 ** s.span; d++) covered.push(d);
        }
        expect(covered).to.deep.equal(Array.from({ length: n }, (_, i) => end - n + 1 + i));
        most[n] = Math.max(most[n] ?? 0, spans.length);
      }
    }
    // What a request merges per group instead of one state per day.
    expect(most).to.deep.equal({ 7: 4, 30: 12, 90: 15 });
  });

  it('uses a longer span only when its last day has been rolled: the days after are one-day spans', () => {
    // 2026-11-11 starts a 16-day span (to 11-26) and 4-day spans at 11-11, 11-15, 11-19 and 11-23.
    expect(spansOf('2026-11-11', '2026-11-26', '2026-11-20')).to.deep.equal([
      { span: 2, start: '2026-11-11' },
      { span: 2, start: '2026-11-15' },
      { span: 0, start: '2026-11-19' },
      { span: 0, start: '2026-11-20' },
      ...['21', '22', '23', '24', '25', '26'].map((d) => ({ span: 0, start: `2026-11-${d}` })),
    ]);
    // Nothing rolled in the range: one span a day.
    expect(spansOf('2026-11-11', '2026-11-17', '2026-11-01')).to.have.length(7);
    // Rolled past the range's end: as if every day were rolled.
    expect(spansOf('2026-08-29', '2026-11-26', '2026-12-31')).to.deep.equal(
      spansOf('2026-08-29', '2026-11-26', '2026-11-26'),
    );
  });

  it('covers every range ending on any day exactly once whatever the last day rolled, with no longer span past it', () => {
    const first = dayNumber('2026-01-01');
    for (let end = first; end < first + 120; end++) {
      for (const n of [7, 30, 90]) {
        for (const lag of [0, 1, 2, 5, 40, 200]) {
          const rolled = end - lag;
          const spans = spansOf(dayString(end - n + 1), dayString(end), dayString(rolled));
          const covered: number[] = [];
          for (const s of spans) {
            const start = dayNumber(s.start);
            if (s.span > 0) expect(start + 2 ** s.span - 1).to.be.at.most(rolled);
            for (let d = start; d < start + 2 ** s.span; d++) covered.push(d);
          }
          expect(covered).to.deep.equal(Array.from({ length: n }, (_, i) => end - n + 1 + i));
        }
      }
    }
  });

  it('covers nothing for an empty range', () => {
    expect(spansOf('2026-03-15', '2026-03-14', '2026-03-15')).to.deep.equal([]);
  });
});
