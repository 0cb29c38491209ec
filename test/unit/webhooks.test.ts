import { expect } from 'chai';
import { loadConfig, parseAllowedTarget } from '../../server/config.js';
import { RETRY_SCHEDULE_S, retryDelayMs } from '../../server/webhooks/delivery.js';
import { eventBody } from '../../server/webhooks/events.js';
import { isPublicAddress, TargetPolicy } from '../../server/webhooks/target.js';

describe('webhook targets (SSRF rule)', () => {
  it('treats private, loopback, link-local, CGNAT, documentation and mapped addresses as not public', () => {
    for (const a of [
      '10.1.2.3',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '198.51.100.7',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '2001:db8::1',
      'ff02::1',
    ]) {
      expect(isPublicAddress(a), a).to.equal(false);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34']) {
      expect(isPublicAddress(a), a).to.equal(true);
    }
  });

  it('lets WEBHOOK_ALLOWED_TARGETS open a CIDR, or a host:port by name or address', () => {
    const policy = new TargetPolicy(['10.0.0.0/8', 'hooks.internal:8443', '[::1]:9000', '127.0.0.1:7000']);
    expect(policy.allows('x', '10.9.8.7', 443)).to.equal(true);
    expect(policy.allows('hooks.internal', '192.168.1.5', 8443)).to.equal(true);
    expect(policy.allows('hooks.internal', '192.168.1.5', 443)).to.equal(false);
    expect(policy.allows('localhost', '::1', 9000)).to.equal(true);
    expect(policy.allows('localhost', '127.0.0.1', 7000)).to.equal(true);
    expect(policy.allows('localhost', '127.0.0.1', 7001)).to.equal(false);
    expect(policy.allows('evil.example', '169.254.169.254', 80)).to.equal(false);
  });

  it('parses allowed targets and refuses malformed ones at start', () => {
    expect(parseAllowedTarget('10.0.0.0/8')).to.deep.equal({
      kind: 'cidr',
      address: '10.0.0.0',
      prefix: 8,
      family: 'ipv4',
    });
    expect(parseAllowedTarget('fd00::/8')).to.include({ kind: 'cidr', family: 'ipv6' });
    expect(parseAllowedTarget('Hooks.Internal:443')).to.deep.equal({ kind: 'host', host: 'hooks.internal', port: 443 });
    for (const bad of ['10.0.0.0/33', 'hooks.internal', 'host:0', 'host:70000', '[nope]:80', 'a b:80']) {
      expect(parseAllowedTarget(bad), bad).to.equal(null);
    }
    expect(() => loadConfig({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8, nope' })).to.throw(
      /WEBHOOK_ALLOWED_TARGETS entry "nope"/,
    );
  });
});

describe('webhook retries', () => {
  it('retries three times within the first minute, then backs off to a day, for over 24 hours in all', () => {
    const none = () => 0;
    const delays = RETRY_SCHEDULE_S.map((_, i) => retryDelayMs(i + 1, null, none)!);
    expect(delays[0] + delays[1] + delays[2]).to.be.below(60_000);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).to.be.above(delays[i - 1]);
    expect(delays.reduce((a, b) => a + b, 0)).to.be.above(72 * 3600_000);
    expect(retryDelayMs(RETRY_SCHEDULE_S.length + 1, null)).to.equal(null);
  });

  it('adds at most 10% jitter to long waits only, and honours a longer Retry-After', () => {
    expect(retryDelayMs(1, null, () => 0.99)).to.equal(5000);
    expect(retryDelayMs(4, null, () => 1)).to.equal(330_000);
    expect(retryDelayMs(1, 120, () => 0)).to.equal(120_000);
    expect(retryDelayMs(1, 10 ** 9, () => 0)).to.equal(86_400_000);
  });
});

describe('webhook bodies', () => {
  it('are {type, timestamp, data} with the wallet’s money rendered as the API renders it', () => {
    const at = new Date('2026-05-01T10:00:00.000Z');
    const body = eventBody({
      type: 'wallet.low_balance',
      data: { currency: 'JPY', balance_minor: 499, low_balance_threshold_minor: 500 },
      created_at: at,
    });
    expect(JSON.parse(body)).to.deep.equal({
      type: 'wallet.low_balance',
      timestamp: '2026-05-01T10:00:00.000Z',
      data: { balance: '499', low_balance_threshold: '500', currency: 'JPY' },
    });
  });
});
