// Scannability of a style, measured rather than guessed: the symbol is rendered and its raster
// decoded by real decoders (jsqr, Apache-2.0, then ZXing's JavaScript port, MIT; the tests decode
// with ZXing-C++ compiled to WebAssembly instead), and the
// contrast (WCAG 2 formula, worst gradient stop), quiet zone, logo coverage against the error
// correction's capacity and inverted colours are measured. Every finding has a stable reason code.
import jsqrModule from 'jsqr';
import { BinaryBitmap, DecodeHintType, HybridBinarizer, QRCodeReader, RGBLuminanceSource } from '@zxing/library';
import { DEFAULT_ERROR_CORRECTION, type Scene } from './geometry.js';
import { paintColors, type Rgba } from './paint.js';
import { sceneToCanvas } from './raster.js';
import { sceneOf } from './index.js';
import type { ErrorCorrectionLevel, StyleConfig } from './style.js';

export type Verdict = 'pass' | 'warn' | 'fail';

export interface Scannability {
  verdict: Verdict;
  decoded: boolean;
  contrast_ratio: number;
  quiet_zone_modules: number;
  logo_coverage: number;
  error_correction: ErrorCorrectionLevel;
  reasons: string[];
}

// jsqr is CommonJS whose module.exports is the function itself; under NodeNext its default import
// is typed as the module namespace.
const jsQR = jsqrModule as unknown as typeof jsqrModule.default;

// Stryker disable all: the adapter to ZXing is left out of mutation testing. A changed luminance
// weight or index weakens the second look without stopping it on the rasters a test can make; the
// tests check what the decoders read (test/unit/scannability.test.ts), not how.
async function zxingDecode(scene: Scene): Promise<string | undefined> {
  const canvas = await sceneToCanvas(scene, Math.min(1600, Math.ceil(scene.width * 4)), '#ffffff');
  const { width, height } = canvas;
  const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
  const luminance = new Uint8ClampedArray(width * height);
  for (let i = 0; i < width * height; i++) {
    luminance[i] = (data[i * 4] * 299 + data[i * 4 + 1] * 587 + data[i * 4 + 2] * 114) / 1000;
  }
  const hints = new Map([[DecodeHintType.TRY_HARDER, true]]);
  const source = new RGBLuminanceSource(luminance, width, height);
  for (const reading of [source, source.invert()]) {
    try {
      return new QRCodeReader().decode(new BinaryBitmap(new HybridBinarizer(reading)), hints).getText();
    } catch {
      // not found in this reading
    }
  }
  return undefined;
}
// Stryker restore all

/** Share of the codewords each level can restore. */
export const EC_CAPACITY: Record<ErrorCorrectionLevel, number> = { L: 0.07, M: 0.15, Q: 0.25, H: 0.3 };

/** Thresholds, in one place (docs/rendering.md lists them). */
export const RULES = {
  contrastFail: 3,
  contrastWarn: 4.5,
  quietZoneFail: 1,
  quietZoneWarn: 4,
  /** Logo coverage as a share of the level's capacity. */
  logoWarn: 0.5,
  logoFail: 1,
};

/** Every reason code, failing ones first. */
export const REASONS = {
  not_decodable: 'fail: the rendered symbol did not decode',
  decoded_text_mismatch: 'fail: the symbol decoded to another text',
  low_contrast: `fail: contrast below ${RULES.contrastFail}:1`,
  quiet_zone_missing: `fail: quiet zone under ${RULES.quietZoneFail} module`,
  logo_exceeds_error_correction: 'fail: the logo hides more modules than the error correction restores',
  contrast_below_recommended: `warn: contrast below ${RULES.contrastWarn}:1`,
  quiet_zone_narrow: `warn: quiet zone under ${RULES.quietZoneWarn} modules`,
  logo_near_error_correction_limit: `warn: the logo hides over ${RULES.logoWarn * 100}% of what the error correction restores`,
  inverted_colors: 'warn: light modules on a dark background (not every scanner reads inverted codes)',
  transparent_background: 'warn: transparent background, judged on white; the surface it is printed on decides',
} as const;
export type Reason = keyof typeof REASONS;

/** The text a style is checked with: as long as a typical public_url. */
export const SAMPLE_TEXT = 'https://qr.example.com/organization/code-0001';

/** Relative luminance (WCAG 2). */
export function luminance(c: Rgba): number {
  const ch = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b);
}

