// Decodes a rendered QR image in tests with ZXing (@zxing/library), a different decoder from the
// one the service's scannability check uses (jsqr), so the two cannot share a blind spot.
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { BinaryBitmap, DecodeHintType, HybridBinarizer, QRCodeReader, RGBLuminanceSource } from '@zxing/library';

/** The text of the QR code in an image (PNG, JPEG or SVG bytes), laid on white; throws when none is found. */
export async function decodeQr(image: Buffer, width?: number): Promise<string> {
  const img = await loadImage(image);
  const w = width ?? img.width;
  const h = Math.round((img.height * w) / img.width);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, h);
  ctx.drawImage(img, 0, 0, w, h);
  const { data } = ctx.getImageData(0, 0, w, h);
  const luminance = new Uint8ClampedArray(w * h);
  for (let i = 0; i < w * h; i++) {
    luminance[i] = (data[i * 4] * 299 + data[i * 4 + 1] * 587 + data[i * 4 + 2] * 114) / 1000;
  }
  const bitmap = new BinaryBitmap(new HybridBinarizer(new RGBLuminanceSource(luminance, w, h)));
  return new QRCodeReader().decode(bitmap, new Map([[DecodeHintType.TRY_HARDER, true]])).getText();
}
