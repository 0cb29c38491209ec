// `imageOptions.imageSize` has qr-code-styling's meaning: the logo box of a design is the one
// qr-code-styling itself draws. qr-code-styling 1.9 runs here in Node as its README's "Node Support"
// section sets it up (jsdom for the SVG type, a node canvas for loading the image; @napi-rs/canvas,
// which the service already uses, stands in for node-canvas: qr-code-styling calls only its
// loadImage, createCanvas and toDataURL), draws its SVG, and the <image> element it writes is
// compared, in modules, with the box of our scene.
import { createRequire } from 'node:module';
import * as napiCanvas from '@napi-rs/canvas';
import { expect } from 'chai';
import { JSDOM } from 'jsdom';
import { logoBox, EC_CAPACITY } from '../../server/rendering/geometry.js';
import { sceneOf } from '../../server/rendering/index.js';
import type { StyleConfig } from '../../server/rendering/style.js';

const require = createRequire(import.meta.url);
// qr-code-styling's Node build (its README's require path); it ships no types for it.
const { QRCodeStyling } = require('qr-code-styling/lib/qr-code-styling.common.js') as {
  QRCodeStyling: new (options: Record<string, unknown>) => {
    getRawData(ext: 'svg'): Promise<Buffer>;
    _qr?: { getModuleCount(): number };
  };
};

function pngLogo(w: number, h: number): string {
  const c = napiCanvas.createCanvas(w, h);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#1e88e5';
  ctx.fillRect(0, 0, w, h);
  return 'data:image/png;base64,' + c.toBuffer('image/png').toString('base64');
}

interface Drawn {
  modules: number;
  /** The drawn logo in modules, relative to the symbol's top-left corner. */
  x: number;
  y: number;
  w: number;
  h: number;
  /** One pixel at qr-code-styling's dot size, in modules. */
  pixel: number;
}

/** What qr-code-styling draws for a design: its <image> element, in modules. */
async function theirs(design: Record<string, unknown> & { width: number; margin: number }): Promise<Drawn> {
  const qr = new QRCodeStyling({ jsdom: JSDOM, nodeCanvas: napiCanvas, type: 'svg', ...design });
  const svg = (await qr.getRawData('svg')).toString('utf8');
  const n = qr._qr!.getModuleCount();
  const dotSize = Math.floor((design.width - 2 * design.margin) / n);
  const begin = Math.floor((design.width - n * dotSize) / 2);
  const el = /<image\b[^>]*>/.exec(svg)?.[0];
  if (!el) throw new Error('qr-code-styling drew no image');
  const attr = (name: string) => Number.parseFloat(new RegExp(`\\s${name}="([-\\d.]+)`).exec(el)![1]);
  return {
    modules: n,
    x: (attr('x') - begin) / dotSize,
    y: (attr('y') - begin) / dotSize,
    w: attr('width') / dotSize,
    h: attr('height') / dotSize,
    pixel: 1 / dotSize,
  };
}

/** What our engine draws for the same design. */
function ours(text: string, config: StyleConfig): Drawn & { hidden: number } {
  const scene = sceneOf({ text, config });
  const logo = scene.logo!;
  return {
    modules: scene.modules,
    x: logo.x - scene.symbol.x,
    y: logo.y - scene.symbol.y,
    w: logo.w,
    h: logo.h,
    pixel: 0,
    hidden: scene.hidden.reduce((s, v) => s + v, 0),
  };
}

