// A ZIP written entry by entry into numbered chunks (zip-stream, MIT, of the archiver project: it
// streams, keeps only each entry's header for the central directory, and switches to ZIP64 by
// itself). At most HIGH_WATER bytes of output wait in memory: adding an entry waits while the
// chunk store is behind, so memory stays flat however many files the ZIP holds.
import ZipStream from 'zip-stream';

const CHUNK_BYTES = 1 << 20;
const HIGH_WATER = 4 * CHUNK_BYTES;

/** Stores chunk number `seq` (0, 1, 2, ...) of the ZIP. */
export type ChunkStore = (seq: number, data: Buffer) => Promise<void>;

const never = new Promise<never>(() => undefined);
const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

export class ZipChunkWriter {
  private readonly zip = new ZipStream({ zlib: { level: 6 } });
  private readonly drained: Promise<void>;
  /** Rejects when the chunk store fails; never resolves otherwise. */
  private readonly failure: Promise<never>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  private error: unknown = null;
  /** Bytes stored so far (the ZIP's size once finished). */
  bytes = 0;

  constructor(
    private readonly store: ChunkStore,
    /** The files' modification time (the export's, so a ZIP's bytes depend only on its contents). */
    private readonly date: Date,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {
    this.drained = this.consume();
    this.failure = this.drained.then(
      () => never,
      (err: unknown) => {
        this.error = err;
        throw err;
      },
    );
    this.failure.catch(() => undefined);
  }

  private async consume(): Promise<void> {
    for await (const chunk of this.zip as AsyncIterable<Buffer>) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      while (this.pendingBytes >= this.chunkBytes) await this.flush(this.chunkBytes);
    }
    if (this.pendingBytes) await this.flush(this.pendingBytes);
  }

  private async flush(n: number): Promise<void> {
    const all = Buffer.concat(this.pending, this.pendingBytes);
    const rest = all.subarray(n);
    this.pending = rest.length ? [Buffer.from(rest)] : [];
    this.pendingBytes = rest.length;
    await this.store(this.seq++, all.subarray(0, n));
    this.bytes += n;
  }

  /** Adds one file; deflated when `compress` (SVG), stored as is otherwise (PNG and PDF are compressed already). */
  async add(name: string, body: Buffer, compress: boolean): Promise<void> {
    const added = new Promise<void>((resolve, reject) =>
      this.zip.entry(body, { name, date: this.date, store: !compress }, (err) => (err ? reject(err) : resolve())),
    );
    await Promise.race([added, this.failure]);
    while (this.zip.readableLength + this.pendingBytes > HIGH_WATER) {
      if (this.error) throw this.error;
      await pause();
    }
  }

  /** Writes the central directory and stores the last chunk; returns the ZIP's size. */
  async finish(): Promise<number> {
    this.zip.finalize();
    await this.drained;
    return this.bytes;
  }

  /** Stops writing after a failure (the chunks stored so far are the caller's to delete). */
  abort(): void {
    this.zip.destroy();
  }
}
