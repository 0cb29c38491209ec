import { expect } from 'chai';
import { batchesOf, MAX_CODES_PER_EVENT } from '../../server/scan-batches/service.js';

describe('scans.batch events of a minute', () => {
  const minute = new Date('2026-05-10T12:00:00.000Z');
  const code = (id: number) => ({ ulid: `C${String(id).padStart(5, '0')}`, slug: `acme/c${id}`, name: null });

  it('cuts a minute with more codes than fit one event into parts, most scanned first, totals on each', () => {
    const n = MAX_CODES_PER_EVENT + 2;
    const counts = Array.from({ length: n }, (_, i) => ({ code_id: i + 1, minute, scans: i + 1, bot_scans: 1 }));
    const codes = new Map(counts.map((c) => [c.code_id, code(c.code_id)]));
    const events = batchesOf(counts, codes);
    expect(events.map((e) => [e.part, e.parts, e.codes.length])).to.deep.equal([
      [1, 2, MAX_CODES_PER_EVENT],
      [2, 2, 2],
    ]);
    expect(events[0].codes[0]).to.deep.include({ slug: `acme/c${n}`, scans: n });
    expect(events[1].codes.map((c) => c.scans)).to.deep.equal([2, 1]);
    for (const e of events) expect(e).to.deep.include({ scans: (n * (n + 1)) / 2, bot_scans: n });
  });

  it('orders minutes and leaves out codes that no longer exist', () => {
    const later = new Date(minute.getTime() + 60_000);
    const events = batchesOf(
      [
        { code_id: 1, minute: later, scans: 1, bot_scans: 0 },
        { code_id: 9, minute, scans: 5, bot_scans: 0 },
        { code_id: 1, minute, scans: 2, bot_scans: 0 },
      ],
      new Map([[1, code(1)]]),
    );
    expect(events.map((e) => [e.minute, e.scans])).to.deep.equal([
      [minute.toISOString(), 2],
      [later.toISOString(), 1],
    ]);
  });
});
