import { expect } from 'chai';
import { decodeTime } from 'ulid';
import { fastUlid } from '../../server/ids.js';

describe('fast ULIDs', () => {
  it('are 26-character ULIDs carrying the millisecond they were made', () => {
    const at = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
    const id = fastUlid(at);
    expect(id).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(id)).to.equal(at);
  });

  it('do not repeat over 100,000 ids made in the same millisecond', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(fastUlid(1_700_000_000_000));
    expect(seen.size).to.equal(100_000);
  });

  it('made in the same millisecond sort in the order they were made, each a random step above the last', () => {
    const ids = Array.from({ length: 10_000 }, () => fastUlid(1_700_000_000_001));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.every((id) => decodeTime(id) === 1_700_000_000_001)).to.equal(true);
    // Steps of 1 to 2^40 - 1 (carries into the high half included), drawn at random: the next id
    // cannot be told from the last (a step of 1, the spec's monotonic mode, could).
    const steps = ids.slice(1).map((id, i) => value(id) - value(ids[i]));
    expect(steps.every((d) => d >= 1n && d < 2n ** 40n)).to.equal(true);
    expect(new Set(steps).size).to.be.above(9_990);
  });

  it('draw a fresh random part when the millisecond changes, forwards or backwards', () => {
    const a = fastUlid(1_700_000_000_010);
    const b = fastUlid(1_700_000_000_005);
    const c = fastUlid(1_700_000_000_010);
    expect([a, b, c].map(decodeTime)).to.deep.equal([1_700_000_000_010, 1_700_000_000_005, 1_700_000_000_010]);
    // Back in a millisecond already used, the ids start afresh rather than continuing after `a`
    // (a random part within 2^40 above a's: about one chance in 2^40).
    const d = value(c) - value(a);
    expect(d > 0n && d < 2n ** 40n).to.equal(false);
  });
});

/** An id's random part (its last 16 characters) as a number. */
function value(id: string): bigint {
  const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  return [...id.slice(10)].reduce((n, c) => n * 32n + BigInt(ALPHABET.indexOf(c)), 0n);
}
