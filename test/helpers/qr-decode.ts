// Decodes rendered QR images in tests with ZXing-C++ compiled to WebAssembly (zxing-wasm, MIT),
// prepared as the service prepares it (the binary read from the package: no network). ZXing-C++ is
// also one of the scannability verdict's three families; the outside check of verdicts is Debian's
// zbarimg (test/unit/scannability-corpus.test.ts).
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { readBarcodes } from 'zxing-wasm/reader';
import { zxing } from '../../server/rendering/decoders.js';

/** An image (PNG, JPEG or SVG bytes) as a PNG `width` pixels wide (default: its own), laid on white. */
async function asPng(image: Buffer, width?: number): Promise<Uint8Array> {
  const img = await loadImage(image);
  const w = Math.round(width ?? img.width);
  const h = Math.round((img.height * w) / img.width);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, h);
  ctx.drawImage(img, 0, 0, w, h);
  return new Uint8Array(await canvas.encode('png'));
}

/** The text of the QR code in an image; throws when none is found (also at 1.5 times the size). */
export async function decodeQr(image: Buffer, width?: number): Promise<string> {
  await zxing();
  const own = width ?? (await loadImage(image)).width;
  for (const scale of [1, 1.5]) {
    const png = await asPng(image, own * scale);
    const found = await readBarcodes(png, { formats: ['QRCode'], tryHarder: true });
    if (found.length) return found[0].text;
  }
  throw new Error('no QR code found in the image');
}
