// The rendering engine in process: every dot type × corner type × paint × logo renders as SVG, PNG
// and PDF, and every PNG decodes (with ZXing, not the service's own decoder) to the encoded text.
import { inflateSync } from 'node:zlib';
import net from 'node:net';
import dns from 'node:dns';
import { expect } from 'chai';
import { renderQr, sceneOf, type StyleConfig } from '../../server/rendering/index.js';
import { CORNER_DOT_TYPES, CORNER_SQUARE_TYPES, DOT_TYPES } from '../../server/rendering/style.js';
import { resolveBrandKit } from '../../server/rendering/brand-kit.js';
import { parseLogo, sanitizeSvg } from '../../server/rendering/logo.js';
import { styleConfigErrors } from '../../server/rendering/validate.js';
import { checkScannability } from '../../server/rendering/scannability.js';
import { ApiError } from '../../server/errors.js';
import { decodeQr } from '../helpers/qr-decode.js';

const TEXT = 'http://localhost:3001/acme-7/spring-sale';
const svgLogo = (body: string) =>
  'data:image/svg+xml;base64,' +
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20">${body}</svg>`).toString('base64');
const LOGO = svgLogo('<rect width="20" height="20" rx="5" fill="#e53935"/><circle cx="10" cy="10" r="5" fill="#fff"/>');

const PAINTS: Record<string, StyleConfig['dotsOptions']> = {
  solid: { color: '#1b1b3a' },
  linear: {
    gradient: {
      type: 'linear',
      rotation: Math.PI / 4,
      colorStops: [
        { offset: 0, color: '#0d1b2a' },
        { offset: 1, color: '#4a148c' },
      ],
    },
  },
  radial: {
    gradient: {
      type: 'radial',
      colorStops: [
        { offset: 0, color: '#000000' },
        { offset: 1, color: '#1a237e' },
      ],
    },
  },
};

/** The page size and the uncompressed content streams of a PDF. */
function pdfParts(pdf: Buffer): { mediaBox: number[]; content: string; images: number } {
  const text = pdf.toString('latin1');
  const box = /\/MediaBox \[([^\]]+)\]/.exec(text)![1].trim().split(/\s+/).map(Number);
  let content = '';
  const re = /stream\r?\n/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const end = text.indexOf('endstream', m.index);
    try {
      content += inflateSync(pdf.subarray(m.index + m[0].length, end)).toString('latin1');
    } catch {
      // not a Flate stream (an embedded image)
    }
  }
  return { mediaBox: box, content, images: (text.match(/\/Subtype \/Image/g) ?? []).length };
}

