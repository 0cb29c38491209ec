// ZBar's QR reader (the C library, LGPL-2.1-or-later, compiled to WebAssembly by @undecaf/zbar-wasm),
// run as a separate process of its own because of its licence: the service talks to it only over
// stdin/stdout. Each request is a 12-byte header (id, width, height, little-endian u32) and the
// width × height bytes of a greyscale image; each answer is one JSON line {id, texts}. The process
// ends when its stdin closes (its parent gone).
import { getDefaultScanner, scanGrayBuffer, ZBarConfigType, ZBarSymbolType } from '@undecaf/zbar-wasm';

const scanner = await getDefaultScanner();
// QR codes only: no time spent on linear barcodes, no false reads of them.
scanner.setConfig(ZBarSymbolType.ZBAR_NONE, ZBarConfigType.ZBAR_CFG_ENABLE, 0);
scanner.setConfig(ZBarSymbolType.ZBAR_QRCODE, ZBarConfigType.ZBAR_CFG_ENABLE, 1);

let pending = Buffer.alloc(0);
let busy = Promise.resolve();

async function scan(id, width, height, gray) {
  let texts = [];
  try {
    texts = (
      await scanGrayBuffer(
        gray.buffer.slice(gray.byteOffset, gray.byteOffset + gray.byteLength),
        width,
        height,
        scanner,
      )
    ).map((s) => s.decode());
  } catch {
    // an image ZBar cannot take reads as nothing found
  }
  process.stdout.write(JSON.stringify({ id, texts }) + '\n');
}

process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    if (pending.length < 12) return;
    const id = pending.readUInt32LE(0);
    const width = pending.readUInt32LE(4);
    const height = pending.readUInt32LE(8);
    const end = 12 + width * height;
    if (pending.length < end) return;
    const gray = Uint8Array.from(pending.subarray(12, end));
    pending = pending.subarray(end);
    busy = busy.then(() => scan(id, width, height, gray));
  }
});
process.stdin.on('end', () => process.exit(0));
process.stdout.write(JSON.stringify({ ready: true }) + '\n');
