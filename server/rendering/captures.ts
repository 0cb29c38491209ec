// Captures like a phone's: the symbol as a phone camera sees it at the print size and scanning
// distance the style declares (its `print` hint), then one impairment each: defocus blur, JPEG
// compression, a 10° rotation, a perspective tilt, uneven lighting and sensor noise. Every capture is
// a fixed function of the scene and its size (noise from a fixed seed), so a verdict is reproducible.
import { createCanvas, loadImage, type Canvas } from '@napi-rs/canvas';
import type { Gray } from './decoders.js';
import type { Scene } from './geometry.js';
import { sceneToCanvas } from './raster.js';

/** The print hint's defaults: a 2 cm symbol scanned from 20 cm. */
export const DEFAULT_PRINT = { size_mm: 20, distance_mm: 200 } as const;
export interface PrintHint {
  /** Side of the symbol (its modules, quiet zone left out), in millimetres. */
  size_mm: number;
  /** How far the phone is held from it, in millimetres. */
  distance_mm: number;
}

/**
 * The camera: the frame a scanning app analyses (1920 × 1080, landscape) across a 65° horizontal
 * field of view, as a typical phone's main camera in video mode.
 */
const CAMERA = { framePx: 1920, fovDeg: 65 } as const;
const FOCAL_PX = CAMERA.framePx / (2 * Math.tan(((CAMERA.fovDeg / 2) * Math.PI) / 180));

/** Camera pixels per millimetre of paper at `distanceMm`. */
function pixelsPerMm(distanceMm: number): number {
  return FOCAL_PX / distanceMm;
}

export const CAPTURES = ['blur', 'jpeg', 'rotation', 'tilt', 'lighting', 'noise'] as const;
export type CaptureKind = (typeof CAPTURES)[number];

/** The impairments, in one place (docs/rendering.md lists them). */
const IMPAIRMENTS = {
  /** Optics of every capture: a Gaussian blur of this sigma, in camera pixels. */
  lensSigmaPx: 0.6,
  /** The blur capture's defocus sigma, in camera pixels. */
  defocusSigmaPx: 1.3,
  jpegQuality: 0.4,
  rotationDeg: 10,
  /** Turned about the vertical axis, seen through the camera's perspective. */
  tiltDeg: 35,
  /** Light falls from full on one corner to this share on the opposite one. */
  darkestLight: 0.35,
  /** Sensor noise: Gaussian, sigma in grey levels, from a fixed seed. */
  noiseSigma: 12,
  noiseSeed: 18004,
} as const;

function toGray(canvas: Canvas): Gray {
  const { width, height } = canvas;
  const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
  const out = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < out.length; i++, j += 4) {
    out[i] = (data[j] * 299 + data[j + 1] * 587 + data[j + 2] * 114) / 1000;
  }
  return { data: out, width, height };
}

/**
 * A separable Gaussian blur, edges clamped. Each pixel's sum adds the kernel's taps in order, first
 * along its row (kept as a 32-bit float), then down its column, rounded to a byte. The two kernels
 * the captures use (5 and 9 taps) are written out tap by tap: the same sums in the same order as the
 * loop for any other, so the same bytes, in about half the time.
 */
