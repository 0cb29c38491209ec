import { expect } from 'chai';
import { normalizeHost, originHostname } from '../../server/domains/hostname.js';

describe('normalizeHost', () => {
  const accepted: [string, string][] = [
    ['qr.example.com', 'qr.example.com'],
    ['QR.Example.COM', 'qr.example.com'],
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['ＱＲ.example.com', 'qr.example.com'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['a-b.c-d.example', 'a-b.c-d.example'],
    ['go.example.co.uk', 'go.example.co.uk'],
  ];
  for (const [input, host] of accepted) {
    it(`accepts ${JSON.stringify(input)} as ${host}`, () => {
      expect(normalizeHost(input)).to.deep.equal({ ok: true, host });
    });
  }

  const refused: [string, string][] = [
    ['', 'empty'],
    ['example', 'one label'],
    ['localhost', 'one label'],
    ['1.2.3.4', 'IPv4'],
    ['0x7f.1', 'IPv4 in hex'],
    ['１２７.０.０.１', 'IPv4 in full-width digits'],
    ['[::1]', 'IPv6'],
    ['::1', 'IPv6 without brackets'],
    ['example.com:8080', 'port'],
    ['https://example.com', 'scheme'],
    ['example.com/path', 'path'],
    ['example.com?x=1', 'query'],
    ['example.com#x', 'fragment'],
    ['user@example.com', 'userinfo'],
    ['example.com.', 'trailing dot'],
    ['ex ample.com', 'space'],
    [' example.com', 'leading space'],
    ['example.com\n', 'trailing newline'],
    ['*.example.com', 'wildcard'],
    ['a..example.com', 'empty label'],
    ['-a.example.com', 'leading hyphen'],
    ['a-.example.com', 'trailing hyphen'],
    ['a_b.example.com', 'underscore'],
    ['xn--a.com', 'invalid punycode'],
    ['a.123', 'numeric top-level label'],
    [`${'a'.repeat(64)}.com`, 'a label of 64 characters'],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, '259 characters'],
    ['exa%6Dple.com', 'percent escape'],
  ];
  for (const [input, why] of refused) {
    it(`refuses ${JSON.stringify(input)} (${why})`, () => {
      const r = normalizeHost(input);
      expect(r.ok, JSON.stringify(r)).to.equal(false);
    });
  }

  it('accepts exactly 253 characters and refuses 254', () => {
    const label = 'a'.repeat(63);
    const host253 = `${label}.${label}.${label}.${'b'.repeat(61)}`;
    expect(host253.length).to.equal(253);
    expect(normalizeHost(host253)).to.deep.equal({ ok: true, host: host253 });
    expect(normalizeHost(host253 + 'c').ok).to.equal(false);
  });
});

describe('originHostname', () => {
  it('drops the scheme and the port', () => {
    expect(originHostname('http://localhost:3001')).to.equal('localhost');
    expect(originHostname('https://QR.Example.net')).to.equal('qr.example.net');
  });
});