describe('logo box: imageSize as qr-code-styling reads it', function () {
  this.timeout(60_000);

  // qr-code-styling's documented examples (README: the Node example, imageSize left at its 0.4 and
  // a 20 px image margin; the options table's defaults) and the designs of the issue (0.4 and 0.3
  // at level H), with square, wide and tall logos.
  const designs: { name: string; text: string; design: Record<string, unknown> & { width: number; margin: number } }[] =
    [
      {
        name: 'the README Node example (default imageSize 0.4, image margin 20)',
        text: 'https://www.facebook.com/',
        design: { width: 300, height: 300, margin: 0, imageOptions: { margin: 20 }, logo: [120, 120] },
      },
      {
        name: 'the default imageSize at level H',
        text: 'https://qr.example.com/acme/menu',
        design: { width: 300, height: 300, margin: 10, qrOptions: { errorCorrectionLevel: 'H' }, logo: [100, 100] },
      },
      {
        name: 'imageSize 0.3 at level H, a wide logo',
        text: 'https://qr.example.com/acme/menu',
        design: {
          width: 512,
          height: 512,
          margin: 16,
          qrOptions: { errorCorrectionLevel: 'H' },
          imageOptions: { imageSize: 0.3 },
          logo: [160, 90],
        },
      },
      {
        name: 'imageSize 0.5 at level M, a tall logo, image margin 6',
        text: 'https://example.org/a/very/long/path/that/makes/a/bigger/symbol?with=query&and=more',
        design: {
          width: 400,
          height: 400,
          margin: 8,
          qrOptions: { errorCorrectionLevel: 'M' },
          imageOptions: { imageSize: 0.5, margin: 6 },
          logo: [60, 140],
        },
      },
      {
        name: 'imageSize 1 at level L (capped at modules - 14 across)',
        text: 'HELLO',
        design: {
          width: 300,
          height: 300,
          margin: 0,
          qrOptions: { errorCorrectionLevel: 'L' },
          imageOptions: { imageSize: 1 },
          logo: [200, 20],
        },
      },
    ];

  for (const { name, text, design } of designs) {
    it(`draws ${name} with qr-code-styling's logo box`, async () => {
      const [lw, lh] = design.logo as [number, number];
      const image = pngLogo(lw, lh);
      const { logo: _logo, ...rest } = design;
      const them = await theirs({
        ...rest,
        data: text,
        image,
        imageOptions: { saveAsBlob: false, ...(design.imageOptions as object) },
      });
      const config = { ...rest, image } as StyleConfig;
      const us = ours(text, config);
      // Same symbol (same version), else the comparison says nothing.
      expect(us.modules).to.equal(them.modules);
      // qr-code-styling floors its pixel positions; one of its pixels is the tolerance.
      const tol = them.pixel + 1e-9;
      expect(us.w).to.be.closeTo(them.w, tol);
      expect(us.h).to.be.closeTo(them.h, tol);
      expect(us.x).to.be.closeTo(them.x, tol);
      expect(us.y).to.be.closeTo(them.y, tol);
      // The hidden modules are the box's: at most imageSize × the level's capacity of the symbol.
      const level = ((design.qrOptions as { errorCorrectionLevel?: 'L' | 'M' | 'Q' | 'H' })?.errorCorrectionLevel ??
        'Q') as keyof typeof EC_CAPACITY;
      const size = (design.imageOptions as { imageSize?: number } | undefined)?.imageSize ?? 0.4;
      expect(us.hidden).to.be.at.most(Math.floor(size * EC_CAPACITY[level] * us.modules ** 2));
      expect(us.hidden).to.be.above(0);
    });
  }

  it('hides an odd number of modules across and down, centred, and nothing for imageSize 0', () => {
    const box = logoBox({ modules: 33, dotSize: 9, imageSize: 0.4, capacity: 0.3, logoWidth: 1, logoHeight: 1 });
    expect(box.hideX % 2).to.equal(1);
    expect(box.hideY % 2).to.equal(1);
    expect(box.hideX * box.hideY).to.be.at.most(Math.floor(0.4 * 0.3 * 33 * 33));
    expect(
      logoBox({ modules: 33, dotSize: 9, imageSize: 0, capacity: 0.3, logoWidth: 1, logoHeight: 1 }),
    ).to.deep.equal({ width: 0, height: 0, hideX: 0, hideY: 0 });
  });
});
