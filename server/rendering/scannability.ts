// Scannability of a style, measured rather than guessed: the symbol is rendered and read by three
// decoder families of separate lineages (./decoders.ts: ZXing-C++, jsQR and ZBar), first as an ideal
// full-size image, then as captures like a phone's at the smallest print size the style declares
// (./captures.ts); contrast (WCAG 2 formula, worst gradient stop), quiet zone, logo coverage against
// the error correction's capacity and inverted colours are measured beside. Every finding has a
// stable reason code. The quick check (contrast, quiet zone, logo, the ideal image read by the two
// in-thread families) is what a live preview asks while the user types; the full verdict adds ZBar,
// the captures and the smallest print size.
import {
  captures,
  capturePxPerModule,
  CAPTURES,
  photograph,
  DEFAULT_PRINT,
  type CaptureKind,
  type PrintHint,
} from './captures.js';
import {
  DECODER_FAMILIES,
  decodeWith,
  familiesReading,
  type DecoderFamily,
  type Gray,
  type Reading,
} from './decoders.js';
import { DEFAULT_ERROR_CORRECTION, EC_CAPACITY, type Scene } from './geometry.js';
import { paintColors, type Rgba } from './paint.js';
import { sceneToCanvas } from './raster.js';
import { sceneOf } from './index.js';
import type { ErrorCorrectionLevel, StyleConfig } from './style.js';

type Verdict = 'pass' | 'warn' | 'fail';

interface Miss {
  family: DecoderFamily;
  /** `ideal`: the full-size image; else the capture at the declared print size. */
  capture: 'ideal' | CaptureKind;
}

export interface Scannability {
  verdict: Verdict;
  /** `quick`: contrast, quiet zone, logo and the ideal image read in-thread; `full`: the whole verdict. */
  check: 'quick' | 'full';
  decoded: boolean;
  contrast_ratio: number;
  quiet_zone_modules: number;
  /** Share of the symbol's modules the logo hides. */
  logo_coverage: number;
  /** Share of the symbol's area the drawn logo takes. */
  logo_area: number;
  error_correction: ErrorCorrectionLevel;
  reasons: string[];
  /** The families asked. */
  decoders: DecoderFamily[];
  /** Full check: which family missed which image. */
  misses?: Miss[];
  /** The print hint the captures were made for. */
  print: PrintHint;
  /**
   * Full check: the declared print size over the smallest that passes (2: it still passes at half
   * the size; under 1: it must be printed larger); null when no size up to the largest tried passes.
   */
  robustness_margin?: number | null;
  /** Full check: the smallest print size (symbol side, mm) at which every family reads every capture. */
  smallest_print_size_mm?: number | null;
}

/** Thresholds, in one place (docs/rendering.md lists them). */
const RULES = {
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
  decoder_missed_symbol: 'warn: a decoder family did not read the full-size image (see misses)',
  capture_not_decoded:
    'warn: a decoder family did not read a phone-like capture at the declared print size (see misses)',
  inverted_colors: 'warn: light modules on a dark background (not every scanner reads inverted codes)',
  transparent_background: 'warn: transparent background, judged on white; the surface it is printed on decides',
} as const;
type Reason = keyof typeof REASONS;

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

/** Pixels per module of the full-size rasters that are decoded, in the order tried. */
const CHECK_MODULE_PX = [4, 3, 5, 2.5];
/**
 * Capture sizes tried for the smallest print size: the declared size divided by these, searched by
 * halves (two steps each way: the middle one, then the one beside it on the side the answer lies).
 */
const SHRINK = [1.25, 1.5, 2];
const GROW = [0.8, 2 / 3, 0.5];
/** Past this many camera pixels a module, a capture is as good as it gets (and costs more). */
const MAX_CAPTURE_PX = 10;

async function idealImage(scene: Scene, px: number): Promise<Gray> {
  const canvas = await sceneToCanvas(scene, Math.min(1600, Math.ceil(scene.width * px)), '#ffffff');
  const { width, height } = canvas;
  const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
  const gray = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < gray.length; i++, j += 4)
    gray[i] = (data[j] * 299 + data[j + 1] * 587 + data[j + 2] * 114) / 1000;
  return { data: gray, width, height };
}

