// The PNG writer (server/rendering/png.ts): what it writes is read back by another decoder (Skia's,
// through @napi-rs/canvas) pixel for pixel, and a transparent background stays transparent.
import { expect } from 'chai';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { encodePng } from '../../server/rendering/png.js';
import { renderQr } from '../../server/rendering/index.js';
import { ReusePool } from '../../server/rendering/reuse.js';
import { decodeQr } from '../helpers/qr-decode.js';

async function pixelsOf(png: Buffer): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const img = await loadImage(png);
  const canvas = createCanvas(img.width, img.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return ctx.getImageData(0, 0, img.width, img.height);
}

describe('PNG writer', () => {
  it('writes every pixel as given, read back by another decoder', async () => {
    const width = 37;
    const height = 23;
    const rgba = new Uint8Array(width * height * 4);
    // Every colour value, opaque or fully transparent (partial alpha rounds in a premultiplying decoder).
    for (let i = 0; i < width * height; i++) {
      rgba[i * 4] = (i * 7) % 256;
      rgba[i * 4 + 1] = (i * 13 + 5) % 256;
      rgba[i * 4 + 2] = (i * 29 + 11) % 256;
      rgba[i * 4 + 3] = i % 5 === 0 ? 0 : 255;
    }
    const png = await encodePng(rgba, width, height);
    expect([...png.subarray(0, 8)]).to.deep.equal([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const back = await pixelsOf(png);
    expect([back.width, back.height]).to.deep.equal([width, height]);
    for (let i = 0; i < width * height; i++) {
      const got = [...back.data.subarray(i * 4, i * 4 + 4)];
      const want = rgba[i * 4 + 3] === 0 ? [0, 0, 0, 0] : [...rgba.subarray(i * 4, i * 4 + 4)];
      expect(got, `pixel ${i % width},${Math.floor(i / width)}`).to.deep.equal(want);
    }
  });

  it('encodes images of the same size at the same time without mixing their rows', async () => {
    const [width, height] = [64, 64];
    const image = (value: number) =>
      new Uint8Array(width * height * 4).fill(value).map((v, i) => (i % 4 === 3 ? 255 : v));
    const values = [10, 90, 170, 250];
    const pngs = await Promise.all(values.map((v) => encodePng(image(v), width, height)));
    for (const [i, png] of pngs.entries()) {
      const back = await pixelsOf(png);
      expect([...new Set(back.data.filter((_, j) => j % 4 !== 3))], `image ${i}`).to.deep.equal([values[i]]);
    }
  });

  it('keeps at most its bound of idle objects for reuse, whatever their keys', () => {
    const pool = new ReusePool<string>(4);
    for (let i = 0; i < 100; i++) pool.give(`size-${i}`, `canvas-${i}`);
    expect(pool.size).to.equal(4);
    expect(pool.take('size-0'), 'the oldest went first').to.equal(undefined);
    expect(pool.take('size-99')).to.equal('canvas-99');
    expect(pool.take('size-99'), 'taken once').to.equal(undefined);
  });

  it('refuses pixels that do not fill the size given', async () => {
    let error: unknown;
    await encodePng(new Uint8Array(10 * 10 * 4 - 1), 10, 10).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/expected 400 bytes of pixels, got 399/);
  });

  it('keeps a transparent background transparent and the dark modules opaque, and the code scans', async () => {
    const text = 'https://qr.example.com/acme/menu';
    // An opaque image of the same size first: canvases are reused, and nothing of it may show through.
    await renderQr({ text, config: { backgroundOptions: { color: '#ff0000' } }, format: 'png', size: 256 });
    const { body } = await renderQr({
      text,
      config: { backgroundOptions: { color: 'transparent' }, dotsOptions: { color: '#1a237e' } },
      format: 'png',
      size: 256,
    });
    const { data, width } = await pixelsOf(body);
    expect(width).to.equal(256);
    const alphaAt = (x: number, y: number) => data[(x + y * width) * 4 + 3];
    expect([...data.subarray(0, 4)], 'the corner, in the quiet zone').to.deep.equal([0, 0, 0, 0]);
    // Down the diagonal: the quiet zone (4 modules) is transparent up to the finder pattern.
    let quiet = 0;
    while (quiet < width && alphaAt(quiet, quiet) === 0) quiet++;
    expect(quiet).to.be.within(16, 64);
    const inFinder = Math.floor(quiet + quiet / 8); // half a module into the finder's outer ring
    const at = (inFinder + inFinder * width) * 4;
    expect([...data.subarray(at, at + 4)], 'a finder module').to.deep.equal([0x1a, 0x23, 0x7e, 255]);
    expect(await decodeQr(body)).to.equal(text);
  });
});
