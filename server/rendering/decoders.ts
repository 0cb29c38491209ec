// The three decoder families the scannability verdict asks, each of its own lineage:
// - `zxing-cpp`: ZXing-C++ compiled to WebAssembly (zxing-wasm, MIT; ZXing-C++ is Apache-2.0), in
//   this thread; its binary is read from the package, never fetched;
// - `jsqr`: jsQR (Apache-2.0), a JavaScript reader of its own, and
// - `zbar`: ZBar (LGPL-2.1-or-later, via @undecaf/zbar-wasm), the reader behind many scanner apps
//   and point-of-sale readers, each in a decoder process of its own (./decoder-process.mjs): ZBar
//   because of its licence, jsQR so that it reads while this thread makes captures and runs
//   ZXing-C++.
// Every image is greyscale, one byte per pixel.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';

export const DECODER_FAMILIES = ['zxing-cpp', 'jsqr', 'zbar'] as const;
export type DecoderFamily = (typeof DECODER_FAMILIES)[number];
/** The families the decoder process reads. */
type Aside = Exclude<DecoderFamily, 'zxing-cpp'>;

export interface Gray {
  data: Uint8Array;
  width: number;
  height: number;
}

const require = createRequire(import.meta.url);

/** Whether the platform's words are little-endian (the order grayToRgba stores its bytes in). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Grey to opaque RGBA, one 32-bit store a pixel (the byte order of the platform's words). */
function grayToRgba(gray: Uint8Array): Uint8ClampedArray {
  const out = new Uint8ClampedArray(gray.length * 4);
  const words = new Uint32Array(out.buffer, out.byteOffset, gray.length);
  if (LITTLE_ENDIAN) for (let i = 0; i < gray.length; i++) words[i] = 0xff000000 | (gray[i] * 0x010101);
  else for (let i = 0; i < gray.length; i++) words[i] = ((gray[i] * 0x010101) << 8) | 0xff;
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
    { data: grayToRgba(img.data), width: img.width, height: img.height, colorSpace: 'srgb' } as ImageData,
    // A phone is held roughly upright: no quarter turns (they cost time and read nothing more).
    { formats: ['QRCode'], tryHarder: true, tryInvert: true, tryRotate: false, maxNumberOfSymbols: 1 },
  );
  return found.filter((b) => b.isValid).map((b) => b.text);
}

const DECODER_ENTRY = fileURLToPath(new URL('./decoder-process.mjs', import.meta.url));
/** The request header (id, width, height, flags) and its flags, as ./decoder-process.mjs reads them. */
const HEADER_BYTES = 16;
const FLAGS = { zbar: 1, jsqr: 2, inverted: 4 } as const;

type Answer = Partial<Record<Aside, string[]>>;

/** A decoder process of this thread: started on first use, started again if it dies. */
class DecoderProcess {
  private child?: ChildProcessWithoutNullStreams;
  private ready?: Promise<void>;
  private nextId = 1;
  /** Whether the process keeps this thread alive (changed only when it must: each change is a system call). */
  private held = false;
  private waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();

  /** Images asked for and not yet answered (counted from the call, before the process is ready). */
  asked = 0;

  private start(): Promise<void> {
    const child = spawn(process.execPath, [DECODER_ENTRY], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.held = true; // a new child's handles are referenced
    let buffered = '';
    let onReady: () => void;
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      buffered += s;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl)) as Answer & { ready?: boolean; id?: number };
        buffered = buffered.slice(nl + 1);
        if (msg.ready) onReady();
        const w = msg.id !== undefined ? this.waiting.get(msg.id) : undefined;
        if (w) {
          this.waiting.delete(msg.id!);
          if (!this.waiting.size) this.hold(false);
          w.resolve(msg);
        }
      }
    });
    child.stderr.resume();
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.ready = undefined;
      for (const w of this.waiting.values()) w.reject(new Error(`the decoder process ended: ${why}`));
      this.waiting.clear();
    };
    child.on('exit', (code, signal) => gone(`exit ${code ?? signal}`));
    child.on('error', (err) => gone(err.message));
    child.stdin.on('error', () => gone('its input closed'));
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    this.hold(false);
    return Promise.race([
      ready,
      new Promise<void>((_, reject) =>
        child.once('exit', () => reject(new Error('the decoder process did not start'))),
      ),
    ]);
  }

  warm(): void {
    if (!this.ready) this.ready = this.start();
    this.ready.catch(() => (this.ready = undefined));
  }

  /** The process keeps this thread alive only while an answer is awaited. */
  private hold(on: boolean): void {
    const c = this.child;
    if (!c || on === this.held) return;
    this.held = on;
    for (const h of [c, c.stdout, c.stdin] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }

  /** The texts `family` reads in the image. */
  async decode(img: Gray, family: Aside, inverted: boolean): Promise<string[]> {
    this.asked++;
    try {
      return await this.send(img, family, inverted);
    } finally {
      this.asked--;
    }
  }

  private async send(img: Gray, family: Aside, inverted: boolean): Promise<string[]> {
    if (!this.ready) this.ready = this.start();
    this.hold(true);
    try {
      await this.ready;
    } finally {
      if (!this.waiting.size) this.hold(false);
    }
    const id = this.nextId++ >>> 0;
    const flags = FLAGS[family] | (inverted ? FLAGS.inverted : 0);
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(id, 0);
    header.writeUInt32LE(img.width, 4);
    header.writeUInt32LE(img.height, 8);
    header.writeUInt32LE(flags, 12);
    return new Promise<string[]>((resolve, reject) => {
      this.waiting.set(id, { resolve: (a) => resolve(a[family] ?? []), reject });
      this.hold(true);
      // Header and pixels in one system call (a vectored write), the pixels not copied.
      const stdin = this.child!.stdin;
      stdin.cork();
      stdin.write(header);
      stdin.write(img.data);
      stdin.uncork();
    });
  }
}

