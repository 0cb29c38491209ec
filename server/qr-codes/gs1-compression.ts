// Compressed GS1 Digital Link URIs (GS1 Digital Link: Compression): a whole Digital Link key and its
// attributes packed into one path segment, e.g. `https://id.brand.example/CxFKk4XBoI1XgkY`. The
// decompression is digital-link.js's (Apache-2.0, GS1's own compression code), not ours.
import digitalLink from 'digital-link.js';

const CANDIDATE = /^[A-Za-z0-9_-]{8,200}$/;

/**
 * The uncompressed key path segments (`['01', '<gtin>', …]`) and query (without `?`) of a path
 * segment that is a compressed Digital Link, or null when it is not one.
 */
export function decompressSegment(segment: string): { segments: string[]; query: string } | null {
  if (!CANDIDATE.test(segment)) return null;
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
