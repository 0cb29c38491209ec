import crypto from 'node:crypto';
import { expect } from 'chai';
import { ticketKeysFor } from '../../server/redirect/tls.js';
import { retryDelayMs } from '../../workers/tasks/domain-certificate.js';

describe('certificate retries and TLS session ticket keys', () => {
  it('retries a failed issuance after 5 minutes, doubling, at most once a day', () => {
    const min = 60_000;
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n) / min)).to.deep.equal([5, 10, 20, 40]);
    expect(retryDelayMs(9)).to.equal(1280 * min);
    expect(retryDelayMs(10)).to.equal(24 * 60 * min);
    expect(retryDelayMs(500)).to.equal(24 * 60 * min);
  });

  it('waits at least as long as an ACME rate-limit answer asks', () => {
    expect(retryDelayMs(1, 3 * 3600)).to.equal(3 * 3600_000);
    expect(retryDelayMs(3, 60)).to.equal(20 * 60_000);
    expect(retryDelayMs(1, null)).to.equal(5 * 60_000);
  });

  it('derives the same 48-byte ticket keys in every process for a day, other keys the next day', () => {
    const secret = crypto.randomBytes(32);
    const morning = ticketKeysFor(secret, new Date('2026-06-01T01:00:00Z'));
    expect(morning).to.have.length(48);
    expect(ticketKeysFor(secret, new Date('2026-06-01T23:59:59Z')).equals(morning)).to.equal(true);
    expect(ticketKeysFor(secret, new Date('2026-06-02T00:00:00Z')).equals(morning)).to.equal(false);
    expect(ticketKeysFor(crypto.randomBytes(32), new Date('2026-06-01T01:00:00Z')).equals(morning)).to.equal(false);
  });
});
