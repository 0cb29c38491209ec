// The three decoder families the scannability verdict asks, each of its own lineage:
// - `zxing-cpp`: ZXing-C++ compiled to WebAssembly (zxing-wasm, MIT; ZXing-C++ is Apache-2.0), in
//   this thread; its binary is read from the package, never fetched;
// - `jsqr`: jsQR (Apache-2.0), a JavaScript reader of its own, in this thread;
// - `zbar`: ZBar (LGPL-2.1-or-later, via @undecaf/zbar-wasm), the reader behind many scanner apps
//   and point-of-sale readers, in a separate process (./zbar-process.mjs) because of its licence.
// Every image is greyscale, one byte per pixel.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import jsqrModule from 'jsqr';
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';

export const DECODER_FAMILIES = ['zxing-cpp', 'jsqr', 'zbar'] as const;
export type DecoderFamily = (typeof DECODER_FAMILIES)[number];

export interface Gray {
  data: Uint8Array;
  width: number;
  height: number;
}

// jsqr is CommonJS whose module.exports is the function itself; under NodeNext its default import
// is typed as the module namespace.
const jsQR = jsqrModule as unknown as typeof jsqrModule.default;
const require = createRequire(import.meta.url);

function rgba(img: Gray): Uint8ClampedArray {
  const out = new Uint8ClampedArray(img.width * img.height * 4);
  for (let i = 0, j = 0; i < img.data.length; i++, j += 4) {
    out[j] = out[j + 1] = out[j + 2] = img.data[i];
    out[j + 3] = 255;
  }
  return out;
}

let zxingReady: Promise<unknown> | undefined;
/** ZXing-C++'s WebAssembly, compiled once per thread from the package's binary (never fetched). */
export function zxing(): Promise<unknown> {
  if (!zxingReady) {
    const wasm = readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm'));
    zxingReady = prepareZXingModule({
      overrides: { wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) },
      fireImmediately: true,
    }) as Promise<unknown>;
  }
  return zxingReady;
}

async function decodeZxing(img: Gray): Promise<string[]> {
  await zxing();
  const found = await readBarcodes(
    { data: rgba(img), width: img.width, height: img.height, colorSpace: 'srgb' } as ImageData,
    // A phone is held roughly upright: no quarter turns (they cost time and read nothing more).
    { formats: ['QRCode'], tryHarder: true, tryInvert: true, tryRotate: false, maxNumberOfSymbols: 1 },
  );
  return found.filter((b) => b.isValid).map((b) => b.text);
}

function decodeJsqr(img: Gray, inverted: boolean): string[] {
  // One binarisation for a dark-on-light symbol; both for an inverted one (jsqr's onlyInvert throws).
  const found = jsQR(rgba(img), img.width, img.height, { inversionAttempts: inverted ? 'attemptBoth' : 'dontInvert' });
  return found ? [found.data] : [];
}

const ZBAR_ENTRY = fileURLToPath(new URL('./zbar-process.mjs', import.meta.url));

/** The ZBar process of this thread: started on first use, started again if it dies. */
class ZbarProcess {
  private child?: ChildProcessWithoutNullStreams;
  private ready?: Promise<void>;
  private nextId = 1;
  private waiting = new Map<number, { resolve: (t: string[]) => void; reject: (e: Error) => void }>();

  private start(): Promise<void> {
    const child = spawn(process.execPath, [ZBAR_ENTRY], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    let buffered = '';
    let onReady: () => void;
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      buffered += s;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl)) as { ready?: boolean; id?: number; texts?: string[] };
        buffered = buffered.slice(nl + 1);
        if (msg.ready) onReady();
        const w = msg.id !== undefined ? this.waiting.get(msg.id) : undefined;
        if (w) {
          this.waiting.delete(msg.id!);
          if (!this.waiting.size) this.hold(false);
          w.resolve(msg.texts ?? []);
        }
      }
    });
    child.stderr.resume();
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.ready = undefined;
      for (const w of this.waiting.values()) w.reject(new Error(`the ZBar process ended: ${why}`));
      this.waiting.clear();
    };
    child.on('exit', (code, signal) => gone(`exit ${code ?? signal}`));
    child.on('error', (err) => gone(err.message));
    child.stdin.on('error', () => gone('its input closed'));
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    this.hold(false);
    return Promise.race([
      ready,
      new Promise<void>((_, reject) => child.once('exit', () => reject(new Error('the ZBar process did not start')))),
    ]);
  }

  warm(): void {
    if (!this.ready) this.ready = this.start();
    this.ready.catch(() => (this.ready = undefined));
  }

  /** The process keeps this thread alive only while an answer is awaited. */
  private hold(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdout, c.stdin] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }

  async decode(img: Gray): Promise<string[]> {
    if (!this.ready) this.ready = this.start();
    this.hold(true);
    try {
      await this.ready;
    } finally {
      if (!this.waiting.size) this.hold(false);
    }
    const id = this.nextId++ >>> 0;
    const header = Buffer.alloc(12);
    header.writeUInt32LE(id, 0);
    header.writeUInt32LE(img.width, 4);
    header.writeUInt32LE(img.height, 8);
    return new Promise<string[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.hold(true);
      this.child!.stdin.write(Buffer.concat([header, img.data]));
    });
  }
}

const zbar = new ZbarProcess();

/**
 * Compiles ZXing-C++'s WebAssembly and starts ZBar's process ahead of the first verdict (a render
 * thread calls it when it starts), so the first check is not the one that pays for them.
 */
export function warmDecoders(): void {
  void zxing().catch(() => undefined);
  zbar.warm();
}

/** The texts a family reads in a greyscale image (none: empty). */
export async function decodeWith(family: DecoderFamily, img: Gray, inverted = false): Promise<string[]> {
  if (family === 'zxing-cpp') return decodeZxing(img);
  if (family === 'jsqr') return decodeJsqr(img, inverted);
  return zbar.decode(img);
}

/**
 * Which families read `text` in each image: ZBar's requests all go out first, so its process works
 * while this thread runs the other two families. With `stopAtFirst`, the in-thread families stop at
 * the first image one of them misses (ZBar's answers are then not awaited).
 */
export async function familiesReading(
  imgs: Gray[],
  text: string,
  opts: { families?: readonly DecoderFamily[]; inverted?: boolean; stopAtFirst?: boolean } = {},
): Promise<Set<DecoderFamily>[]> {
  const families = opts.families ?? DECODER_FAMILIES;
  const zbarAnswers = families.includes('zbar') ? imgs.map((img) => zbar.decode(img)) : [];
  // An abandoned answer must not become an unhandled rejection.
  for (const a of zbarAnswers) a.catch(() => undefined);
  const read: Set<DecoderFamily>[] = [];
  for (const img of imgs) {
    const set = new Set<DecoderFamily>();
    for (const f of families) {
      if (f !== 'zbar' && (await decodeWith(f, img, opts.inverted)).includes(text)) set.add(f);
    }
    read.push(set);
    if (opts.stopAtFirst && families.some((f) => f !== 'zbar' && !set.has(f))) return read;
  }
  const texts = await Promise.all(zbarAnswers);
  texts.forEach((t, i) => t.includes(text) && read[i].add('zbar'));
  return read;
}
