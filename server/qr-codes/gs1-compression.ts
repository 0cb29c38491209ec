// Compressed GS1 Digital Link URIs (GS1 Digital Link: Compression): a whole Digital Link key and its
// attributes packed into one path segment, e.g. `https://id.brand.example/CxFKk4XBoI1XgkY`. The
// decompression is digital-link.js's (Apache-2.0, GS1's own compression code), not ours.
import digitalLink from 'digital-link.js';
import Toolkit from 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js';

const CANDIDATE = /^[A-Za-z0-9_-]{8,200}$/;

/**
 * Which values of a segment's first byte the library's decompression gets past: its first 8 bits
 * are two hex digits h1h2, read as an AI prefix of its table P when both are decimal, else as an
 * optimisation of its table Opt, else, when h1 is F, as a non-GS1 key=value pair; any other first
 * byte is an error. Read from the library's own tables and alphabet, so that a random unknown slug,
 * most of which fail there, is turned away without the decompression (tens of microseconds each).
 * Built on first use: the toolkit's constructor takes milliseconds, which a process that never
 * meets a candidate (the API, the worker) need not spend at start-up.
 */
let firstBytes: { alphabet: string; decodes: readonly boolean[] } | undefined;

function firstByteTable(): { alphabet: string; decodes: readonly boolean[] } {
  if (!firstBytes) {
    const toolkit = new Toolkit();
    const decodes = Array.from({ length: 256 }, (_, byte) => {
      const h1 = byte >> 4;
      const h2 = byte & 15;
      const h1h2 = (h1.toString(16) + h2.toString(16)).toUpperCase();
      if (h1 <= 9 && h2 <= 9) return Object.hasOwn(toolkit.tableP, h1h2);
      return Object.hasOwn(toolkit.tableOpt, h1h2) || h1 === 15;
    });
    firstBytes = { alphabet: toolkit.safeBase64Alphabet, decodes };
  }
  return firstBytes;
}

/**
 * Whether the library's decompression of a candidate segment (8 or more base64url characters, see
 * CANDIDATE) gets past its first byte.
 */
export function mayBeCompressed(segment: string): boolean {
  const { alphabet, decodes } = firstByteTable();
  return decodes[(alphabet.indexOf(segment[0]) << 2) | (alphabet.indexOf(segment[1]) >> 4)];
}

/**
 * The uncompressed key path segments (`['01', '<gtin>', …]`) and query (without `?`) of a path
 * segment that is a compressed Digital Link, or null when it is not one.
 */
export function decompressSegment(segment: string): { segments: string[]; query: string } | null {
  if (!CANDIDATE.test(segment) || !mayBeCompressed(segment)) return null;
  try {
    const uri = new URL(digitalLink.Utils.decompressWebUri(`https://resolver.invalid/${segment}`));
    const segments = uri.pathname.split('/').slice(1);
    return segments[0] ? { segments, query: uri.search.slice(1) } : null;
  } catch {
    return null; // not a compressed Digital Link: an unknown slug like any other
  }
}

/**
 * The GS1 compressed form of an uncompressed Digital Link URI (its stem kept, key and attributes
 * packed into one segment), compressed by digital-link.js without its optional optimisations
 * (the plain encoding of GS1 Digital Link: Compression, which GS1's Resolver CE produces too).
 */
export function compressUri(uri: string): string {
  return digitalLink.Utils.compressWebUri(uri, false, false);
}
