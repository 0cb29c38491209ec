// The scannability rules, measured on real renders decoded by real decoders: contrast (WCAG 2, the
// worst pair of foreground stop and background), the quiet zone, logo coverage against the error
// correction's capacity, inverted and transparent styles, and the verdict that follows.
import { expect } from 'chai';
import { sceneOf } from '../../server/rendering/index.js';
import type { Rgba } from '../../server/rendering/paint.js';
import {
  checkScannability,
  contrastRatio,
  luminance,
  measure,
  REASONS,
  SAMPLE_TEXT,
} from '../../server/rendering/scannability.js';
import type { ErrorCorrectionLevel, StyleConfig } from '../../server/rendering/style.js';

const TEXT = 'https://qr.example.com/o/c-1';
const rgb = (hex: string): Rgba => ({
  r: parseInt(hex.slice(1, 3), 16),
  g: parseInt(hex.slice(3, 5), 16),
  b: parseInt(hex.slice(5, 7), 16),
  a: 1,
});
const BLACK = rgb('#000000');
const WHITE = rgb('#ffffff');
const LOGO =
  'data:image/svg+xml;base64,' +
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#e53935"/></svg>',
  ).toString('base64');

/** The quick check of a style (the rules; the full verdict has tests of its own), with the quiet zone in modules when given. */
const check = (config: StyleConfig, margin?: number, text = TEXT) =>
  measure(sceneOf({ text, config, margin }), text, config.qrOptions?.errorCorrectionLevel ?? 'Q', { full: false });
const fullCheck = (config: StyleConfig, margin?: number, text = TEXT) =>
  measure(sceneOf({ text, config, margin }), text, config.qrOptions?.errorCorrectionLevel ?? 'Q', { full: true });
const floor2 = (x: number) => Math.floor(x * 100) / 100;
/** The check of a scene whose logo hides `share` of the modules (more than imageSize ever hides). */
const measureWithHidden = (config: StyleConfig, share: number) => {
  const scene = sceneOf({ text: TEXT, config, margin: 4 });
  scene.hidden.fill(0).fill(1, 0, Math.ceil(share * scene.hidden.length));
  return measure(scene, TEXT, config.qrOptions?.errorCorrectionLevel ?? 'Q', { full: false });
};