/** Which families read the ideal image at some module size, and any other text read meanwhile. */
async function readIdeal(
  scene: Scene,
  text: string,
  families: readonly DecoderFamily[],
  inverted: boolean,
): Promise<{ read: Set<DecoderFamily>; other?: string }> {
  const read = new Set<DecoderFamily>();
  let other: string | undefined;
  for (const px of CHECK_MODULE_PX) {
    const img = await idealImage(scene, px);
    const left = families.filter((f) => !read.has(f));
    const texts = await Promise.all(left.map((f) => decodeWith(f, img, inverted)));
    left.forEach((f, i) => {
      if (texts[i].includes(text)) read.add(f);
      else if (texts[i].length) other ??= texts[i][0];
    });
    // The quick check stops at the first reader; the full one asks every family.
    if (read.size === families.length || (families.length < DECODER_FAMILIES.length && read.size > 0)) break;
  }
  return { read, other };
}

/**
 * The captures at a print size, made from one photograph at the camera's resolution for that size,
 * read by every family (see familiesReading: `stopAtFirst` for a step of the ladder, `needed` for one
 * walked ahead to).
 */
function readAt(
  scene: Scene,
  text: string,
  print: PrintHint,
  opts: { inverted: boolean; stopAtFirst?: boolean; needed?: Promise<boolean> },
): Reading {
  let made: ((kind: CaptureKind) => Promise<Gray>) | undefined;
  const image = async (i: number) => {
    made ??= captures(await photograph(scene, Math.min(MAX_CAPTURE_PX, capturePxPerModule(scene.modules, print))));
    return made(CAPTURES[i]);
  };
  return familiesReading(CAPTURES.length, image, text, opts);
}

/** Whether every family read every image of a reading. */
const everyFamily = (read: Set<DecoderFamily>[]) => read.every((set) => set.size === DECODER_FAMILIES.length);

/** Which family missed which capture. */
function captureMisses(read: Set<DecoderFamily>[]): Miss[] {
  const misses: Miss[] = [];
  read.forEach((set, i) => {
    for (const family of DECODER_FAMILIES) if (!set.has(family)) misses.push({ family, capture: CAPTURES[i] });
  });
  return misses;
}

const mm = (x: number) => Math.round(x * 10) / 10;

/**
 * The smallest print size on the ladder at which every family reads every capture, or null. The
 * ladder's direction hangs on the declared size passing, and each step on the one before it; ZXing-C++
 * answers in this thread as the captures are made, the decoder processes later. So this thread walks
 * ahead on what ZXing-C++ has read: while the processes still read a size, it makes and reads the next
 * size that size passing would lead to, its images going to the processes as they are made, so that
 * no process waits for another's last answer (when the size before fails after all, the step stops at
 * its next image and what it sent was read for nothing). Every step is judged on the same images by the same
 * families as one after another would be: only the order of the work changes, not the answer.
 */
async function smallestPrintSize(
  scene: Scene,
  text: string,
  print: PrintHint,
  declared: Reading,
  inverted: boolean,
): Promise<number | null> {
  const at = (f: number, needed?: Promise<boolean>) => {
    // Stryker disable next-line BooleanLiteral,ObjectLiteral: stopping at the first miss saves time only; the ladder runs only when ZBar read the ideal image, which it does not for an inverted style
    const reading = readAt(
      scene,
      text,
      { ...print, size_mm: print.size_mm / f },
      { inverted, stopAtFirst: true, needed },
    );
    // Stopped early, the last image's families are incomplete.
    const passes = reading.families.then((read) => read.length === CAPTURES.length && everyFamily(read));
    passes.catch(() => undefined); // a step walked ahead to may be abandoned
    return { zxing: reading.zxing, passes };
  };
  /**
   * Two steps, when `needed`: `first`, then `then` when it passes or `otherwise` when it does not;
   * the factor of the last step that passed, or `none`. While the processes read `first`, this
   * thread walks ahead to `then`.
   */
  const twoSteps = async <N>(first: number, then: number, otherwise: number, none: N, needed?: Promise<boolean>) => {
    const a = at(first, needed);
    if (await a.zxing) {
      const b = at(then, a.passes);
      if (await a.passes) return (await b.passes) ? then : first;
      await b.zxing; // walked ahead for nothing: it stops at its next image
    }
    return (await at(otherwise, needed).passes) ? otherwise : none;
  };
  if (await declared.zxing) {
    // Smaller: 1.5 first; then 2 when it passes, 1.25 when it does not. Walked ahead on the declared
    // size passing.
    const declaredPasses = declared.families.then(everyFamily);
    const [small, mid, smallest] = SHRINK;
    const best = twoSteps(mid, smallest, small, 1, declaredPasses);
    best.catch(() => undefined);
    if (await declaredPasses) return mm(print.size_mm / (await best));
    await best; // walked ahead for nothing: it stops at its next image
  }
  // Larger: 1.5 times first; then 1.25 times when it passes, twice when it does not.
  const [near, mid, far] = GROW;
  const best = await twoSteps(mid, near, far, null);
  return best === null ? null : mm(print.size_mm / best);
}

