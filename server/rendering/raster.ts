// The scene rasterised with @napi-rs/canvas (Skia): each layer's path data filled through Path2D,
// gradients made in the scene's units under one scale transform. Logos of every kind (the SVG ones
// sanitised) are decoded by the same Skia.
import { readFileSync } from 'node:fs';
import { createCanvas, loadImage, Path2D, type Canvas, type Image, type SKRSContext2D } from '@napi-rs/canvas';
import type { Layer, Scene } from './geometry.js';
import type { Logo } from './logo.js';
import { cssColor, type Paint } from './paint.js';
import { encodePng } from './png.js';
import { ReusePool } from './reuse.js';

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

function canvasSize(scene: Scene, widthPx: number): [number, number] {
  return [Math.round(widthPx), Math.max(1, Math.round((scene.height * widthPx) / scene.width))];
}

/**
 * The scene drawn on a canvas `widthPx` wide, over `underlay` (a CSS colour) when given; on `reuse`
 * (cleared first, of the scene's size) instead of a new canvas when given.
 */
export async function sceneToCanvas(scene: Scene, widthPx: number, underlay?: string, reuse?: Canvas): Promise<Canvas> {
  const k = widthPx / scene.width;
  const canvas = reuse ?? createCanvas(...canvasSize(scene, widthPx));
  const ctx = canvas.getContext('2d');
  if (reuse) ctx.reset(); // transparent again, transform and state back to their defaults
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

// Canvases of PNG renders, kept for the next render of the same size: a new canvas per image is
// megabytes of memory outside V8's heap that V8 answers with a full collection every few images,
// the main source of slow renders at the 95th percentile (docs/rendering.md). One render holds a
// canvas from its first stroke until its pixels are read. Four at most, each at most 2048 × 2048.
const idle = new ReusePool<Canvas>(4);
const IDLE_MAX_PIXELS = 2048 * 2048;

export async function sceneToPng(scene: Scene, widthPx: number): Promise<Buffer> {
  const [w, h] = canvasSize(scene, widthPx);
  const key = `${w}x${h}`;
  const canvas = await sceneToCanvas(scene, widthPx, undefined, idle.take(key));
  // getImageData un-premultiplies the colours of partly transparent pixels, as PNG wants them.
  const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, w, h);
  if (w * h <= IDLE_MAX_PIXELS) idle.give(key, canvas);
  return encodePng(data, width, height);
}

/** The side, in pixels, at which a logo's draw cost is measured (docs/rendering.md). */
export const LOGO_COST_PX = 512;

/**
 * CPU milliseconds this thread has run, from Linux's per-thread scheduler statistics (nanoseconds,
 * the first field of /proc/thread-self/schedstat); undefined where they cannot be read.
 */
function threadCpuMs(): number | undefined {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Milliseconds to decode a logo and draw it into a LOGO_COST_PX square, the better of two tries (the
 * first may pay for loading Skia's codecs), or the first alone when it already exceeds `budgetMs`.
 * Skia decodes and draws in the calling thread, so a try counts that thread's own CPU time: neither
 * other processes nor this process's other threads (a render thread runs at the lowest priority, so
 * a busy machine stretches its wall-clock time many times over) make an ordinary logo look costly.
 * Where the thread's CPU time cannot be read (not Linux), a try counts the lesser of its wall-clock
 * time and the process's CPU time. An SVG logo with filters or thousands of shapes costs hundreds; an
 * ordinary one a few.
 */
export async function logoDrawCost(logo: Logo, budgetMs: number): Promise<number> {
  const canvas = createCanvas(LOGO_COST_PX, LOGO_COST_PX);
  const ctx = canvas.getContext('2d');
  let best = Infinity;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const own0 = threadCpuMs();
    ctx.drawImage(await loadImage(logo.data), 0, 0, LOGO_COST_PX, LOGO_COST_PX);
    ctx.getImageData(0, 0, 1, 1); // the drawing is done by the time a pixel can be read
    const own1 = threadCpuMs();
    const cpu = process.cpuUsage(cpu0);
    const took =
      own0 !== undefined && own1 !== undefined
        ? own1 - own0
        : Math.min(performance.now() - t0, (cpu.user + cpu.system) / 1000);
    best = Math.min(best, took);
    if (best > budgetMs) break;
  }
  return best;
}