/**
 * The decoder processes of this thread: ZBar in one, jsQR in as many as the machine has cores (two at
 * least, four at most). jsQR takes about four fifths of the decoder processes' time, so a print size's
 * images are shared among its processes (each goes to the one with the fewest images waiting) and its
 * last image is read as soon as it is made instead of behind the five before it.
 */
const JSQR_PROCESSES = Math.min(4, Math.max(2, os.availableParallelism()));
const aside = {
  jsqr: Array.from({ length: JSQR_PROCESSES }, () => new DecoderProcess()),
  zbar: [new DecoderProcess()],
};

/**
 * Compiles ZXing-C++'s WebAssembly and starts the decoder processes ahead of the first verdict (a
 * render thread calls it when it starts), so the first check is not the one that pays for them.
 */
export function warmDecoders(): void {
  void zxing().catch(() => undefined);
  for (const p of [...aside.jsqr, ...aside.zbar]) p.warm();
}

/** The texts a decoder process's family reads in an image, from the process of the family with the fewest images waiting. */
function decodeAside(family: Aside, img: Gray, inverted: boolean): Promise<string[]> {
  const processes = aside[family];
  let least = processes[0];
  for (const p of processes) if (p.asked < least.asked) least = p;
  return least.decode(img, family, inverted);
}

/** The texts a family reads in a greyscale image (none: empty). */
export async function decodeWith(family: DecoderFamily, img: Gray, inverted = false): Promise<string[]> {
  if (family === 'zxing-cpp') return decodeZxing(img);
  return decodeAside(family, img, inverted);
}

/** A print size's images being read: what this thread has found, and what every family has. */
export interface Reading {
  /**
   * Resolves once this thread has made the images and ZXing-C++ has read them: true when it read
   * every one and no decoder process has missed one so far (false: the images do not all pass).
   */
  zxing: Promise<boolean>;
  /** Which families read the text in each image made (with `stopAtFirst`, up to the first miss). */
  families: Promise<Set<DecoderFamily>[]>;
}

/**
 * Which families read `text` in each of `count` images, made by `image(i)` one after another: each
 * goes to the decoder processes (jsQR, ZBar) as soon as it is made, and this thread runs ZXing-C++ on
 * it and makes the next while they read. With `stopAtFirst`, it stops at the first image some family
 * misses (the images after it are not made); the answer then ends with that image. There an image
 * goes to the decoder processes only once ZXing-C++ has read it: an image it misses already decides
 * the answer, and the processes are spared it.
 *
 * With `needed`, the reading is walked ahead to before it is known to be needed: the images are made,
 * read and sent at once (so that the decoder processes never wait for the answer), and once `needed`
 * resolves false no more are made; what was sent is still read, and the answer is to be discarded.
 */
export function familiesReading(
  count: number,
  image: (i: number) => Promise<Gray>,
  text: string,
  opts: { inverted?: boolean; stopAtFirst?: boolean; needed?: Promise<boolean> } = {},
): Reading {
  let abandoned = false;
  let abandon = () => {};
  /** Resolves when the reading is abandoned; never when it is needed. */
  const whenAbandoned = new Promise<void>((resolve) => (abandon = resolve));
  const stop = () => {
    abandoned = true;
    abandon();
  };
  opts.needed?.then((yes) => yes || stop(), stop);
  const read: Set<DecoderFamily>[] = [];
  const answers: Promise<void>[] = [];
  let missed = false;
  const ask = (img: Gray, set: Set<DecoderFamily>) => {
    for (const f of ['jsqr', 'zbar'] as const) {
      const answer = decodeAside(f, img, opts.inverted ?? false).then((texts) => {
        if (texts.includes(text)) set.add(f);
        else missed = true;
      });
      // An abandoned answer must not become an unhandled rejection.
      answer.catch(() => undefined);
      answers.push(answer);
    }
  };
  const zxing = (async () => {
    // One turn first, so that a reading asked for after `needed` resolved false makes no image.
    await undefined;
    let all = true;
    for (let i = 0; i < count && !abandoned && !(opts.stopAtFirst && missed); i++) {
      const img = await image(i);
      const set = new Set<DecoderFamily>();
      read.push(set);
      if (!opts.stopAtFirst) ask(img, set);
      if ((await decodeZxing(img)).includes(text)) set.add('zxing-cpp');
      else all = missed = true;
      if (opts.stopAtFirst && !missed) ask(img, set);
    }
    return all && !missed && read.length === count;
  })();
  const families = zxing.then(async () => {
    if (!(opts.stopAtFirst && missed)) await Promise.race([Promise.all(answers), whenAbandoned]);
    return read;
  });
  // The caller may abandon a speculative reading: its failures must not become unhandled rejections.
  zxing.catch(() => undefined);
  families.catch(() => undefined);
  return { zxing, families };
}
