// A small PNG logo (a red disc with a white square) as a data: URI, for the benchmark and the
// documentation's example images.
import { createCanvas } from '@napi-rs/canvas';

export function samplePngLogo(): string {
  const c = createCanvas(120, 120);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#e53935';
  ctx.beginPath();
  ctx.arc(60, 60, 56, 0, Math.PI * 2);
  ctx.fill();
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(34, 34, 52, 52);
  return 'data:image/png;base64,' + c.toBuffer('image/png').toString('base64');
}