function gaussianBlur(img: Gray, sigma: number): Gray {
  const r = Math.max(1, Math.ceil(sigma * 3));
  const k32 = new Float32Array(2 * r + 1);
  let sum = 0;
  for (let i = -r; i <= r; i++) sum += k32[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k32.length; i++) k32[i] /= sum;
  const k = Float64Array.from(k32);
  const n = k.length;
  const { width: w, height: h } = img;
  const src = img.data;
  const tmp = new Float32Array(w * h);
  const out = new Uint8Array(w * h);
  // A row with r copies of its edge pixels on either side.
  const padded = new Float64Array(w + 2 * r);
  const [k0, k1, k2, k3, k4, k5, k6, k7, k8] = k;
  for (let y = 0; y < h; y++) {
    const row = y * w;
    padded.fill(src[row], 0, r);
    padded.fill(src[row + w - 1], w + r);
    for (let x = 0; x < w; x++) padded[r + x] = src[row + x];
    const p = padded;
    if (n === 5) {
      for (let x = 0; x < w; x++)
        tmp[row + x] = k0 * p[x] + k1 * p[x + 1] + k2 * p[x + 2] + k3 * p[x + 3] + k4 * p[x + 4];
    } else if (n === 9) {
      for (let x = 0; x < w; x++) {
        tmp[row + x] =
          k0 * p[x] +
          k1 * p[x + 1] +
          k2 * p[x + 2] +
          k3 * p[x + 3] +
          k4 * p[x + 4] +
          k5 * p[x + 5] +
          k6 * p[x + 6] +
          k7 * p[x + 7] +
          k8 * p[x + 8];
      }
    } else {
      for (let x = 0; x < w; x++) {
        let s = k0 * p[x];
        for (let i = 1; i < n; i++) s += k[i] * p[x + i];
        tmp[row + x] = s;
      }
    }
  }
  // The rows each tap of a column reads, edges clamped.
  const rows = new Int32Array(n);
  for (let y = 0; y < h; y++) {
    for (let i = 0; i < n; i++) rows[i] = Math.min(h - 1, Math.max(0, y + i - r)) * w;
    const [r0, r1, r2, r3, r4, r5, r6, r7, r8] = rows;
    const t = tmp;
    const row = y * w;
    if (n === 5) {
      for (let x = 0; x < w; x++) {
        out[row + x] = Math.round(k0 * t[r0 + x] + k1 * t[r1 + x] + k2 * t[r2 + x] + k3 * t[r3 + x] + k4 * t[r4 + x]);
      }
    } else if (n === 9) {
      for (let x = 0; x < w; x++) {
        out[row + x] = Math.round(
          k0 * t[r0 + x] +
            k1 * t[r1 + x] +
            k2 * t[r2 + x] +
            k3 * t[r3 + x] +
            k4 * t[r4 + x] +
            k5 * t[r5 + x] +
            k6 * t[r6 + x] +
            k7 * t[r7 + x] +
            k8 * t[r8 + x],
        );
      }
    } else {
      for (let x = 0; x < w; x++) {
        let s = k0 * t[r0 + x];
        for (let i = 1; i < n; i++) s += k[i] * t[rows[i] + x];
        out[row + x] = Math.round(s);
      }
    }
  }
  return { data: out, width: w, height: h };
}

/** The printed symbol on white paper, `pxPerModule` camera pixels a module, with room to turn it. */
export async function photograph(scene: Scene, pxPerModule: number): Promise<Canvas> {
  const widthPx = Math.max(8, Math.round(scene.width * pxPerModule));
  const symbol = await sceneToCanvas(scene, widthPx, '#ffffff');
  // A turn of 10° reaches 8% of the side past each edge.
  const pad = Math.ceil(Math.max(symbol.width, symbol.height) * 0.1);
  const canvas = createCanvas(symbol.width + 2 * pad, symbol.height + 2 * pad);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(symbol, pad, pad);
  return canvas;
}

function rotated(photo: Canvas, deg: number): Canvas {
  const canvas = createCanvas(photo.width, photo.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.translate(canvas.width / 2, canvas.height / 2);
  ctx.rotate((deg * Math.PI) / 180);
  ctx.drawImage(photo, -photo.width / 2, -photo.height / 2);
  return canvas;
}

/** The paper turned `deg` about its vertical axis, as the camera's pinhole sees it (white outside). */
function tilt(img: Gray, deg: number): Gray {
  const { width: w, height: h } = img;
  const t = (deg * Math.PI) / 180;
  const [cos, sin] = [Math.cos(t), Math.sin(t)];
  const out = new Uint8Array(w * h).fill(255);
  const cx = w / 2;
  const cy = h / 2;
  for (let v = 0; v < h; v++) {
    for (let u = 0; u < w; u++) {
      const du = u - cx;
      const x = du / (cos - (du * sin) / FOCAL_PX);
      const y = (v - cy) * (1 + (x * sin) / FOCAL_PX);
      const sx = x + cx;
      const sy = y + cy;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= w || y0 + 1 >= h) continue;
      const fx = sx - x0;
      const fy = sy - y0;
      const i = y0 * w + x0;
      const d = img.data;
      const top = d[i] + (d[i + 1] - d[i]) * fx;
      const bottom = d[i + w] + (d[i + w + 1] - d[i + w]) * fx;
      out[v * w + u] = (top + (bottom - top) * fy + 0.5) | 0;
    }
  }
  return { data: out, width: w, height: h };
}

