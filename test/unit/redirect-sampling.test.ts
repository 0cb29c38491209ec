import { expect } from 'chai';
import { LookupBudget } from '../../server/redirect/known-keys.js';
import { OrphanSampler } from '../../server/redirect/orphan-sampler.js';

describe('redirect flood limits (pure)', () => {
  it('records at most N orphan rows per domain per second and counts the others', () => {
    let dropped = 0;
    const s = new OrphanSampler(3, () => dropped++);
    const t = 1_700_000_000_000;
    const taken = [0, 1, 2, 3, 4].map(() => s.take(7, t + 10));
    expect(taken).to.deep.equal([true, true, true, false, false]);
    expect(s.take(8, t + 20), 'another domain has its own budget').to.equal(true);
    expect(s.take(7, t + 1000), 'the next second starts afresh').to.equal(true);
    expect(dropped).to.equal(2);
  });

  it('checks at most N filtered keys per second in Postgres', () => {
    const b = new LookupBudget(2);
    const t = 1_700_000_000_000;
    expect([b.take(t), b.take(t + 1), b.take(t + 2)]).to.deep.equal([true, true, false]);
    expect(b.take(t + 1000)).to.equal(true);
    expect(new LookupBudget(0).take(t)).to.equal(false);
  });
});
