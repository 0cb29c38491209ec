// The scene of one QR image, in module units: the matrix from the `qrcode` library (Reed–Solomon,
// masks and versions are its job), then our shapes as SVG path data, merged per layer (one path for
// all data modules, not one element per module), the gradients laid over their boxes, the logo's
// place and the frame. The SVG, PNG and PDF writers draw this same scene.
import QRCode from 'qrcode';
import { ApiError } from '../errors.js';
import type { Logo } from './logo.js';
import { parseColor, resolvePaint, type Box, type Paint } from './paint.js';
import type { PaintOptions, StyleConfig } from './style.js';
import { textPath } from './text.js';

export interface Layer {
  /** SVG path data in scene units. */
  d: string;
  paint: Paint;
}

interface LogoPlacement extends Box {
  logo: Logo;
}

export interface Scene {
  /** Scene size in module units. */
  width: number;
  height: number;
  layers: Layer[];
  /** Drawn after the symbol's layers, before the frame's text. */
  logo?: LogoPlacement;
  /** Layers drawn above the logo (the frame's text). */
  overlays: Layer[];
  /** Modules per side, and where the symbol sits (module units), for measurements. */
  modules: number;
  symbol: Box;
  quietZone: number;
  /** The background's paint (absent: transparent), and every paint of the modules, for contrast. */
  background?: Paint;
  foreground: Paint[];
  /** Dark modules, row-major, and those the logo covers. */
  dark: Uint8Array;
  hidden: Uint8Array;
}

const DEFAULT_WIDTH = 300;
const DEFAULT_QUIET_ZONE = 4;
/** qr-code-styling's default `imageSize`. */
const DEFAULT_IMAGE_SIZE = 0.4;
export const DEFAULT_ERROR_CORRECTION = 'Q';
const FRAME_BORDER = 1;
const FRAME_BAND = 5;

/** Numbers in path data: at most 3 decimals, no trailing zeros, no leading zero. */
export function num(n: number): string {
  const s = String(Math.round(n * 1000) / 1000);
  // "0.x" and "-0.x" lose the zero; compared by character codes (a regular expression here was a fifth
  // of building a scene, which every render and every verdict does).
  if (s.charCodeAt(0) === 48 && s.charCodeAt(1) === 46) return s.slice(1);
  if (s.charCodeAt(0) === 45 && s.charCodeAt(1) === 48 && s.charCodeAt(2) === 46) return '-' + s.slice(2);
  return s;
}

/** Path data writer: joins numbers the way SVG allows, so paths stay compact. */
class PathData {
  private parts: string[] = [];
  cmd(c: string, ...args: number[]): this {
    let s = c;
    args.forEach((a, i) => {
      const t = num(a);
      s += i > 0 && !t.startsWith('-') ? ' ' + t : t;
    });
    this.parts.push(s);
    return this;
  }
  toString(): string {
    return this.parts.join('');
  }
  get empty(): boolean {
    return this.parts.length === 0;
  }
}

/** A rectangle with a radius per corner (TL, TR, BR, BL), clockwise; reversed for holes. */
function roundedRect(p: PathData, x: number, y: number, w: number, h: number, r: number[], reverse = false): void {
  const [tl, tr, br, bl] = r;
  if (!reverse) {
    p.cmd('M', x + tl, y);
    if (w - tl - tr > 0) p.cmd('h', w - tl - tr);
    if (tr) p.cmd('a', tr, tr, 0, 0, 1, tr, tr);
    if (h - tr - br > 0) p.cmd('v', h - tr - br);
    if (br) p.cmd('a', br, br, 0, 0, 1, -br, br);
    if (w - br - bl > 0) p.cmd('h', -(w - br - bl));
    if (bl) p.cmd('a', bl, bl, 0, 0, 1, -bl, -bl);
    if (h - bl - tl > 0) p.cmd('v', -(h - bl - tl));
    if (tl) p.cmd('a', tl, tl, 0, 0, 1, tl, -tl);
  } else {
    p.cmd('M', x, y + tl);
    if (h - tl - bl > 0) p.cmd('v', h - tl - bl);
    if (bl) p.cmd('a', bl, bl, 0, 0, 0, bl, bl);
    if (w - bl - br > 0) p.cmd('h', w - bl - br);
    if (br) p.cmd('a', br, br, 0, 0, 0, br, -br);
    if (h - br - tr > 0) p.cmd('v', -(h - br - tr));
    if (tr) p.cmd('a', tr, tr, 0, 0, 0, -tr, -tr);
    if (w - tr - tl > 0) p.cmd('h', -(w - tr - tl));
    if (tl) p.cmd('a', tl, tl, 0, 0, 0, -tl, tl);
  }
  p.cmd('z');
}

