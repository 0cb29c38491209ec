// The verdict against an outside decoder: a corpus of styles (every dots, corner-square and
// corner-dot type at every error-correction level, logos at several sizes, gradients, inverted
// colours, frames) is judged by the service, then each is drawn at its declared print size and read
// by Debian's `zbarimg` (zbar-tools, installed with apt-get when missing), a separate process the
// service does not call. No style the service calls `pass` may fail there. Two images per style: the
// camera's view at the declared size and distance (./captures.ts's camera, no impairment), and a
// 300 dpi print of that size.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { capturePxPerModule, DEFAULT_PRINT } from '../../server/rendering/captures.js';
import { renderQr, sceneOf } from '../../server/rendering/index.js';
import { checkScannability, SAMPLE_TEXT, type Scannability } from '../../server/rendering/scannability.js';
import {
  CORNER_DOT_TYPES,
  CORNER_SQUARE_TYPES,
  DOT_TYPES,
  ERROR_CORRECTION_LEVELS,
  type StyleConfig,
} from '../../server/rendering/style.js';
import { ensureDebianBinary } from '../helpers/debian.js';
import { samplePngLogo } from '../helpers/sample-logo.js';

const run = promisify(execFile);

/** The corpus, named. Each dots type meets every corner pair across the levels (6 x 6 in 4 x 6). */
function corpus(): [string, StyleConfig][] {
  const corners = CORNER_SQUARE_TYPES.flatMap((sq) => CORNER_DOT_TYPES.map((dt) => [sq, dt] as const));
  const styles: [string, StyleConfig][] = [];
  ERROR_CORRECTION_LEVELS.forEach((level, l) => {
    DOT_TYPES.forEach((dots, d) => {
      const [sq, dt] = corners[(d + l) % corners.length];
      styles.push([
        `${dots} dots, ${sq}/${dt} corners, level ${level}`,
        {
          qrOptions: { errorCorrectionLevel: level },
          dotsOptions: { type: dots },
          cornersSquareOptions: { type: sq },
          cornersDotOptions: { type: dt },
        },
      ]);
    });
  });
  const logo = samplePngLogo();
  for (const [imageSize, level] of [
    [0.2, 'M'],
    [0.4, 'Q'],
    [0.4, 'H'],
    [0.7, 'H'],
  ] as const) {
    styles.push([
      `logo imageSize ${imageSize} at ${level}`,
      { image: logo, imageOptions: { imageSize }, qrOptions: { errorCorrectionLevel: level } },
    ]);
  }
  const gradient = (type: 'linear' | 'radial', a: string, b: string) => ({
    type,
    rotation: 0.8,
    colorStops: [
      { offset: 0, color: a },
      { offset: 1, color: b },
    ],
  });
  styles.push(
    [
      'linear gradient, rounded',
      { dotsOptions: { type: 'rounded', gradient: gradient('linear', '#0d47a1', '#6a1b9a') } },
    ],
    [
      'radial gradient, dots, tinted background',
      {
        dotsOptions: { type: 'dots', gradient: gradient('radial', '#000000', '#1b5e20') },
        backgroundOptions: { color: '#f1f8e9' },
      },
    ],
    ['inverted colours', { dotsOptions: { color: '#ffffff' }, backgroundOptions: { color: '#263238' } }],
    ['box frame with text', { frame: { style: 'box', text: 'Scan the menu' } }],
    [
      'banner frame, logo, gradient',
      {
        qrOptions: { errorCorrectionLevel: 'H' },
        dotsOptions: { type: 'extra-rounded', gradient: gradient('linear', '#1a237e', '#6a1b9a') },
        image: logo,
        frame: { style: 'banner', text: 'Scan me', color: '#1a237e' },
      },
    ],
    ['a 12 mm print', { print: { size_mm: 12, distance_mm: 200 } }],
    [
      'issue 29: ring finder patterns, classy-rounded dots, level H',
      {
        cornersSquareOptions: { type: 'dot' },
        dotsOptions: { type: 'classy-rounded' },
        qrOptions: { errorCorrectionLevel: 'H' },
      },
    ],
  );
  return styles;
}

/** Texts zbarimg reads in each file (by file path); none for a file it reads nothing in. */
async function zbarimg(binary: string, files: string[]): Promise<Map<string, string[]>> {
  const out = await run(binary, ['--xml', '-q', '-Sdisable', '-Sqrcode.enable', ...files], {
    maxBuffer: 16 << 20,
  }).catch((err: { stdout?: string; code?: number }) => {
    // Exit 4: some image had no symbol; the XML still lists every source.
    if (err.code === 4 && err.stdout !== undefined) return { stdout: err.stdout };
    throw err;
  });
  const read = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const [, href, body] of out.stdout.matchAll(/<source href='([^']*)'>([\s\S]*?)<\/source>/g)) {
    const texts = [
      ...body.matchAll(/<data(?: format='[^']*')?(?: length='\d+')?><!\[CDATA\[([\s\S]*?)\]\]><\/data>/g),
    ].map((m) => m[1]);
    read.set(href, texts);
  }
  return read;
}

describe('scannability verdicts against Debian’s zbarimg (a corpus of styles)', function () {
  this.timeout(900_000);
  let dir: string;
  let binary: string;
  before(() => {
    binary = ensureDebianBinary('zbarimg', 'zbar-tools');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-corpus-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('calls no style `pass` that zbarimg cannot read at its declared print size', async () => {
    const styles = corpus();
    const judged: { name: string; verdict: Scannability; files: string[] }[] = [];
    for (const [i, [name, config]] of styles.entries()) {
      const verdict = await checkScannability(config);
      const print = { ...DEFAULT_PRINT, ...config.print };
      const scene = sceneOf({ text: SAMPLE_TEXT, config });
      const camera = Math.round(scene.width * capturePxPerModule(scene.modules, print));
      const dpi300 = Math.round(((scene.width / scene.modules) * print.size_mm * 300) / 25.4);
      const files: string[] = [];
      for (const [kind, size] of [
        ['camera', camera],
        ['300dpi', dpi300],
      ] as const) {
        const png = await renderQr({ text: SAMPLE_TEXT, config, format: 'png', size });
        const file = path.join(dir, `${String(i).padStart(2, '0')}-${kind}.png`);
        fs.writeFileSync(file, png.body);
        files.push(file);
      }
      judged.push({ name, verdict, files });
    }
    const read = await zbarimg(
      binary,
      judged.flatMap((j) => j.files),
    );
    const wrong: string[] = [];
    for (const j of judged) {
      const missed = j.files.filter((f) => !read.get(f)!.includes(SAMPLE_TEXT));
      if (j.verdict.verdict === 'pass' && missed.length) {
        wrong.push(`${j.name}: pass, but zbarimg did not read ${missed.map((f) => path.basename(f)).join(', ')}`);
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    // The corpus means something: most of it passes, zbarimg reads the plain styles, and the issue's
    // ring finder patterns with classy-rounded dots at H is not called pass.
    const passes = judged.filter((j) => j.verdict.verdict === 'pass');
    const tally = judged.map((j) => `${j.name}: ${j.verdict.verdict}`).join('\n');
    expect(passes.length, `styles judged pass:\n${tally}`).to.be.at.least(5);
    expect(read.get(judged.find((j) => j.name === 'box frame with text')!.files[1])).to.include(SAMPLE_TEXT);
    const ring = judged.find((j) => j.name.startsWith('issue 29'))!;
    expect(ring.verdict.verdict).to.not.equal('pass');
  });
});
