import { expect } from 'chai';
import digitalLink from 'digital-link.js';
import { compressUri, decompressSegment, mayBeCompressed } from '../../server/qr-codes/gs1-compression.js';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A segment whose first byte (8 bits of its first two characters) is `byte`, the rest from `tail`. */
function startingWith(byte: number, low4: number, tail: string): string {
  return BASE64URL[byte >> 2] + BASE64URL[((byte & 3) << 4) | low4] + tail;
}

/** What the library says of a segment: its error message, or '' when it decompresses. */
function libraryVerdict(segment: string): string {
  try {
    digitalLink.Utils.decompressWebUri(`https://resolver.invalid/${segment}`);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('Compressed GS1 Digital Links: the first-byte check agrees with the library', () => {
  const tails = ['QAAAAAAAAA', 'XkY1ZmNhOTk', 'CxFKk4XBoI1', 'zz9-_AbCdEf0'];

  it('turns away exactly the first bytes the library fails on, and no segment the library decompresses', () => {
    let refused = 0;
    for (let byte = 0; byte < 256; byte++) {
      const hex = byte.toString(16).toUpperCase().padStart(2, '0');
      // The library's own errors at the first byte name it as h1h2 (or hh).
      const firstByteError = new RegExp(`(h1h2|hh)=${hex}$`);
      if (!mayBeCompressed(startingWith(byte, 0, tails[0]))) refused++;
      for (const tail of tails) {
        for (const low4 of [0, 7, 15]) {
          const segment = startingWith(byte, low4, tail);
          const verdict = libraryVerdict(segment);
          if (mayBeCompressed(segment)) {
            expect(verdict, `${segment} (first byte ${hex})`).not.to.match(firstByteError);
          } else {
            expect(verdict, `${segment} (first byte ${hex})`).to.match(firstByteError);
            expect(decompressSegment(segment), segment).to.equal(null);
          }
        }
      }
    }
    // Most random first bytes are not a compressed Digital Link's: the check is worth having.
    expect(refused).to.be.greaterThan(100);
  });

  it('does not call the library for a segment the check turns away, and calls it for the others', () => {
    // The same library object the service decompresses with, its one entry point counted.
    const utils = digitalLink.Utils;
    const decompress = utils.decompressWebUri;
    let calls = 0;
    utils.decompressWebUri = (uri: string) => {
      calls++;
      return decompress(uri);
    };
    try {
      let refused = 0;
      for (let byte = 0; byte < 256; byte++) {
        const segment = startingWith(byte, 7, tails[1]);
        const before = calls;
        decompressSegment(segment);
        if (mayBeCompressed(segment)) expect(calls - before, segment).to.equal(1);
        else {
          refused++;
          expect(calls - before, segment).to.equal(0);
        }
      }
      expect(refused).to.be.greaterThan(100);
    } finally {
      utils.decompressWebUri = decompress;
    }
  });

  it('still decompresses what the library compresses', () => {
    const uris = [
      'https://id.example.com/01/09506000134352',
      'https://id.example.com/01/09506000134352/10/ABC123/21/12345',
      'https://id.example.com/01/09506000164908?17=271231&3103=000189',
      'https://id.example.com/414/9520123456788/254/32a%2Fb',
      'https://id.example.com/01/09506000134352?k1=v1',
    ];
    for (const uri of uris) {
      for (const optimised of [false, true]) {
        const compressed = optimised ? digitalLink.Utils.compressWebUri(uri) : compressUri(uri);
        const segment = new URL(compressed).pathname.slice(1);
        expect(mayBeCompressed(segment), `${uri} as ${segment}`).to.equal(true);
        const dl = decompressSegment(segment);
        expect(dl, `${uri} as ${segment}`).not.to.equal(null);
        expect(`https://id.example.com/${dl!.segments.join('/')}`).to.equal(uri.split('?')[0]);
      }
    }
  });
});
