// Logos as data: URIs for tests, benchmarks and the documentation's example images.
import { createCanvas } from '@napi-rs/canvas';

/** A small PNG logo: a red disc with a white square. */
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

/**
 * An SVG logo of a few hundred bytes that takes Skia far longer than LOGO_DRAW_BUDGET_MS to draw:
 * ten squares, each through a twelve-octave turbulence and a blur (about 0.5-2 s at 512 px). For the
 * save-time refusal, the render queue's 503 and the benchmark of renders beside redirects.
 */
export function costlySvgLogo(): string {
  const filtered = '<rect width="100" height="100" filter="url(#t)"/>'.repeat(10);
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><filter id="t">' +
    '<feTurbulence baseFrequency="0.05" numOctaves="12"/><feGaussianBlur stdDeviation="8"/></filter>' +
    `${filtered}</svg>`;
  return 'data:image/svg+xml;base64,' + Buffer.from(svg).toString('base64');
}
