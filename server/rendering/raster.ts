// The scene rasterised with @napi-rs/canvas (Skia): each layer's path data filled through Path2D,
// gradients made in the scene's units under one scale transform. Logos of every kind (the SVG ones
// sanitised) are decoded by the same Skia.
import { createCanvas, loadImage, Path2D, type Canvas, type Image, type SKRSContext2D } from '@napi-rs/canvas';
import type { Layer, Scene } from './geometry.js';
import type { Logo } from './logo.js';
import { cssColor, type Paint } from './paint.js';
import { encodePng } from './png.js';

function fillStyle(ctx: SKRSContext2D, paint: Paint): string | CanvasGradient {
  if (paint.kind === 'solid') return cssColor(paint.color);
  const g =
    paint.kind === 'linear'
      ? ctx.createLinearGradient(paint.x1, paint.y1, paint.x2, paint.y2)
      : ctx.createRadialGradient(paint.cx, paint.cy, 0, paint.cx, paint.cy, paint.r);
  for (const s of paint.stops) g.addColorStop(s.offset, cssColor(s.color));
  return g as unknown as CanvasGradient;
}

function fillLayers(ctx: SKRSContext2D, layers: Layer[]): void {
  for (const l of layers) {
    ctx.fillStyle = fillStyle(ctx, l.paint);
    ctx.fill(new Path2D(l.d), 'nonzero');
  }
}

// Decoded logos, by the parsed logo (itself cached by its data: URI in ./index.ts).
const decoded = new WeakMap<Logo, Image>();

/** The scene drawn on a canvas `widthPx` wide, over `underlay` (a CSS colour) when given. */
export async function sceneToCanvas(scene: Scene, widthPx: number, underlay?: string): Promise<Canvas> {
  const k = widthPx / scene.width;
  const canvas = createCanvas(Math.round(widthPx), Math.max(1, Math.round(scene.height * k)));
  const ctx = canvas.getContext('2d');
  if (underlay) {
    ctx.fillStyle = underlay;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
  }
  ctx.scale(k, k);
  fillLayers(ctx, scene.layers);
  if (scene.logo) {
    const { x, y, w, h } = scene.logo;
    let img = decoded.get(scene.logo.logo);
    if (!img) {
      img = await loadImage(scene.logo.logo.data);
      decoded.set(scene.logo.logo, img);
    }
    ctx.drawImage(img, x, y, w, h);
  }
  fillLayers(ctx, scene.overlays);
  return canvas;
}

export async function sceneToPng(scene: Scene, widthPx: number): Promise<Buffer> {
  const canvas = await sceneToCanvas(scene, widthPx);
  // getImageData un-premultiplies the colours of partly transparent pixels, as PNG wants them.
  const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  return encodePng(data, width, height);
}
