// zip-stream ships no types; the part of its API this service uses (server/qr-code-exports/zip.ts).
declare module 'zip-stream' {
  import type { Transform } from 'node:stream';

  interface ZipStreamOptions {
    comment?: string;
    forceZip64?: boolean;
    store?: boolean;
    zlib?: { level?: number };
  }
  interface EntryData {
    name: string;
    date?: Date | string;
    store?: boolean;
    mode?: number;
  }
  export default class ZipStream extends Transform {
    constructor(options?: ZipStreamOptions);
    entry(source: Buffer | string, data: EntryData, callback: (err?: Error | null) => void): this;
    finalize(): void;
  }
}