function circle(p: PathData, cx: number, cy: number, r: number, reverse = false): void {
  const sweep = reverse ? 0 : 1;
  p.cmd('M', cx - r, cy)
    .cmd('a', r, r, 0, 1, sweep, 2 * r, 0)
    .cmd('a', r, r, 0, 1, sweep, -2 * r, 0)
    .cmd('z');
}

/** Whether module (row, col) is inside one of the three finder patterns. */
function inFinder(n: number, row: number, col: number): boolean {
  return (row < 7 && col < 7) || (row < 7 && col >= n - 7) || (row >= n - 7 && col < 7);
}

function dotsPath(
  type: NonNullable<NonNullable<StyleConfig['dotsOptions']>['type']>,
  n: number,
  drawn: (r: number, c: number) => boolean,
  ox: number,
  oy: number,
): string {
  const p = new PathData();
  for (let row = 0; row < n; row++) {
    let runStart = -1;
    const flush = (end: number) => {
      if (runStart >= 0)
        p.cmd('M', ox + runStart, oy + row)
          .cmd('h', end - runStart)
          .cmd('v', 1)
          .cmd('h', runStart - end)
          .cmd('z');
      runStart = -1;
    };
    for (let col = 0; col < n; col++) {
      if (!drawn(row, col)) {
        flush(col);
        continue;
      }
      const x = ox + col;
      const y = oy + row;
      if (type === 'dots') {
        circle(p, x + 0.5, y + 0.5, 0.5);
        continue;
      }
      let radii = [0, 0, 0, 0];
      if (type !== 'square') {
        const l = drawn(row, col - 1);
        const r = drawn(row, col + 1);
        const t = drawn(row - 1, col);
        const b = drawn(row + 1, col);
        const free = [!l && !t, !r && !t, !r && !b, !l && !b];
        if (type === 'rounded') radii = free.map((f) => (f ? 0.5 : 0));
        else if (type === 'classy') radii = [free[0] ? 0.5 : 0, 0, free[2] ? 0.5 : 0, 0];
        else if (type === 'classy-rounded') radii = [free[0] ? 1 : 0, 0, free[2] ? 1 : 0, 0];
        else {
          // extra-rounded: an L of two neighbours rounds its outer corner by a whole module.
          const count = [l, r, t, b].filter(Boolean).length;
          const straight = (l && r) || (t && b);
          radii = free.map((f) => (f ? (count === 2 && !straight ? 1 : 0.5) : 0));
        }
      }
      if (radii.every((v) => v === 0)) {
        if (runStart < 0) runStart = col;
        continue;
      }
      flush(col);
      roundedRect(p, x, y, 1, 1, radii);
    }
    flush(n);
  }
  return p.toString();
}

function cornerSquarePath(type: string, x: number, y: number): string {
  const p = new PathData();
  if (type === 'dot') {
    circle(p, x + 3.5, y + 3.5, 3.5);
    circle(p, x + 3.5, y + 3.5, 2.5, true);
  } else {
    const r = type === 'extra-rounded' ? 2.5 : 0;
    const ri = type === 'extra-rounded' ? 1.5 : 0;
    roundedRect(p, x, y, 7, 7, [r, r, r, r]);
    roundedRect(p, x + 1, y + 1, 5, 5, [ri, ri, ri, ri], true);
  }
  return p.toString();
}

function cornerDotPath(type: string, x: number, y: number): string {
  const p = new PathData();
  if (type === 'dot') circle(p, x + 1.5, y + 1.5, 1.5);
  else roundedRect(p, x, y, 3, 3, [0, 0, 0, 0]);
  return p.toString();
}

/** Share of the codewords each error-correction level restores (qr-code-styling's errorCorrectionPercents). */
export const EC_CAPACITY = { L: 0.07, M: 0.15, Q: 0.25, H: 0.3 } as const;

export interface LogoBox {
  /** The box, in modules (qr-code-styling's width and height in pixels over its dot size). */
  width: number;
  height: number;
  /** Modules hidden across and down: odd, centred. */
  hideX: number;
  hideY: number;
}

/**
 * The logo's box exactly as qr-code-styling 1.9 computes it (src/tools/calculateImageSize.ts, MIT,
 * and QRSVG.drawQR): at most `imageSize` × the level's capacity of the modules hidden, an odd number
 * of modules across and down, the logo's aspect kept, at most `modules - 14` across. Its pixel
 * arithmetic is kept (the height rounded to a pixel at `dotSize`) so the box matches to the pixel.
 */
