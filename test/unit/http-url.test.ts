import { expect } from 'chai';
import { ApiError } from '../../server/errors.js';
import {
  HTTP_URL_PATTERN,
  httpUrlOrNull,
  MAX_URL_LENGTH,
  normaliseHttpUrl,
  requireHttpUrl,
} from '../../server/schemas/http-url.js';

const NOT_HTTP = 'Must be an http or https URL.';
const CONTROL = 'Must be an http or https URL without control characters.';
const SPACE = 'Must be an http or https URL without spaces (write a space as %20).';
const INVALID = 'Must be a valid http or https URL, e.g. https://example.com/page.';

describe('http(s) URL normalisation (pure)', () => {
  const accepted: [string, string][] = [
    ['https://example.com/a?b=1#c', 'https://example.com/a?b=1#c'],
    ['HTTP://EXAMPLE.COM', 'http://example.com/'],
    ['https://example.com/caf€', 'https://example.com/caf%E2%82%AC'],
    ['https://例え.jp/', 'https://xn--r8jz45g.jp/'],
    ['https://ｅｘａｍｐｌｅ.com/', 'https://example.com/'],
    ['https://example.com/é?q=ü#ä', 'https://example.com/%C3%A9?q=%C3%BC#%C3%A4'],
    // U+0080 to U+00FF leave as UTF-8 percent-escapes, never as raw single bytes.
    ['https://example.com/\u00ff\u00a9', 'https://example.com/%C3%BF%C2%A9'],
    ['https://example.com/😀', 'https://example.com/%F0%9F%98%80'],
    ['https://example.com/<tag>"q"', 'https://example.com/%3Ctag%3E%22q%22'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['https://[::1]:8080/x', 'https://[::1]:8080/x'],
    ['https://example.com:443/x', 'https://example.com/x'],
    // The DNS root's trailing dot and an underscore (seen in real hosts) are kept.
    ['https://example.com./x', 'https://example.com./x'],
    ['https://a_b.example.com/', 'https://a_b.example.com/'],
    ['https://xn--bcher-kva.example/', 'https://xn--bcher-kva.example/'],
    [`https://${'a'.repeat(63)}.com/`, `https://${'a'.repeat(63)}.com/`],
  ];
  for (const [given, stored] of accepted) {
    it(`stores ${JSON.stringify(given)} as ${stored}`, () => {
      expect(normaliseHttpUrl(given)).to.deep.equal({ ok: true, url: stored });
    });
  }

  it('always produces printable ASCII, so it can stand in a Location header', () => {
    for (const [given] of accepted) {
      const out = httpUrlOrNull(given);
      expect(out).to.match(/^[\x21-\x7e]+$/);
    }
  });

  const refused: [string, unknown, string][] = [
    ['a C0 control character', 'https://example.com/a\u0001b', CONTROL],
    ['DEL', 'https://example.com/\u007f', CONTROL],
    ['a C1 control character', 'https://example.com/\u0085', CONTROL],
    ['a tab a browser would drop', 'https://exa\tmple.com/', CONTROL],
    ['a newline', 'https://example.com/\nSet-Cookie:x=1', CONTROL],
    ['a space', 'https://ex ample.com', SPACE],
    ['a line separator', 'https://example.com/\u2028', SPACE],
    ['another scheme', 'ftp://example.com', NOT_HTTP],
    ['javascript:', 'javascript:alert(1)', NOT_HTTP],
    ['data:', 'data:text/html,<b>x</b>', NOT_HTTP],
    ['no host', 'https://', INVALID],
    ['an invalid punycode label', 'https://xn--a.com/', INVALID],
    ['a port out of range', 'https://example.com:99999/', INVALID],
    ['port 0', 'https://example.com:0/', 'Must be an http or https URL with a port from 1 to 65535.'],
    ['an empty label', 'https://a..b/', INVALID],
    ['a leading hyphen', 'https://-a.com/', INVALID],
    ['a trailing hyphen', 'https://a-.com/', INVALID],
    ['hyphens in the third and fourth positions of a label', 'https://ab--c.com/', INVALID],
    ['Punycode that decodes to ASCII', 'https://xn--abc-.com/', INVALID],
    ['a label of 64 characters', `https://${'a'.repeat(64)}.com/`, INVALID],
    ['a zero-width joiner out of context', 'https://a\u200db.com/', INVALID],
    ['credentials', 'https://user:pw@example.com/', 'Must be an http or https URL without a user name or password.'],
    [
      'a user name posing as the host',
      'https://bank.example@evil.example/',
      'Must be an http or https URL without a user name or password.',
    ],
    ['the empty string', '', NOT_HTTP],
    ['a number', 42, NOT_HTTP],
    ['null', null, NOT_HTTP],
  ];
  for (const [what, given, problem] of refused) {
    it(`refuses ${what}`, () => {
      expect(normaliseHttpUrl(given)).to.deep.equal({ ok: false, problem });
      expect(httpUrlOrNull(given)).to.equal(null);
    });
  }

  it('takes 2048 characters and no more, before and after normalisation', () => {
    const base = 'https://x.com/';
    expect(normaliseHttpUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length))).to.deep.equal({
      ok: true,
      url: base + 'a'.repeat(MAX_URL_LENGTH - base.length),
    });
    expect(normaliseHttpUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1))).to.deep.equal({
      ok: false,
      problem: 'Must be an http or https URL of at most 2048 characters.',
    });
    // 1000 characters that each become 6 once percent-encoded.
    const grown = normaliseHttpUrl(base + 'é'.repeat(1000));
    expect(grown.ok).to.equal(false);
    expect(grown.ok === false && grown.problem).to.equal(
      'Must be an http or https URL of at most 2048 characters once normalised ' +
        '(each non-ASCII character is percent-encoded as 3 to 12 characters).',
    );
  });

  it('gives a field its normalised URL, or a 422 naming the field and the problem', () => {
    expect(requireHttpUrl('destination', 'HTTPS://Example.com')).to.equal('https://example.com/');
    let refused: unknown;
    try {
      requireHttpUrl('destination', 'ftp://example.com/');
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(ApiError);
    expect((refused as ApiError).status).to.equal(422);
    expect((refused as ApiError).extra).to.deep.equal({ errors: { destination: [NOT_HTTP] } });
  });

  it('has a schema pattern that lets http and https through in any case, and nothing else', () => {
    const pattern = new RegExp(HTTP_URL_PATTERN);
    for (const ok of ['http://a.b', 'HTTPS://a.b', 'hTtP://a.b']) expect(pattern.test(ok), ok).to.equal(true);
    for (const no of ['ftp://a.b', ' https://a.b', 'https:/a.b', 'httpss://a.b', 'xhttp://a.b'])
      expect(pattern.test(no), no).to.equal(false);
  });

  it('is idempotent: a stored URL normalises to itself', () => {
    for (const [, stored] of accepted) expect(httpUrlOrNull(stored)).to.equal(stored);
  });
});
