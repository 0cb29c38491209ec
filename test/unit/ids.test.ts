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
});