export function logoBox(o: {
  modules: number;
  dotSize: number;
  imageSize: number;
  capacity: number;
  logoWidth: number;
  logoHeight: number;
}): LogoBox {
  const maxHidden = Math.floor(o.imageSize * o.capacity * o.modules * o.modules);
  const maxAxis = o.modules - 14;
  const none = { width: 0, height: 0, hideX: 0, hideY: 0 };
  if (o.logoHeight <= 0 || o.logoWidth <= 0 || maxHidden <= 0 || o.dotSize <= 0) return none;
  const k = o.logoHeight / o.logoWidth;
  let hideX = Math.max(1, Math.floor(Math.sqrt(maxHidden / k)));
  if (maxAxis && maxAxis < hideX) hideX = maxAxis;
  if (hideX % 2 === 0) hideX--;
  let width = hideX * o.dotSize;
  let hideY = 1 + 2 * Math.ceil((hideX * k - 1) / 2);
  let height = Math.round(width * k);
  if (hideY * hideX > maxHidden || (maxAxis && maxAxis < hideY)) {
    if (maxAxis && maxAxis < hideY) {
      // (qr-code-styling decrements hideX here when hideY is even; hideX is computed again below.)
      hideY = maxAxis;
    } else {
      hideY -= 2;
    }
    height = hideY * o.dotSize;
    hideX = 1 + 2 * Math.ceil((hideY / k - 1) / 2);
    width = Math.round(height / k);
  }
  return { width: width / o.dotSize, height: height / o.dotSize, hideX, hideY };
}

/** Bytes of byte-mode text a version 40 symbol holds per error-correction level (ISO/IEC 18004, table 7). */
const BYTE_CAPACITY = { L: 2953, M: 2331, Q: 1663, H: 1273 } as const;

export interface SceneInput {
  text: string;
  config: StyleConfig;
  /** Quiet zone in modules; overrides the config's margin. */
  margin?: number;
  logo?: Logo;
}

/** The symbol's matrix from the QR library: size and dark modules. */
export function qrMatrix(text: string, level: string): { n: number; dark: Uint8Array } {
  let qr: QRCode.QRCode;
  try {
    qr = QRCode.create(text, { errorCorrectionLevel: level as QRCode.QRCodeErrorCorrectionLevel });
  } catch (err) {
    const key = level.toUpperCase() as keyof typeof BYTE_CAPACITY;
    // The library throws only for a text too long for version 40 (or an empty text, which no caller draws).
    if (text !== '' && key in BYTE_CAPACITY)
      throw ApiError.payloadTooLong(key, BYTE_CAPACITY[key], Buffer.byteLength(text));
    throw err;
  }
  return { n: qr.modules.size, dark: Uint8Array.from(qr.modules.data) };
}

