import crypto from 'node:crypto';
import net from 'node:net';
import { expect } from 'chai';
import { clientIp, ipv6ToBigInt, parseIpv4, trustList } from '../../server/http-common/client-ip.js';
import {
  createEnricher,
  parseAgent,
  primaryLanguage,
  referrerHost,
  type Enricher,
} from '../../server/redirect/enrich.js';
import { testGeo } from '../helpers/geo.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const IPAD =
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';
const WINDOWS_CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

describe('redirect enrichment', () => {
  describe('client address', () => {
    const trust = trustList(['10.0.0.1', '192.168.0.0/16']);

    it('uses the socket peer and ignores X-Forwarded-For from an untrusted peer', () => {
      expect(clientIp('203.0.113.9', '1.2.3.4', trust)).to.equal('203.0.113.9');
    });

    it('believes X-Forwarded-For from a trusted proxy, taking the first untrusted hop from the right', () => {
      expect(clientIp('10.0.0.1', '6.6.6.6, 1.2.3.4, 192.168.4.4', trust)).to.equal('1.2.3.4');
    });

    it('unwraps IPv4-mapped IPv6 peers before checking trust', () => {
      expect(clientIp('::ffff:10.0.0.1', '1.2.3.4', trust)).to.equal('1.2.3.4');
      expect(clientIp('::ffff:203.0.113.9', undefined, trust)).to.equal('203.0.113.9');
    });

    it('stops at a garbage hop and keeps the last good address', () => {
      expect(clientIp('10.0.0.1', 'not-an-ip, 192.168.1.1', trust)).to.equal('192.168.1.1');
    });

    it('rejects a TRUST_PROXY entry that is not an address, or whose prefix length is not one', () => {
      expect(() => trustList(['proxy.local'])).to.throw(/TRUST_PROXY/);
      expect(() => trustList(['10.0.0.0/33'])).to.throw(/TRUST_PROXY/);
      expect(() => trustList(['10.0.0.0/x'])).to.throw(/TRUST_PROXY/);
      expect(() => trustList(['2001:db8::/129'])).to.throw(/TRUST_PROXY/);
    });

    it('trusts IPv6 addresses and ranges, and every address under a /0', () => {
      const v6 = trustList(['2001:db8::/32', '::1']);
      expect(clientIp('2001:db8:1::7', '1.2.3.4', v6)).to.equal('1.2.3.4');
      expect(clientIp('::1', '1.2.3.4', v6)).to.equal('1.2.3.4');
      expect(clientIp('2001:db9::7', '1.2.3.4', v6)).to.equal('2001:db9::7');
      expect(clientIp('10.0.0.1', '1.2.3.4', v6)).to.equal('10.0.0.1');
      const all = trustList(['0.0.0.0/0']);
      expect(clientIp('203.0.113.9', '1.2.3.4, 5.6.7.8', all)).to.equal('1.2.3.4');
    });

    it('agrees with node:net on which strings are IPv4 addresses, and BlockList on which are trusted', () => {
      const samples = [
        '1.2.3.4',
        '0.0.0.0',
        '255.255.255.255',
        '256.1.1.1',
        '01.2.3.4',
        '1.2.3',
        '1.2.3.4.5',
        '1..3.4',
        '1.2.3.',
        '.1.2.3',
        '1.2.3.4 ',
        ' 1.2.3.4',
        '1.2.3.-4',
        '1.2.3.a',
        '',
        '::1',
        '192.168.000.1',
        '192.168.255.255',
        '192.169.0.0',
        '10.0.0.1',
        '10.0.0.2',
        '1000.1.1.1',
        '1.2.3.04',
        '9.9.9.9',
      ];
      const ranges = ['10.0.0.1', '192.168.0.0/16', '9.0.0.0/7'];
      const ours = trustList(ranges);
      const theirs = new net.BlockList();
      theirs.addAddress('10.0.0.1');
      theirs.addSubnet('192.168.0.0', 16);
      theirs.addSubnet('8.0.0.0', 7);
      for (const s of samples) {
        expect(parseIpv4(s) !== null, s).to.equal(net.isIPv4(s));
        if (net.isIPv4(s)) {
          expect(parseIpv4(s), s).to.equal(s.split('.').reduce((n, o) => n * 256 + Number(o), 0));
          expect(clientIp(s, '5.5.5.5', ours) === '5.5.5.5', s).to.equal(theirs.check(s));
        }
      }
    });
  });

  describe('headers', () => {
    it('takes the primary tag of the most preferred language', () => {
      expect(primaryLanguage('fr-CH, fr;q=0.9, en;q=0.8')).to.equal('fr');
      expect(primaryLanguage('en;q=0.5, DE-at;q=0.9')).to.equal('de');
      expect(primaryLanguage('*')).to.equal('');
      expect(primaryLanguage(undefined)).to.equal('');
    });

    it('keeps only the referrer host', () => {
      expect(referrerHost('https://News.Example.com/a/b?c=1')).to.equal('news.example.com');
      expect(referrerHost('not a url')).to.equal('');
    });
  });

  describe('user agent', () => {
    it('classifies phones, tablets, desktops, bots and the unknown', () => {
      expect(parseAgent(IPHONE)).to.deep.equal({ device: 'mobile', os: 'iOS', browser: 'Mobile Safari', isBot: false });
      expect(parseAgent(IPAD)).to.include({ device: 'tablet', os: 'iOS' });
      expect(parseAgent(WINDOWS_CHROME)).to.deep.equal({
        device: 'desktop',
        os: 'Windows',
        browser: 'Chrome',
        isBot: false,
      });
      expect(parseAgent('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).to.include({
        device: 'bot',
        isBot: true,
      });
      expect(parseAgent('')).to.deep.equal({ device: 'other', os: '', browser: '', isBot: false });
    });
  });

  describe('network databases', () => {
    let enricher: Enricher;
    before(async function () {
      this.timeout(20_000);
      enricher = createEnricher(await testGeo.load(), Buffer.alloc(32, 7));
    });

    it('finds country, operator and ASN of IPv4 and IPv6 addresses', () => {
      expect(enricher.network('8.8.8.8')).to.deep.equal({ country: 'US', provider: 'Google LLC', asn: 15169 });
      expect(enricher.network('1.1.1.1')).to.include({ asn: 13335, provider: 'Cloudflare, Inc.' });
      expect(enricher.network('2001:4860:4860::8888')).to.include({ country: 'US', asn: 15169 });
    });

    it('knows nothing of private and invalid addresses', () => {
      expect(enricher.network('127.0.0.1')).to.deep.equal({ country: '', provider: '', asn: 0 });
      expect(enricher.network('')).to.deep.equal({ country: '', provider: '', asn: 0 });
    });

    it('hashes a visitor to a stable 53-bit UInt64 that differs by address, agent and key', () => {
      const h = enricher.visitorHash('203.0.113.9', IPHONE);
      expect(h).to.match(/^\d+$/);
      expect(Number.isSafeInteger(Number(h))).to.equal(true);
      expect(enricher.visitorHash('203.0.113.9', IPHONE)).to.equal(h);
      expect(enricher.visitorHash('203.0.113.10', IPHONE)).to.not.equal(h);
      expect(enricher.visitorHash('203.0.113.9', IPAD)).to.not.equal(h);
      expect(createEnricher({} as never, Buffer.alloc(32, 8)).visitorHash('203.0.113.9', IPHONE)).to.not.equal(h);
    });
  });

  it('computes the visitor hash as HMAC-SHA-256 (key from the service key) of address, NUL, agent, first 53 bits', () => {
    const secret = Buffer.alloc(32, 7);
    const e = createEnricher({} as never, secret);
    const key = crypto.createHmac('sha256', secret).update('visitor-hash').digest();
    const expected = (ip: string, ua: string) => {
      const d = crypto.createHmac('sha256', key).update(ip).update('\0').update(ua).digest();
      return String(((BigInt(d.readUInt32BE(0)) & 0x1fffffn) << 32n) | BigInt(d.readUInt32BE(4)));
    };
    const long = 'Mozilla/5.0 '.repeat(600); // longer than the reused buffer
    for (const [ip, ua] of [
      ['203.0.113.9', IPHONE],
      ['2001:db8::1', 'Ünïcödé agent ✓'],
      ['203.0.113.9', ''],
      ['203.0.113.9', long],
      ['198.51.100.1', IPAD],
    ]) {
      expect(e.visitorHash(ip, ua), ua.slice(0, 20)).to.equal(expected(ip, ua));
    }
    // 2,000 more addresses and agents against Node's HMAC, so that each of the eight digest bytes the
    // hash reads takes nearly all of its 256 values: agents of 0-299 code units below the surrogates
    // from a fixed-seed generator (the same inputs in every run).
    let seed = 20261129;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const agent = (n: number) => String.fromCharCode(...Array.from({ length: n }, () => next() % 0xd800));
    for (let i = 0; i < 2000; i++) {
      const ip = `${i % 256}.${(i * 7) % 256}.${(i * 13) % 256}.${(i * 31) % 256}`;
      const ua = agent(i % 300);
      expect(e.visitorHash(ip, ua), `${ip} ${JSON.stringify(ua)}`).to.equal(expected(ip, ua));
    }
  });

  it('reads IPv6 addresses with compressed zeros and IPv4 tails', () => {
    expect(ipv6ToBigInt('::1')).to.equal(1n);
    expect(ipv6ToBigInt('2001:db8::')).to.equal(0x20010db8n << 96n);
    expect(ipv6ToBigInt('64:ff9b::1.2.3.4')).to.equal((0x64n << 112n) | (0xff9bn << 96n) | 0x01020304n);
    expect(ipv6ToBigInt('1:2:3:4:5:6:7:8')).to.equal(0x00010002000300040005000600070008n);
  });
});