describe('rendering engine', () => {
  describe('every dot type × corner type × paint × logo, in SVG, PNG and PDF', () => {
    for (const [i, dots] of DOT_TYPES.entries()) {
      it(`${dots} dots: each combination renders in three formats and its PNG decodes to the text`, async function () {
        this.timeout(30_000);
        for (const [j, corner] of CORNER_SQUARE_TYPES.entries()) {
          for (const [paintName, paint] of Object.entries(PAINTS)) {
            for (const logo of [false, true]) {
              const config: StyleConfig = {
                dotsOptions: { type: dots, ...paint },
                cornersSquareOptions: { type: corner },
                cornersDotOptions: { type: CORNER_DOT_TYPES[(i + j) % CORNER_DOT_TYPES.length] },
                ...(logo ? { image: LOGO, qrOptions: { errorCorrectionLevel: 'H' } } : {}),
              };
              const label = `${dots}/${corner}/${paintName}/${logo ? 'logo' : 'no logo'}`;
              expect(styleConfigErrors(config), label).to.equal(null);
              const svg = await renderQr({ text: TEXT, config, format: 'svg', size: 300 });
              expect(svg.body.toString('utf8'), label).to.match(/^<svg /);
              const pdf = await renderQr({ text: TEXT, config, format: 'pdf' });
              expect(pdf.body.subarray(0, 5).toString(), label).to.equal('%PDF-');
              const png = await renderQr({ text: TEXT, config, format: 'png', size: 300 });
              expect(png.contentType).to.equal('image/png');
              expect(await decodeQr(png.body), label).to.equal(TEXT);
              // and the service's own check does not refuse what scans
              expect((await checkScannability(config, TEXT, false)).verdict, label).not.to.equal('fail');
            }
          }
        }
      });
    }
  });

  it('writes SVG as a few merged paths, not one element per module', async () => {
    const svg = (
      await renderQr({ text: TEXT, config: { dotsOptions: { type: 'rounded' } }, format: 'svg' })
    ).body.toString();
    // background, the data modules, and the three finder patterns' squares and dots
    expect(svg.match(/<path /g)).to.have.length(8);
    expect(svg).not.to.include('<rect');
    expect(svg).to.include('width="1024"');
    expect(await decodeQr(Buffer.from(svg), 400)).to.equal(TEXT);
  });

  it('writes a vector PDF whose page is sized to the image', async () => {
    const pdf = pdfParts((await renderQr({ text: TEXT, config: {}, format: 'pdf', size: 200 })).body);
    expect(pdf.mediaBox).to.deep.equal([0, 0, 200, 200]);
    expect(pdf.images).to.equal(0);
    // path construction (m, l, h) and fills (f), no raster
    expect(pdf.content).to.match(/ m\n/).and.to.match(/ l\n/).and.to.match(/\bf\n/);
    const framed = pdfParts(
      (await renderQr({ text: TEXT, config: { frame: { style: 'banner', text: 'Scan me' } }, format: 'pdf' })).body,
    );
    expect(framed.mediaBox[2]).to.equal(288);
    expect(framed.mediaBox[3]).to.be.greaterThan(288);
    expect(framed.content).to.match(/ [cv]\n/); // the text's glyph curves
  });

  it('gives the same bytes for the same inputs (the ETag is strong)', async () => {
    for (const format of ['svg', 'png', 'pdf'] as const) {
      const config: StyleConfig = { image: LOGO, frame: { style: 'box', text: 'Hi' } };
      const a = await renderQr({ text: TEXT, config, format });
      const b = await renderQr({ text: TEXT, config, format });
      expect(a.body.equals(b.body), format).to.equal(true);
    }
  });

  it('sizes PNGs by `size` and keeps the frame’s band below the symbol', async () => {
    const png = (
      await renderQr({ text: TEXT, config: { frame: { style: 'banner', text: 'Menu' } }, format: 'png', size: 512 })
    ).body;
    expect(png.readUInt32BE(16)).to.equal(512);
    expect(png.readUInt32BE(20)).to.be.greaterThan(512);
    expect(await decodeQr(png)).to.equal(TEXT);
  });

  it('takes the quiet zone from the margin: the style’s pixels, or modules given by the caller', () => {
    expect(sceneOf({ text: TEXT, config: {} }).quietZone).to.equal(4);
    expect(sceneOf({ text: TEXT, config: {}, margin: 2 }).quietZone).to.equal(2);
    expect(sceneOf({ text: TEXT, config: { margin: 0 } }).quietZone).to.equal(0);
  });

  it('renders with the network blocked: nothing is fetched, remote references in SVG logos are removed', async () => {
    const attempts: string[] = [];
    const saved = { connect: net.Socket.prototype.connect, lookup: dns.lookup, fetch: globalThis.fetch };
    net.Socket.prototype.connect = function (...args: unknown[]) {
      attempts.push(`connect ${JSON.stringify(args[0])}`);
      throw new Error('network blocked');
    } as typeof net.Socket.prototype.connect;
    (dns as { lookup: unknown }).lookup = (host: string) => {
      attempts.push(`lookup ${host}`);
      throw new Error('network blocked');
    };
    globalThis.fetch = (async (url: unknown) => {
      attempts.push(`fetch ${String(url)}`);
      throw new Error('network blocked');
    }) as typeof fetch;
    try {
      const hostile = svgLogo(
        '<image href="https://tracker.example/pixel.png" width="20" height="20"/>' +
          '<rect width="20" height="20" fill="url(https://tracker.example/x.svg#g)"/><circle r="8" cx="10" cy="10" fill="#333"/>',
      );
      for (const format of ['svg', 'png', 'pdf'] as const) {
        const img = await renderQr({
          text: TEXT,
          config: { image: hostile, qrOptions: { errorCorrectionLevel: 'H' } },
          format,
        });
        expect(img.body.length).to.be.greaterThan(100);
        expect(img.body.toString('latin1')).not.to.include('tracker.example');
      }
    } finally {
      net.Socket.prototype.connect = saved.connect;
      (dns as { lookup: unknown }).lookup = saved.lookup;
      globalThis.fetch = saved.fetch;
    }
    expect(attempts).to.deep.equal([]);
  });

  describe('style config schema', () => {
    it('refuses unknown keys, remote logos and out-of-range values with the field named', () => {
      expect(styleConfigErrors({ dots: { type: 'rounded' } })).to.have.keys('config.dots');
      expect(styleConfigErrors({ image: 'https://example.com/logo.png' })).to.have.keys('config.image');
      expect(styleConfigErrors({ imageOptions: { imageSize: 1.5 } })).to.have.keys('config.imageOptions.imageSize');
      expect(styleConfigErrors({ dotsOptions: { color: 'red' } })).to.have.keys('config.dotsOptions.color');
      expect(styleConfigErrors({ frame: { text: 'x'.repeat(33) } })).to.have.keys('config.frame.text');
      expect(
        styleConfigErrors({
          dotsOptions: { gradient: { type: 'linear', colorStops: [{ offset: 0, color: '#000' }] } },
        }),
      ).to.have.keys('config.dotsOptions.gradient.colorStops');
      expect(
        styleConfigErrors({ backgroundOptions: { color: 'transparent' }, dotsOptions: { color: 'brand:primary' } }),
      ).to.equal(null);
    });

    it('resolves brand-kit colours and logo, and names a reference the kit cannot answer', () => {
      const kit = { colors: { primary: '#123456' }, logo: LOGO };
      const resolved = resolveBrandKit({ dotsOptions: { color: 'brand:primary' }, image: 'brand:logo' }, kit);
      expect(resolved).to.deep.equal({ dotsOptions: { color: '#123456' }, image: LOGO });
      try {
        resolveBrandKit({ cornersDotOptions: { color: 'brand:accent' } }, kit);
        expect.fail('resolved a missing colour');
      } catch (err) {
        expect((err as ApiError).extra.errors).to.have.keys('config.cornersDotOptions.color');
      }
    });

    it('sanitises SVG logos and refuses what cannot be made safe', () => {
      const clean = sanitizeSvg(
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script><foreignObject><p/></foreignObject>' +
          '<a href="javascript:alert(3)"><rect width="1" height="1"/></a></svg>',
      );
      expect(clean).not.to.match(/script|onload|foreignObject|javascript/i);
      expect(() => parseLogo(svgLogo('<!ENTITY x "y">'))).to.throw(ApiError);
      expect(() => parseLogo('data:image/png;base64,aGVsbG8=')).to.throw(ApiError); // not a PNG
      expect(parseLogo(LOGO)).to.include({ mime: 'image/svg+xml', width: 20, height: 20 });
    });
  });
});
