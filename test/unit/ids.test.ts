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

  it('made in the same millisecond sort in the order they were made, the random part counting up', () => {
    const ids = Array.from({ length: 10_000 }, () => fastUlid(1_700_000_000_001));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.every((id) => decodeTime(id) === 1_700_000_000_001)).to.equal(true);
    // Each is the last plus one, carries included (every 32nd id carries at least once).
    const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const value = (id: string) => [...id.slice(10)].reduce((n, c) => n * 32n + BigInt(ALPHABET.indexOf(c)), 0n);
    for (let i = 1; i < ids.length; i++) expect(value(ids[i]) - value(ids[i - 1])).to.equal(1n);
  });

  it('draw a fresh random part when the millisecond changes, forwards or backwards', () => {
    const a = fastUlid(1_700_000_000_010);
    const b = fastUlid(1_700_000_000_005);
    expect(decodeTime(b)).to.equal(1_700_000_000_005);
    expect(b < a).to.equal(true);
  });
});
