import fs from 'node:fs';
import { expect } from 'chai';
import { DEFAULT_LOOKUPS_PER_SECOND } from '../../server/redirect/cache.js';
import { LookupBudget } from '../../server/redirect/known-keys.js';
import { DEFAULT_ORPHANS_PER_SECOND, OrphanSampler } from '../../server/redirect/orphan-sampler.js';

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

describe('redirect flood limits: docs/redirect.md states the defaults the code uses', () => {
  const doc = fs.readFileSync(new URL('../../docs/redirect.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

  it('names the filtered-key lookup budget per process', () => {
    expect(doc).to.include(`per process only ${DEFAULT_LOOKUPS_PER_SECOND} such lookups per second`);
  });

  it('names the orphan rows per domain per second', () => {
    expect(doc).to.include(`each domain writes at most ${DEFAULT_ORPHANS_PER_SECOND} orphan rows per second`);
  });
});
