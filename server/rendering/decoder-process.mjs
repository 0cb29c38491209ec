// A decoder process: the families of the scannability verdict that are not read in the render
// thread, in long-lived processes of their own (./decoders.ts starts one for each family), so that
// they read while the thread makes the next capture and runs ZXing-C++:
// - ZBar's QR reader (the C library, LGPL-2.1-or-later, compiled to WebAssembly by
//   @undecaf/zbar-wasm), which must run apart from the service because of its licence: the service
//   talks to this process only over stdin/stdout;
// - jsQR (Apache-2.0), moved here for speed: a render thread on its own would read every image with
//   both in-thread families one after the other.
// Each request is a 16-byte header (id, width, height, flags; little-endian u32; flags: 1 ZBar,
// 2 jsQR, 4 the style is inverted) and the width × height bytes of a greyscale image; each answer is
// one JSON line {id, zbar?, jsqr?} with the texts each family read. The process ends when its stdin
// closes (its parent gone).
import jsQR from 'jsqr';
import { scanGrayBuffer, ZBarConfigType, ZBarScanner, ZBarSymbolType } from '@undecaf/zbar-wasm';

const HEADER_BYTES = 16;
const FLAGS = { zbar: 1, jsqr: 2, inverted: 4 };

/**
 * A ZBar scanner of its own for each image: ZBar's QR reader draws from a random generator (ISAAC,
 * seeded when the reader is made) while it fits the symbol's grid, so a scanner kept across images
 * reads an image differently depending on what it read before. A fresh one reads each image the same
 * way, so the verdict is reproducible.
 */
async function scanner() {
  const s = await ZBarScanner.create();
  // QR codes only: no time spent on linear barcodes, no false reads of them.
  s.setConfig(ZBarSymbolType.ZBAR_NONE, ZBarConfigType.ZBAR_CFG_ENABLE, 0);
  s.setConfig(ZBarSymbolType.ZBAR_QRCODE, ZBarConfigType.ZBAR_CFG_ENABLE, 1);
  return s;
}

async function readZbar(gray, width, height) {
  const s = await scanner();
  try {
    // The image is this request's own copy (see below): ZBar may have its buffer.
    return (await scanGrayBuffer(gray.buffer, width, height, s)).map((sym) => sym.decode());
  } catch {
    return []; // an image ZBar cannot take reads as nothing found
  } finally {
    s.destroy();
  }
}

/** jsQR's RGBA input, kept for the next image of the same size (a new one each time is garbage to collect). */
let rgba = new Uint8ClampedArray(0);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function readJsqr(gray, width, height, inverted) {
  if (rgba.length !== width * height * 4) rgba = new Uint8ClampedArray(width * height * 4);
  // Opaque grey, one 32-bit store a pixel.
  const words = new Uint32Array(rgba.buffer, 0, gray.length);
  if (LITTLE_ENDIAN) for (let i = 0; i < gray.length; i++) words[i] = 0xff000000 | (gray[i] * 0x010101);
  else for (let i = 0; i < gray.length; i++) words[i] = ((gray[i] * 0x010101) << 8) | 0xff;
  // One binarisation for a dark-on-light symbol; both for an inverted one (jsqr's onlyInvert throws).
  const found = jsQR(rgba, width, height, { inversionAttempts: inverted ? 'attemptBoth' : 'dontInvert' });
  return found ? [found.data] : [];
}

async function read(id, width, height, flags, gray) {
  const answer = { id };
  if (flags & FLAGS.jsqr) answer.jsqr = readJsqr(gray, width, height, (flags & FLAGS.inverted) !== 0);
  if (flags & FLAGS.zbar) answer.zbar = await readZbar(gray, width, height);
  process.stdout.write(JSON.stringify(answer) + '\n');
}

(await scanner()).destroy();
let pending = Buffer.alloc(0);
let busy = Promise.resolve();
process.stdin.on('data', (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  for (;;) {
    if (pending.length < HEADER_BYTES) return;
    const id = pending.readUInt32LE(0);
    const width = pending.readUInt32LE(4);
    const height = pending.readUInt32LE(8);
    const flags = pending.readUInt32LE(12);
    const end = HEADER_BYTES + width * height;
    if (pending.length < end) return;
    const gray = Uint8Array.from(pending.subarray(HEADER_BYTES, end));
    pending = pending.subarray(end);
    busy = busy.then(() => read(id, width, height, flags, gray));
  }
});
process.stdin.on('end', () => process.exit(0));
process.stdout.write(JSON.stringify({ ready: true }) + '\n');
