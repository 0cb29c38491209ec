// make docs-images: the example images of docs/rendering.md, drawn by the service's own engine
// (server/rendering) and judged by its scannability check, so the page shows what the API answers.
// Writes docs/images/rendering/<name>.png and prints the table docs/rendering.md carries.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderQr, type StyleConfig } from '../../server/rendering/index.js';
import { checkScannability } from '../../server/rendering/scannability.js';
import { samplePngLogo } from '../helpers/sample-logo.js';

const DIR = path.resolve('docs/images/rendering');
const TEXT = 'https://qr.example.com/acme/menu';

const LOGO = samplePngLogo();
const gradient = (type: 'linear' | 'radial', a: string, b: string) => ({
  type,
  rotation: type === 'linear' ? Math.PI / 4 : undefined,
  colorStops: [
    { offset: 0, color: a },
    { offset: 1, color: b },
  ],
});

const EXAMPLES: [string, string, StyleConfig][] = [
  ['plain', 'No style: black on white, quiet zone of 4 modules', {}],
  ['dots-dots', '`dotsOptions.type: dots`', { dotsOptions: { type: 'dots' } }],
  ['dots-rounded', '`rounded`', { dotsOptions: { type: 'rounded' } }],
  ['dots-extra-rounded', '`extra-rounded`', { dotsOptions: { type: 'extra-rounded' } }],
  ['dots-classy', '`classy`', { dotsOptions: { type: 'classy' } }],
  ['dots-classy-rounded', '`classy-rounded`', { dotsOptions: { type: 'classy-rounded' } }],
  [
    'corners',
    '`cornersSquareOptions.type: extra-rounded`, `cornersDotOptions.type: dot`, own colours',
    {
      cornersSquareOptions: { type: 'extra-rounded', color: '#c2185b' },
      cornersDotOptions: { type: 'dot', color: '#1a237e' },
    },
  ],
  [
    'gradient-linear',
    'Linear gradient on the dots, `rotation` π/4',
    { dotsOptions: { type: 'rounded', gradient: gradient('linear', '#0d47a1', '#6a1b9a') } },
  ],
  [
    'gradient-radial',
    'Radial gradient on the dots, a tinted background',
    {
      dotsOptions: { type: 'dots', gradient: gradient('radial', '#000000', '#1b5e20') },
      backgroundOptions: { color: '#f1f8e9' },
    },
  ],
  [
    'logo',
    'A PNG logo (`data:` URI), `imageSize` 0.4 (qr-code-styling’s default), level H',
    { image: LOGO, imageOptions: { imageSize: 0.4, margin: 4 }, qrOptions: { errorCorrectionLevel: 'H' } },
  ],
  ['frame-box', '`frame: {style: box, text: "Scan the menu"}`', { frame: { style: 'box', text: 'Scan the menu' } }],
  [
    'frame-banner',
    'Everything: gradient, logo, banner frame',
    {
      qrOptions: { errorCorrectionLevel: 'H' },
      dotsOptions: { type: 'classy-rounded', gradient: gradient('linear', '#1a237e', '#6a1b9a') },
      cornersSquareOptions: { type: 'extra-rounded', color: '#c2185b' },
      cornersDotOptions: { type: 'dot', color: '#000000' },
      backgroundOptions: { color: '#fffde7' },
      image: LOGO,
      imageOptions: { imageSize: 0.4, margin: 4 },
      frame: { style: 'banner', text: 'Scan me', color: '#1a237e' },
    },
  ],
  [
    'warn-inverted',
    'Light on dark: saved with `inverted_colors`',
    { dotsOptions: { color: '#ffffff' }, backgroundOptions: { color: '#263238' } },
  ],
  [
    'fail-contrast',
    'Contrast 1.3:1: refused (`low_contrast`)',
    { dotsOptions: { color: '#8a8a8a' }, backgroundOptions: { color: '#9e9e9e' } },
  ],
  ['fail-quiet-zone', '`margin: 0`: refused (`quiet_zone_missing`)', { margin: 0 }],
  [
    'warn-rings',
    'Ring finder patterns, `classy-rounded` dots, level H: some decoder family misses some phone-like capture',
    {
      cornersSquareOptions: { type: 'dot' },
      dotsOptions: { type: 'classy-rounded' },
      qrOptions: { errorCorrectionLevel: 'H' },
    },
  ],
];

mkdirSync(DIR, { recursive: true });
console.log('| image | style | verdict, reasons |');
console.log('|---|---|---|');
for (const [name, what, config] of EXAMPLES) {
  const png = await renderQr({ text: TEXT, config, format: 'png', size: 240 });
  writeFileSync(path.join(DIR, `${name}.png`), png.body);
  const s = await checkScannability(config, TEXT);
  const missed = s.misses?.length ? ` (missed: ${s.misses.map((m) => `${m.family} ${m.capture}`).join(', ')})` : '';
  const verdict = `${s.verdict}${s.reasons.length ? ': ' + s.reasons.map((r) => '`' + r + '`').join(', ') : ''}${missed}`;
  console.log(`| ![${name}](images/rendering/${name}.png) | ${what} | ${verdict} |`);
}
