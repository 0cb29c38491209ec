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
    ['a.co', 'a.co'],
    ['x.y.example', 'x.y.example'],
    ['q.9.example', 'q.9.example'],
    ['1-2.example', '1-2.example'],
    ['qr.example.xn--p1ai', 'qr.example.xn--p1ai'],
    ['qr.example.web3', 'qr.example.web3'],
    ['qr.example.1a', 'qr.example.1a'],
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
    ['10.0.0.12', 'IPv4 ending in two digits'],
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
    ['xn--abc-.example', 'Punycode that decodes to ASCII'],
    ['ab--cd.example', 'hyphens in the third and fourth positions (RFC 5891 4.2.3.1)'],
    ['a\u200db.example', 'a zero-width joiner out of context (CONTEXTJ)'],
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

  it('says why a host is refused', () => {
    const why = (input: string) => {
      const r = normalizeHost(input);
      return r.ok ? '' : r.message;
    };
    expect(why('')).to.equal('The host must not be empty.');
    expect(why('example')).to.equal('The host must have at least two labels (e.g. qr.example.com).');
    expect(why('example.com.')).to.equal('The host must not end with a dot.');
    expect(why('1.2.3.4')).to.equal('The host must be a hostname, not an IP address.');
    expect(why('a_b.example.com')).to.equal('The label "a_b" is invalid: 1 to 63 of a-z, 0-9 and inner hyphens.');
    expect(why('example.com:8080')).to.equal(
      'The host must be a bare hostname: no scheme, port, path, query, IP address, spaces or wildcard.',
    );
    expect(why('xn--a.com')).to.equal('The host is not a valid hostname.');
  });

  it('refuses a host of more than 1012 characters before converting it, and one of more than 253 after', () => {
    const long = `${'a.'.repeat(506)}com`; // 1015 characters
    expect(normalizeHost(long)).to.deep.equal({ ok: false, message: 'The host must be at most 253 characters.' });
    // 232 characters as typed, 256 once in punycode (each label of 55 ü is 61 characters).
    const unicode = `${Array.from({ length: 4 }, () => 'ü'.repeat(55)).join('.')}.abcd.com`;
    expect(unicode.length).to.equal(232);
    expect(normalizeHost(unicode.replace(/ü/g, 'u')).ok).to.equal(true);
    const r = normalizeHost(unicode);
    expect(r).to.deep.equal({ ok: false, message: 'The host must be at most 253 characters.' });
  });

  it('judges the length as typed before converting: at most 1012 characters, even of ones dropped on the way', () => {
    // A soft hyphen is removed by the conversion, so the converted host stays short.
    const padded = (n: number) => `qr.exam${'\u00AD'.repeat(n - 'qr.example.com'.length)}ple.com`;
    expect(padded(1012)).to.have.length(1012);
    expect(normalizeHost(padded(1012))).to.deep.equal({ ok: true, host: 'qr.example.com' });
    expect(normalizeHost(padded(1013))).to.deep.equal({
      ok: false,
      message: 'The host must be at most 253 characters.',
    });
  });

  it('accepts a label of exactly 63 characters', () => {
    const host = `${'a'.repeat(63)}.com`;
    expect(normalizeHost(host)).to.deep.equal({ ok: true, host });
  });

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