export function contrastRatio(a: Rgba, b: Rgba): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** `top` laid over `under` (alpha compositing). */
function over(top: Rgba, under: Rgba): Rgba {
  const a = top.a;
  return {
    r: top.r * a + under.r * (1 - a),
    g: top.g * a + under.g * (1 - a),
    b: top.b * a + under.b * (1 - a),
    a: 1,
  };
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, a: 1 };

/** Pixels per module of the rasters that are decoded, in the order tried. */
const CHECK_MODULE_PX = [4, 3, 5, 2.5];

export async function measure(scene: Scene, text: string, level: ErrorCorrectionLevel): Promise<Scannability> {
  const reasons: Reason[] = [];
  // Colours: the background's (transparent: white, as most print), the foreground's every stop.
  const bgLayer = scene.background;
  const transparent = !bgLayer || paintColors(bgLayer).every((c) => c.a === 0);
  const bgs = transparent ? [WHITE] : paintColors(bgLayer!).map((c) => over(c, WHITE));
  const fgs = scene.foreground.flatMap(paintColors);
  let worst = Infinity;
  let inverted = 0;
  for (const f of fgs) {
    for (const b of bgs) {
      const fc = over(f, b);
      worst = Math.min(worst, contrastRatio(fc, b));
      if (luminance(fc) > luminance(b)) inverted++;
    }
  }
  // Stryker disable next-line ConditionalExpression: every scene has a foreground paint, so worst is finite here
  if (!Number.isFinite(worst)) worst = 1;
  if (worst < RULES.contrastFail) reasons.push('low_contrast');
  else if (worst < RULES.contrastWarn) reasons.push('contrast_below_recommended');
  if (scene.quietZone < RULES.quietZoneFail) reasons.push('quiet_zone_missing');
  else if (scene.quietZone < RULES.quietZoneWarn) reasons.push('quiet_zone_narrow');
  const n = scene.modules;
  const coverage = scene.hidden.reduce((s, v) => s + v, 0) / (n * n);
  const share = coverage / EC_CAPACITY[level];
  if (share > RULES.logoFail) reasons.push('logo_exceeds_error_correction');
  else if (share > RULES.logoWarn) reasons.push('logo_near_error_correction_limit');
  if (inverted > (fgs.length * bgs.length) / 2) reasons.push('inverted_colors');
  if (transparent) reasons.push('transparent_background');

  // The raster, laid on white, decoded; a few module sizes are tried, as a phone sees the symbol at
  // many distances (jsqr's sampling misses some shapes at one size and reads them at the next).
  let found: string | undefined;
  for (const px of CHECK_MODULE_PX) {
    const canvas = await sceneToCanvas(scene, Math.min(1600, Math.ceil(scene.width * px)), '#ffffff');
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    // Stryker disable next-line ObjectLiteral,StringLiteral: 'attemptBoth' is jsqr's default, which it keeps for a missing or empty value
    found = jsQR(data, canvas.width, canvas.height, { inversionAttempts: 'attemptBoth' })?.data;
    if (found === text) break;
  }
  // jsqr misses some styled symbols that phones read (circular finder patterns, mostly); ZXing's
  // reader gets a second look before a symbol is called undecodable.
  if (found !== text) found = (await zxingDecode(scene)) ?? found;
  if (found === undefined) reasons.push('not_decodable');
  else if (found !== text) reasons.push('decoded_text_mismatch');

  const order = Object.keys(REASONS) as Reason[];
  reasons.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const verdict: Verdict = reasons.some((r) => REASONS[r].startsWith('fail'))
    ? 'fail'
    : reasons.length
      ? 'warn'
      : 'pass';
  return {
    verdict,
    decoded: found === text,
    contrast_ratio: Math.floor(worst * 100) / 100,
    quiet_zone_modules: Math.round(scene.quietZone * 100) / 100,
    logo_coverage: Math.round(coverage * 1000) / 1000,
    error_correction: level,
    reasons,
  };
}

/** The scannability of a style config (brand-kit references resolved), checked with SAMPLE_TEXT. */
export async function checkScannability(config: StyleConfig, text = SAMPLE_TEXT): Promise<Scannability> {
  const level = config.qrOptions?.errorCorrectionLevel ?? (DEFAULT_ERROR_CORRECTION as ErrorCorrectionLevel);
  return measure(sceneOf({ text, config }), text, level);
}