describe('scannability rules', function () {
  this.timeout(30_000);

  describe('relative luminance and contrast (WCAG 2)', () => {
    it('weighs red, green and blue as the eye does', () => {
      expect(luminance(BLACK)).to.equal(0);
      expect(luminance(WHITE)).to.be.closeTo(1, 1e-12);
      expect(luminance(rgb('#ff0000'))).to.be.closeTo(0.2126, 1e-12);
      expect(luminance(rgb('#00ff00'))).to.be.closeTo(0.7152, 1e-12);
      expect(luminance(rgb('#0000ff'))).to.be.closeTo(0.0722, 1e-12);
    });

    it('is linear in the darkest shades and a 2.4 power curve above them', () => {
      expect(luminance(rgb('#0a0a0a'))).to.be.closeTo(10 / 255 / 12.92, 1e-12);
      expect(luminance(rgb('#0b0b0b'))).to.be.closeTo(((11 / 255 + 0.055) / 1.055) ** 2.4, 1e-12);
      expect(luminance(rgb('#808080'))).to.be.closeTo(0.2158605, 1e-6);
    });

    it('gives 21:1 for black on white whichever colour comes first, 1:1 for a colour on itself', () => {
      expect(contrastRatio(BLACK, WHITE)).to.be.closeTo(21, 1e-9);
      expect(contrastRatio(WHITE, BLACK)).to.be.closeTo(21, 1e-9);
      expect(contrastRatio(rgb('#777777'), WHITE)).to.be.closeTo(4.478, 1e-3);
      expect(contrastRatio(WHITE, rgb('#777777'))).to.be.closeTo(4.478, 1e-3);
      expect(contrastRatio(rgb('#336699'), rgb('#336699'))).to.equal(1);
    });
  });

  it('passes a plain black-on-white style with a 4-module quiet zone and reports what it measured', async () => {
    const r = await fullCheck({}, 4);
    expect(r).to.deep.equal({
      verdict: 'pass',
      check: 'full',
      decoded: true,
      contrast_ratio: 21,
      quiet_zone_modules: 4,
      logo_coverage: 0,
      logo_area: 0,
      error_correction: 'Q',
      reasons: [],
      decoders: ['zxing-cpp', 'jsqr', 'zbar'],
      misses: [],
      print: { size_mm: 20, distance_mm: 200 },
      robustness_margin: r.robustness_margin,
      smallest_print_size_mm: r.smallest_print_size_mm,
    });
    // Every family read every capture at 2 cm, and some smaller size too (the ladder's steps).
    expect(r.smallest_print_size_mm).to.be.a('number').at.most(20);
    expect(r.robustness_margin).to.equal(Math.round((20 / r.smallest_print_size_mm!) * 100) / 100);
  });

  describe('contrast', () => {
    it('fails below 3:1 and reports the ratio rounded down to hundredths', async () => {
      const r = await check({ dotsOptions: { color: '#a0a0a0' } }); // 2.61:1 on white
      expect(r.contrast_ratio).to.equal(floor2(contrastRatio(rgb('#a0a0a0'), WHITE)));
      expect(r.contrast_ratio).to.equal(2.61);
      expect(r.reasons).to.include('low_contrast').and.not.include('contrast_below_recommended');
      expect(r.verdict).to.equal('fail');
    });

    it('warns from 3:1 up to 4.5:1, and passes from there', async () => {
      const warned = await check({ dotsOptions: { color: '#8a8a8a' } }); // 3.45:1
      expect(warned).to.include({ verdict: 'warn', contrast_ratio: 3.45 });
      expect(warned.reasons).to.deep.equal(['contrast_below_recommended']);
      const justUnder = await check({ dotsOptions: { color: '#777777' } }); // 4.47:1
      expect(justUnder.reasons).to.deep.equal(['contrast_below_recommended']);
      const justOver = await check({ dotsOptions: { color: '#757575' } }); // 4.6:1
      expect(justOver).to.include({ verdict: 'pass', contrast_ratio: 4.6 });
      const justOverFail = await check({ dotsOptions: { color: '#949494' } }); // 3.03:1
      expect(justOverFail.reasons).to.deep.equal(['contrast_below_recommended']);
      const justUnderFail = await check({ dotsOptions: { color: '#959595' } }); // 2.99:1
      expect(justUnderFail.reasons).to.include('low_contrast');
    });

    it('judges a gradient by its worst stop, against every stop of a gradient background', async () => {
      const r = await check({
        dotsOptions: {
          gradient: {
            type: 'linear',
            colorStops: [
              { offset: 0, color: '#000000' },
              { offset: 1, color: '#555555' },
            ],
          },
        },
        backgroundOptions: {
          gradient: {
            type: 'linear',
            colorStops: [
              { offset: 0, color: '#ffffff' },
              { offset: 1, color: '#dddddd' },
            ],
          },
        },
      });
      expect(r.contrast_ratio).to.equal(floor2(contrastRatio(rgb('#555555'), rgb('#dddddd'))));
      expect(r.reasons).to.not.include('inverted_colors');
    });

    it('lays a translucent colour over what is under it before measuring', async () => {
      // #20336680 is 0.502 opaque: over white it is (143.1, 152.6, 178.2). A half-transparent black
      // background is judged as the grey it makes on white.
      const half = (c: number) => c * 0.502 + 255 * (1 - 0.502);
      const fg = { r: half(0x20), g: half(0x33), b: half(0x66), a: 1 };
      const r = await check({ dotsOptions: { color: '#20336680' } });
      expect(r.contrast_ratio).to.equal(floor2(contrastRatio(fg, WHITE)));
      const onGrey = await check({ dotsOptions: { color: '#000000' }, backgroundOptions: { color: '#00000080' } });
      const bg = { r: half(0), g: half(0), b: half(0), a: 1 };
      expect(onGrey.contrast_ratio).to.equal(floor2(contrastRatio(BLACK, bg)));
    });
  });

  describe('quiet zone', () => {
    it('fails under one module, warns under four, and reports it to hundredths', async () => {
      const none = await check({}, 0);
      expect(none).to.include({ verdict: 'fail', quiet_zone_modules: 0 });
      expect(none.reasons).to.include('quiet_zone_missing');
      const thin = await check({}, 0.5);
      expect(thin.reasons).to.include('quiet_zone_missing').and.not.include('quiet_zone_narrow');
      expect((await check({}, 1)).reasons).to.deep.equal(['quiet_zone_narrow']);
      const narrow = await check({}, 2.337);
      expect(narrow).to.include({ verdict: 'warn', quiet_zone_modules: 2.34 });
      expect(narrow.reasons).to.deep.equal(['quiet_zone_narrow']);
      expect((await check({}, 3.9)).reasons).to.deep.equal(['quiet_zone_narrow']);
      expect((await check({}, 4)).reasons).to.deep.equal([]);
    });
  });

  describe('logo against the error correction', () => {
    const withLogo = (imageSize: number, level: ErrorCorrectionLevel): StyleConfig => ({
      image: LOGO,
      imageOptions: { imageSize },
      qrOptions: { errorCorrectionLevel: level },
    });

    it('passes a logo hiding under half of what the level restores, and reports its coverage', async () => {
      const r = await check(withLogo(0.3, 'H'), 4); // at most 0.3 x 30% of the modules
      expect(r.reasons).to.deep.equal([]);
      expect(r.logo_coverage).to.be.within(0.05, 0.09);
      expect(r.logo_area).to.be.within(0.05, 0.09);
      expect(Math.round(r.logo_coverage * 1000)).to.equal(r.logo_coverage * 1000); // thousandths
      expect(r.error_correction).to.equal('H');
    });

    it('warns about a logo hiding over half of it', async () => {
      const r = await check(withLogo(0.6, 'H'), 4); // at most 0.6 x 30% of the modules
      expect(r.reasons).to.deep.equal(['logo_near_error_correction_limit']);
      expect(r.verdict).to.equal('warn');
    });

    it('fails a logo hiding more than the level restores', async () => {
      // imageSize never hides more than the capacity; a margin that shrinks the logo does not help.
      const r = await measureWithHidden(withLogo(1, 'L'), 0.08);
      expect(r.reasons).to.include('logo_exceeds_error_correction').and.not.include('logo_near_error_correction_limit');
      expect(r.verdict).to.equal('fail');
    });
  });

  describe('inverted and transparent styles', () => {
    it('warns about light modules on a dark background', async () => {
      const r = await check({ dotsOptions: { color: '#ffffff' }, backgroundOptions: { color: '#000000' } }, 4);
      expect(r).to.deep.include({ verdict: 'warn', decoded: true, contrast_ratio: 21, reasons: ['inverted_colors'] });
    });

    it('does not call a style inverted when only half of its colour pairs are', async () => {
      // One foreground colour against two background stops: lighter than one, darker than the other.
      const r = await check(
        {
          dotsOptions: { color: '#777777' },
          backgroundOptions: {
            gradient: {
              type: 'radial',
              colorStops: [
                { offset: 0, color: '#000000' },
                { offset: 1, color: '#ffffff' },
              ],
            },
          },
        },
        4,
      );
      expect(r.reasons).to.not.include('inverted_colors');
    });

    it('calls a colour on itself neither inverted nor decodable', async () => {
      const r = await check({ dotsOptions: { color: '#336699' }, backgroundOptions: { color: '#336699' } }, 4);
      expect(r).to.deep.include({
        verdict: 'fail',
        decoded: false,
        contrast_ratio: 1,
        reasons: ['not_decodable', 'low_contrast'],
      });
    });

    it('judges a transparent background on white and says so', async () => {
      for (const backgroundOptions of [
        { color: 'transparent' },
        { color: '#ffffff00' },
        {
          gradient: {
            type: 'linear' as const,
            colorStops: [
              { offset: 0, color: '#00000000' },
              { offset: 1, color: '#ff000000' },
            ],
          },
        },
      ]) {
        const r = await check({ backgroundOptions }, 4);
        expect(r, JSON.stringify(backgroundOptions)).to.deep.include({
          verdict: 'warn',
          contrast_ratio: 21,
          reasons: ['transparent_background'],
        });
      }
    });

    it('does not call a background transparent when one of its stops is opaque', async () => {
      const r = await check(
        {
          backgroundOptions: {
            gradient: {
              type: 'linear',
              colorStops: [
                { offset: 0, color: '#ffffff00' },
                { offset: 1, color: '#ffffff' },
              ],
            },
          },
        },
        4,
      );
      expect(r.reasons).to.not.include('transparent_background');
    });
  });

  describe('decoding', () => {
    // jsqr reads none of these at any size tried; ZXing reads them.
    const jsqrMisses = (fg: string, bg: string): StyleConfig => ({
      dotsOptions: { type: 'classy-rounded', color: fg },
      cornersSquareOptions: { type: 'dot', color: fg },
      cornersDotOptions: { type: 'square', color: fg },
      backgroundOptions: { color: bg },
    });

    it('reads a style one decoder misses with the other (round finder patterns)', async () => {
      expect(await check(jsqrMisses('#000000', '#ffffff'), 4)).to.include({ verdict: 'pass', decoded: true });
      expect(await check(jsqrMisses('#1a237e', '#ffffff'), 4)).to.include({ verdict: 'pass', decoded: true });
    });

    it('reads an inverted style that only the second decoder reads', async () => {
      const r = await check(jsqrMisses('#ffffff', '#000000'), 4);
      expect(r).to.include({ decoded: true });
      expect(r.reasons).to.deep.equal(['inverted_colors']);
    });

    it('fails a symbol that decodes to another text than the one checked', async () => {
      const r = await measure(sceneOf({ text: 'https://other.example/', config: {}, margin: 4 }), TEXT, 'Q', {
        full: true,
      });
      expect(r).to.deep.include({ verdict: 'fail', decoded: false, reasons: ['decoded_text_mismatch'] });
    });
  });

  it('lists failing reasons before warnings, and the verdict follows the worst', async () => {
    const codes = Object.keys(REASONS) as (keyof typeof REASONS)[];
    const severities = codes.map((c) => REASONS[c].split(':')[0]);
    expect(severities).to.deep.equal([...severities].sort()); // every 'fail' before every 'warn'
    expect(new Set(severities)).to.deep.equal(new Set(['fail', 'warn']));
    const r = await check({ dotsOptions: { color: '#8a8a8a' }, backgroundOptions: { color: 'transparent' } }, 0);
    expect(r.reasons).to.deep.equal(['quiet_zone_missing', 'contrast_below_recommended', 'transparent_background']);
    expect(r.verdict).to.equal('fail');
  });

  it('checks a style config with the sample text at its error correction level (Q by default)', async () => {
    const r = await checkScannability({});
    expect(r).to.include({ verdict: 'pass', decoded: true, error_correction: 'Q' });
    expect(SAMPLE_TEXT).to.match(/^https:\/\//);
    expect(
      (await checkScannability({ qrOptions: { errorCorrectionLevel: 'L' } }, SAMPLE_TEXT, false)).error_correction,
    ).to.equal('L');
    expect((await checkScannability({}, 'hello', false)).decoded).to.equal(true);
  });

  describe('the full verdict: three decoder families on phone-like captures', () => {
    it('warns, naming ZBar and the captures it missed, for ring finder patterns with classy-rounded dots at H (issue 29)', async () => {
      const config: StyleConfig = {
        cornersSquareOptions: { type: 'dot' },
        dotsOptions: { type: 'classy-rounded' },
        qrOptions: { errorCorrectionLevel: 'H' },
      };
      const r = await checkScannability(config);
      expect(r.check).to.equal('full');
      expect(r.verdict).to.equal('warn');
      expect(r.reasons).to.include('capture_not_decoded');
      expect(
        r.misses!.some((m) => m.family === 'zbar'),
        JSON.stringify(r.misses),
      ).to.equal(true);
      // Quick: the two in-thread families read the ideal image; no captures, no print size.
      const quick = await checkScannability(config, SAMPLE_TEXT, false);
      expect(quick).to.include({ check: 'quick', verdict: 'pass', decoded: true });
      expect(quick.decoders).to.deep.equal(['zxing-cpp', 'jsqr']);
      expect(quick).to.not.have.any.keys('misses', 'robustness_margin', 'smallest_print_size_mm');
    });

    it('judges the captures at the declared print size: too small a print is a warning, and the smallest size that passes is larger', async () => {
      const tiny = await checkScannability({ print: { size_mm: 10, distance_mm: 200 } });
      expect(tiny.print).to.deep.equal({ size_mm: 10, distance_mm: 200 });
      expect(tiny.verdict).to.equal('warn');
      expect(tiny.reasons).to.deep.equal(['capture_not_decoded']);
      // It passes larger; the margin says by how much it falls short.
      expect(tiny.smallest_print_size_mm).to.be.a('number').above(10).and.at.most(20);
      expect(tiny.robustness_margin).to.be.below(1);
    });

    // The smallest print size is searched on a ladder of sizes around the declared one (two steps
    // each way: the middle one, then the one beside it on the side the answer lies). Each row takes
    // one way down that ladder; the figures are the service's own for these styles (captures from
    // fixed seeds, ZBar's reader made afresh for each image), so any change of the ladder shows.
    const at = (size_mm: number) => ({ size_mm, distance_mm: 200 });
    const ladder: [string, StyleConfig, string | undefined, number | null, number | null][] = [
      // Passing as declared: 1.5 times smaller passes, and so does half the size.
      ['half the size (a short text: a small version)', {}, 'hi', 10, 2],
      // 1.5 times smaller passes, half the size does not.
      ['1.5 times smaller', {}, undefined, 13.3, 1.5],
      // 1.5 times smaller does not pass, 1.25 times smaller does.
      ['1.25 times smaller', { frame: { style: 'box', text: 'Scan the menu' } }, undefined, 16, 1.25],
      // Neither: the declared size is the smallest.
      [
        'the declared size',
        {
          dotsOptions: { type: 'classy-rounded' },
          cornersSquareOptions: { type: 'square' },
          cornersDotOptions: { type: 'dot' },
          qrOptions: { errorCorrectionLevel: 'H' },
        },
        undefined,
        20,
        1,
      ],
      // Not passing as declared: 1.5 times larger passes, and so does 1.25 times larger.
      ['1.25 times larger', { print: at(10) }, undefined, 12.5, 0.8],
      // 1.5 times larger passes, 1.25 times larger does not.
      ['1.5 times larger', { print: at(11) }, undefined, 16.5, 0.67],
      // 1.5 times larger does not pass, twice the size does.
      ['twice the size', { print: at(7) }, undefined, 14, 0.5],
      // Not even twice the size.
      ['none up to twice the size', { print: at(4) }, undefined, null, null],
    ];
    for (const [name, config, text, smallest, margin] of ladder) {
      it(`finds the smallest print size that passes: ${name}`, async () => {
        const r = await checkScannability(config, text);
        expect(r.check).to.equal('full');
        expect({ smallest: r.smallest_print_size_mm, margin: r.robustness_margin }).to.deep.equal({ smallest, margin });
        // Passing as declared or not decides which way the ladder goes.
        expect(r.verdict).to.equal(margin !== null && margin >= 1 ? 'pass' : 'warn');
        expect(r.misses!.length === 0).to.equal(margin !== null && margin >= 1);
      });
    }

    it('finds the same smallest print size when ZXing-C++ reads every capture at the declared size and another family misses one', async () => {
      // The verdict walks ahead on what ZXing-C++ (in the thread) has read, to a print size 1.5 times
      // smaller, while ZBar still reads the declared size; ZBar's miss turns the ladder the other way.
      const r = await checkScannability({
        dotsOptions: { type: 'rounded' },
        cornersSquareOptions: { type: 'extra-rounded' },
        cornersDotOptions: { type: 'dot' },
        qrOptions: { errorCorrectionLevel: 'H' },
      });
      expect(r.misses).to.deep.equal([{ family: 'zbar', capture: 'jpeg' }]);
      expect({ smallest: r.smallest_print_size_mm, margin: r.robustness_margin }).to.deep.equal({
        smallest: 25,
        margin: 0.8,
      });
    });

    it('passes at the smallest print size it reports, smaller or larger than the declared one', async () => {
      for (const config of [{}, { print: at(10) }] as StyleConfig[]) {
        const r = await checkScannability(config);
        const again = await checkScannability({ ...config, print: at(r.smallest_print_size_mm!) });
        expect(again.verdict, JSON.stringify(again.misses)).to.equal('pass');
        expect(again.misses).to.deep.equal([]);
      }
    });

    it('makes no captures for a failing style: no misses, margin or smallest print size', async () => {
      // Readable by every family (black on a mid grey), but under 3:1.
      const r = await checkScannability({ backgroundOptions: { color: '#555555' } });
      expect(r).to.include({ check: 'full', verdict: 'fail', decoded: true });
      expect(r.reasons).to.deep.equal(['low_contrast']);
      expect(r).to.not.have.any.keys('misses', 'robustness_margin', 'smallest_print_size_mm');
    });

    it('names ZBar as missing the ideal image of an inverted style, and searches no print size', async () => {
      const r = await checkScannability({ dotsOptions: { color: '#ffffff' }, backgroundOptions: { color: '#263238' } });
      expect(r.verdict).to.equal('warn');
      expect(r.reasons).to.deep.equal(['decoder_missed_symbol', 'capture_not_decoded', 'inverted_colors']);
      // ZBar reads no light-on-dark symbol; the other two read it (jsQR trying both binarisations).
      expect(r.misses!.filter((m) => m.family !== 'zbar')).to.deep.equal([]);
      expect(r.misses!.map((m) => m.capture)).to.deep.equal([
        'ideal',
        'blur',
        'jpeg',
        'rotation',
        'tilt',
        'lighting',
        'noise',
      ]);
      expect({ smallest: r.smallest_print_size_mm, margin: r.robustness_margin }).to.deep.equal({
        smallest: null,
        margin: null,
      });
    });

    it('reports the same verdict on every run (captures from fixed seeds)', async () => {
      const config: StyleConfig = { dotsOptions: { type: 'dots' }, print: { size_mm: 15, distance_mm: 200 } };
      const [a, b] = [await checkScannability(config), await checkScannability(config)];
      expect(a).to.deep.equal(b);
    });
  });
});