export function buildScene(input: SceneInput): Scene {
  const c = input.config;
  const { n, dark } = qrMatrix(input.text, c.qrOptions?.errorCorrectionLevel ?? DEFAULT_ERROR_CORRECTION);
  // Design size in pixels and the module size there, as qr-code-styling lays it out.
  const W = c.width ?? DEFAULT_WIDTH;
  const H = c.height ?? W;
  const side = Math.min(W, H);
  let px: number;
  if (input.margin !== undefined) px = side / (n + 2 * input.margin);
  else if (c.margin !== undefined) px = (side - 2 * c.margin) / n;
  else px = side / (n + 2 * DEFAULT_QUIET_ZONE);
  if (!(px > 0)) px = side / n; // a margin that eats the symbol: none left (the check reports it)
  const cw = W / px;
  const ch = H / px;
  const frame = c.frame?.style && c.frame.style !== 'none' ? c.frame : undefined;
  const border = frame ? FRAME_BORDER : 0;
  const band = frame && (frame.text || frame.style === 'banner') ? (frame.text ? FRAME_BAND : 2) : 0;
  const width = cw + 2 * border;
  const height = ch + 2 * border + band;
  const sx = border + (cw - n) / 2;
  const sy = border + (ch - n) / 2;
  const symbol: Box = { x: sx, y: sy, w: n, h: n };
  const all: Box = { x: 0, y: 0, w: width, h: height };

  // The logo's box as qr-code-styling computes it (logoBox); the modules under it are hidden.
  const hidden = new Uint8Array(n * n);
  let logo: LogoPlacement | undefined;
  if (input.logo) {
    const level = (c.qrOptions?.errorCorrectionLevel ?? DEFAULT_ERROR_CORRECTION) as keyof typeof EC_CAPACITY;
    const box = logoBox({
      modules: n,
      dotSize: Math.floor(px) >= 1 ? Math.floor(px) : px,
      imageSize: c.imageOptions?.imageSize ?? DEFAULT_IMAGE_SIZE,
      capacity: EC_CAPACITY[level],
      logoWidth: input.logo.width,
      logoHeight: input.logo.height,
    });
    // imageOptions.margin insets the drawing inside the box, as there.
    const m = (c.imageOptions?.margin ?? 0) / (Math.floor(px) >= 1 ? Math.floor(px) : px);
    const w = box.width - 2 * m;
    const h = box.height - 2 * m;
    if (w > 0 && h > 0) {
      logo = { x: sx + (n - box.width) / 2 + m, y: sy + (n - box.height) / 2 + m, w, h, logo: input.logo };
      for (let r = (n - box.hideY) / 2; r < (n + box.hideY) / 2; r++) {
        for (let col = (n - box.hideX) / 2; col < (n + box.hideX) / 2; col++) hidden[r * n + col] = 1;
      }
    }
  }
  const hide = c.imageOptions?.hideBackgroundDots ?? true;
  const drawn = (r: number, col: number) =>
    r >= 0 &&
    col >= 0 &&
    r < n &&
    col < n &&
    dark[r * n + col] === 1 &&
    !inFinder(n, r, col) &&
    !(hide && hidden[r * n + col]);

  const layers: Layer[] = [];
  const foreground: Paint[] = [];
  const bg = c.backgroundOptions;
  let background: Paint | undefined;
  if (!(bg?.color === 'transparent' && !bg.gradient)) {
    background = resolvePaint(bg, '#ffffff', all);
    layers.push({
      d: new PathData().cmd('M', 0, 0).cmd('h', width).cmd('v', height).cmd('h', -width).cmd('z').toString(),
      paint: background,
    });
  }
  const frameColor = frame?.color ?? '#000000';
  if (frame) {
    const p = new PathData();
    roundedRect(p, 0, 0, width, height, [0, 0, 0, 0]);
    if (frame.style === 'banner') roundedRect(p, border, border, cw, ch, [0, 0, 0, 0], true);
    else roundedRect(p, border, border, cw, height - 2 * border, [0, 0, 0, 0], true);
    layers.push({ d: p.toString(), paint: { kind: 'solid', color: parseColor(frameColor) } });
  }
  const dotsD = dotsPath(c.dotsOptions?.type ?? 'square', n, drawn, sx, sy);
  const dotsPaint = resolvePaint(c.dotsOptions, '#000000', symbol);
  foreground.push(dotsPaint);
  if (dotsD) layers.push({ d: dotsD, paint: dotsPaint });
  // Finder patterns take the dots' paint unless they have their own (as in qr-code-styling); their
  // own gradients span each pattern, the dots' gradient spans the symbol.
  const own = (o: PaintOptions | undefined) => Boolean(o?.color || o?.gradient);
  const sq = c.cornersSquareOptions;
  const dt = c.cornersDotOptions;
  for (const [fr, fc] of [
    [0, 0],
    [0, n - 7],
    [n - 7, 0],
  ]) {
    const box: Box = { x: sx + fc, y: sy + fr, w: 7, h: 7 };
    const dotBox: Box = { x: box.x + 2, y: box.y + 2, w: 3, h: 3 };
    const [sqOpts, sqBox] = own(sq) ? [sq, box] : [c.dotsOptions, symbol];
    const [dtOpts, dtBox] = own(dt) ? [dt, dotBox] : [sqOpts, sqBox];
    const sqPaint = resolvePaint(sqOpts, '#000000', sqBox);
    const dtPaint = resolvePaint(dtOpts, '#000000', dtBox);
    foreground.push(sqPaint, dtPaint);
    layers.push({ d: cornerSquarePath(sq?.type ?? 'square', box.x, box.y), paint: sqPaint });
    layers.push({ d: cornerDotPath(dt?.type ?? 'square', dotBox.x, dotBox.y), paint: dtPaint });
  }
  const overlays: Layer[] = [];
  if (frame?.text) {
    const textColor = frame.textColor ?? (frame.style === 'banner' ? '#ffffff' : frameColor);
    const bandTop = border + ch;
    const d = textPath(frame.text, { x: border + 0.5, y: bandTop + 0.5, w: cw - 1, h: band - 1 });
    if (d) overlays.push({ d, paint: { kind: 'solid', color: parseColor(textColor) } });
  }
  return {
    width,
    height,
    layers,
    logo,
    overlays,
    modules: n,
    symbol,
    quietZone: Math.min(sx - border, sy - border),
    background,
    foreground,
    dark,
    hidden,
  };
}