function lighting(img: Gray, darkest: number): Gray {
  const { width: w, height: h } = img;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const light = 1 - (1 - darkest) * ((x / w + y / h) / 2);
      out[y * w + x] = Math.round(img.data[y * w + x] * light);
    }
  }
  return { data: out, width: w, height: h };
}

/** mulberry32: a small seeded generator, so the noise is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The noise of `length` pixels from `seed`: the same deviates every time, kept for a few sizes. */
const deviatesKept = new Map<string, Float64Array>();
function deviates(length: number, sigma: number, seed: number): Float64Array {
  const key = `${length} ${sigma} ${seed}`;
  let dev = deviatesKept.get(key);
  if (dev) return dev;
  const rand = seeded(seed);
  dev = new Float64Array(length);
  for (let i = 0; i < length; i += 2) {
    // Box–Muller: two normal deviates from two uniform ones.
    const r = Math.sqrt(-2 * Math.log(1 - rand())) * sigma;
    const a = 2 * Math.PI * rand();
    dev[i] = r * Math.cos(a);
    if (i + 1 < length) dev[i + 1] = r * Math.sin(a);
  }
  // A symbol's version and print size give few capture sizes; the oldest is forgotten past eight.
  if (deviatesKept.size >= 8) deviatesKept.delete(deviatesKept.keys().next().value!);
  deviatesKept.set(key, dev);
  return dev;
}

function noise(img: Gray, sigma: number, seed: number): Gray {
  const dev = deviates(img.data.length, sigma, seed);
  const out = new Uint8Array(img.data.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.min(255, Math.max(0, Math.round(img.data[i] + dev[i])));
  return { data: out, width: img.width, height: img.height };
}

async function jpeg(img: Gray, quality: number): Promise<Gray> {
  const canvas = createCanvas(img.width, img.height);
  const ctx = canvas.getContext('2d');
  const id = ctx.createImageData(img.width, img.height);
  for (let i = 0, j = 0; i < img.data.length; i++, j += 4) {
    id.data[j] = id.data[j + 1] = id.data[j + 2] = img.data[i];
    id.data[j + 3] = 255;
  }
  ctx.putImageData(id, 0, 0);
  const decoded = await loadImage(await canvas.encode('jpeg', Math.round(quality * 100)));
  const back = createCanvas(img.width, img.height);
  back.getContext('2d').drawImage(decoded, 0, 0);
  return toGray(back);
}

/**
 * The captures of one photograph (./photograph), each made when first asked for; what they share
 * (the grey image, the lens's blur of it) is made once.
 */
export function captures(photo: Canvas): (kind: CaptureKind) => Promise<Gray> {
  const I = IMPAIRMENTS;
  const lens = (g: Gray) => gaussianBlur(g, I.lensSigmaPx);
  let flat: Gray | undefined;
  let lensed: Gray | undefined;
  const flatOf = () => (flat ??= toGray(photo));
  const lensedOf = () => (lensed ??= lens(flatOf()));
  const make = async (kind: CaptureKind): Promise<Gray> => {
    if (kind === 'rotation') return lens(toGray(rotated(photo, I.rotationDeg)));
    if (kind === 'blur') return gaussianBlur(flatOf(), I.defocusSigmaPx);
    if (kind === 'jpeg') return jpeg(lensedOf(), I.jpegQuality);
    if (kind === 'tilt') return lens(tilt(flatOf(), I.tiltDeg));
    if (kind === 'lighting') return lens(lighting(flatOf(), I.darkestLight));
    return noise(lensedOf(), I.noiseSigma, I.noiseSeed);
  };
  const made = new Map<CaptureKind, Promise<Gray>>();
  return (kind) => {
    let img = made.get(kind);
    if (!img) made.set(kind, (img = make(kind)));
    return img;
  };
}

/** Camera pixels per module for a symbol of `modules` printed `print.size_mm` wide. */
export function capturePxPerModule(modules: number, print: PrintHint): number {
  return (pixelsPerMm(print.distance_mm) * print.size_mm) / modules;
}
