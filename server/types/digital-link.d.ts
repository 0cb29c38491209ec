// digital-link.js (Apache-2.0) ships no types; the part of its API this service and its tests use:
// decompression of compressed GS1 Digital Link URIs (server/qr-codes/gs1-compression.ts) and, in
// the tests, the grammar-based validation that checks our own parser (server/qr-codes/gs1.ts).
declare module 'digital-link.js' {
  interface DigitalLinkObject {
    isValid(): boolean;
    getIdentifier(): Record<string, string>;
    getKeyQualifiers(): Record<string, string>;
    getAttributes(): Record<string, string>;
    toWebUriString(): string;
    toCompressedWebUriString(): string;
  }
  const lib: {
    DigitalLink(input: string | Record<string, unknown>): DigitalLinkObject;
    Utils: {
      compressWebUri(uri: string, useOptimisations?: boolean, compressOtherKeyValuePairs?: boolean): string;
      decompressWebUri(uri: string): string;
      isCompressedWebUri(uri: string): boolean;
    };
  };
  export default lib;
}

// The library's compression toolkit (GS1's prototype), for its tables of what a compressed segment
// may start with and its alphabet (server/qr-codes/gs1-compression.ts).
declare module 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js' {
  export default class GS1DigitalLinkToolkit {
    /** AI prefixes (two decimal digits) and the length of their AIs. */
    tableP: Record<string, number>;
    /** Optimisation codes (two hex digits, not both decimal) and the AIs they stand for. */
    tableOpt: Record<string, string[]>;
    /** The URI-safe base64 alphabet of compressed segments, 6 bits a character. */
    safeBase64Alphabet: string;
  }
}
