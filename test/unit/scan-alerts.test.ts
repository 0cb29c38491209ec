import { expect } from 'chai';
import { alertDays, judge, median } from '../../server/scan-alerts/service.js';

describe('the scan alert rule', () => {
  it('takes the median of the same weekday over the four previous weeks as the baseline', () => {
    expect(alertDays('2026-05-10')).to.deep.equal([
      '2026-05-10',
      '2026-05-03',
      '2026-04-26',
      '2026-04-19',
      '2026-04-12',
    ]);
    expect(median([60, 0, 80, 70])).to.equal(65);
    expect(median([5, 1, 3])).to.equal(3);
  });

  it('says dropped below 10% and spiked above 10x of a baseline of at least 50 scans, nothing otherwise', () => {
    expect(judge(4, [50, 50, 50, 50])).to.deep.equal({ kind: 'dropped', baseline: 50 });
    expect(judge(5, [50, 50, 50, 50])).to.equal(null);
    expect(judge(501, [50, 50, 50, 50])).to.deep.equal({ kind: 'spiked', baseline: 50 });
    expect(judge(500, [50, 50, 50, 50])).to.equal(null);
    // Quiet codes (median under 50) never alert; one busy week does not make a baseline.
    expect(judge(0, [49, 49, 49, 49])).to.equal(null);
    expect(judge(10_000, [0, 0, 0, 400])).to.equal(null);
  });
});
