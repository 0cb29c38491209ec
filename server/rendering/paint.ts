// Colours and gradients, resolved once into the geometry of the layer they fill, so the SVG, PNG
// and PDF writers draw exactly the same thing.
import type { Gradient, PaintOptions } from './style.js';

export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0 to 1. */
  a: number;
}

interface Stop {
  offset: number;
  color: Rgba;
}

export type Paint =
  | { kind: 'solid'; color: Rgba }
  | { kind: 'linear'; x1: number; y1: number; x2: number; y2: number; stops: Stop[] }
  | { kind: 'radial'; cx: number; cy: number; r: number; stops: Stop[] };

/** A box in the scene's units (modules). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, a: 0 };

/** #rgb, #rrggbb or #rrggbbaa (brand references are resolved before this). */
export function parseColor(value: string): Rgba {
  let hex = value.replace(/^#/, '');
  if (value === 'transparent') return TRANSPARENT;
  if (!/^([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(hex)) throw new Error(`not a colour: ${value}`);
  if (hex.length === 3) hex = [...hex].map((c) => c + c).join('');
  const n = (i: number) => parseInt(hex.slice(i, i + 2), 16);
  return { r: n(0), g: n(2), b: n(4), a: hex.length === 8 ? Math.round((n(6) / 255) * 1000) / 1000 : 1 };
}

/** #rrggbb of a colour (alpha is carried apart). */
export function hex6(c: Rgba): string {
  return '#' + [c.r, c.g, c.b].map((v) => v.toString(16).padStart(2, '0')).join('');
}

export function cssColor(c: Rgba): string {
  return c.a === 1 ? hex6(c) : `rgba(${c.r},${c.g},${c.b},${c.a})`;
}

/**
 * The paint of a layer: its gradient laid over the layer's box (a linear gradient through the centre
 * at `rotation` radians, spanning the box; a radial one from the centre to the corners), else its colour.
 */
export function resolvePaint(opts: PaintOptions | undefined, fallback: string, box: Box): Paint {
  const g: Gradient | undefined = opts?.gradient;
  if (!g) return { kind: 'solid', color: parseColor(opts?.color ?? fallback) };
  const stops = [...g.colorStops]
    .sort((a, b) => a.offset - b.offset)
    .map((s) => ({ offset: s.offset, color: parseColor(s.color) }));
  const cx = box.x + box.w / 2;
  const cy = box.y + box.h / 2;
  if (g.type === 'radial') return { kind: 'radial', cx, cy, r: Math.hypot(box.w, box.h) / 2, stops };
  const angle = g.rotation ?? 0;
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  const half = (Math.abs(box.w * dx) + Math.abs(box.h * dy)) / 2;
  return { kind: 'linear', x1: cx - dx * half, y1: cy - dy * half, x2: cx + dx * half, y2: cy + dy * half, stops };
}

/** Every colour a paint may show (a gradient's stops). */
export function paintColors(p: Paint): Rgba[] {
  return p.kind === 'solid' ? [p.color] : p.stops.map((s) => s.color);
}