export interface MeasureOptions {
  /** The full verdict (every family, the captures, the smallest print size); else the quick check. */
  full: boolean;
  print?: Partial<PrintHint>;
}

export async function measure(
  scene: Scene,
  text: string,
  level: ErrorCorrectionLevel,
  options: MeasureOptions,
): Promise<Scannability> {
  const { full } = options;
  const print: PrintHint = { ...DEFAULT_PRINT, ...options.print };
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
  const isInverted = inverted > (fgs.length * bgs.length) / 2;
  if (isInverted) reasons.push('inverted_colors');
  if (transparent) reasons.push('transparent_background');

  // The ideal image: a few module sizes are tried, as a phone sees the symbol at many distances.
  const families: readonly DecoderFamily[] = full ? DECODER_FAMILIES : ['zxing-cpp', 'jsqr'];
  const reading = readIdeal(scene, text, families, isInverted);
  // The captures at the declared print size are needed when the ideal image decodes (and no other
  // rule fails): they are made, read and sent while the families still read the ideal image.
  const declared =
    full && !reasons.some((r) => REASONS[r].startsWith('fail'))
      ? readAt(scene, text, print, { inverted: isInverted, needed: reading.then((i) => i.read.size > 0) })
      : undefined;
  const ideal = await reading;
  const decoded = ideal.read.size > 0;
  if (!decoded) {
    reasons.push(ideal.other === undefined ? 'not_decodable' : 'decoded_text_mismatch');
    await declared?.zxing; // made for nothing: it stops at its next image
  }

  const result: Partial<Scannability> = {};
  if (declared && decoded) {
    const misses: Miss[] = families.filter((f) => !ideal.read.has(f)).map((family) => ({ family, capture: 'ideal' }));
    if (misses.length) reasons.push('decoder_missed_symbol');
    // The ladder needs every family to have read the ideal image; it starts while the declared size's
    // captures are still being read (see smallestPrintSize).
    const [read, smallest] = await Promise.all([
      declared.families,
      ideal.read.size === families.length
        ? smallestPrintSize(scene, text, print, declared, isInverted)
        : Promise.resolve(null),
    ]);
    const captured = captureMisses(read);
    if (captured.length) reasons.push('capture_not_decoded');
    misses.push(...captured);
    result.misses = misses;
    result.smallest_print_size_mm = smallest;
    result.robustness_margin = result.smallest_print_size_mm
      ? Math.round((print.size_mm / result.smallest_print_size_mm) * 100) / 100
      : null;
  }

  const order = Object.keys(REASONS) as Reason[];
  reasons.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const verdict: Verdict = reasons.some((r) => REASONS[r].startsWith('fail'))
    ? 'fail'
    : reasons.length
      ? 'warn'
      : 'pass';
  return {
    verdict,
    check: full ? 'full' : 'quick',
    decoded,
    contrast_ratio: Math.floor(worst * 100) / 100,
    quiet_zone_modules: Math.round(scene.quietZone * 100) / 100,
    logo_coverage: Math.round(coverage * 1000) / 1000,
    logo_area: scene.logo ? Math.round(((scene.logo.w * scene.logo.h) / (n * n)) * 1000) / 1000 : 0,
    error_correction: level,
    reasons,
    decoders: [...families],
    print,
    ...result,
  };
}

/** The scannability of a style config (brand-kit references resolved), checked with SAMPLE_TEXT. */
export async function checkScannability(config: StyleConfig, text = SAMPLE_TEXT, full = true): Promise<Scannability> {
  const level = config.qrOptions?.errorCorrectionLevel ?? (DEFAULT_ERROR_CORRECTION as ErrorCorrectionLevel);
  return measure(sceneOf({ text, config }), text, level, { full, print: config.print });
}
