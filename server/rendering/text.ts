// The frame's text as path data, from the glyph outlines of DejaVu Sans Bold (Bitstream Vera
// licence, shipped by @fontsource/dejavu-sans) read with fontkit. Outlines rather than <text> make
// the three formats identical and need no font on the machine or the viewer's side. The font covers
// Latin scripts; other characters draw as the font's missing-glyph box.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';
import { LRUCache } from 'mnemonist';
import type { Box } from './paint.js';

const require = createRequire(import.meta.url);
const FONT_FILE = '@fontsource/dejavu-sans/files/dejavu-sans-latin-700-normal.woff';

let font: fontkit.Font | undefined;
function frameFont(): fontkit.Font {
  // Parsed once: the font is read-only data.
  font ??= fontkit.create(readFileSync(require.resolve(FONT_FILE))) as fontkit.Font;
  return font;
}

const r3 = (n: number) => String(Math.round(n * 1000) / 1000);

// Frames repeat (every code of a style, every page of an export): their outlines are kept.
const outlines = new LRUCache<string, string>(256);

/** `text` centred in `box` (scene units), as large as fits; '' for blank text. */
export function textPath(text: string, box: Box): string {
  if (!text.trim()) return '';
  const key = `${text}\u0000${box.x},${box.y},${box.w},${box.h}`;
  let d = outlines.get(key);
  if (d === undefined) {
    d = layoutText(text, box);
    outlines.set(key, d);
  }
  return d;
}

function layoutText(text: string, box: Box): string {
  const f = frameFont();
  const run = f.layout(text);
  let advance = 0;
  for (const p of run.positions) advance += p.xAdvance;
  const capHeight = f.ascent - 0.1 * f.unitsPerEm; // glyph height above the baseline, roughly
  const k = Math.min((box.h * 0.7) / capHeight, box.w / Math.max(advance, 1));
  const x0 = box.x + (box.w - advance * k) / 2;
  const baseline = box.y + (box.h + capHeight * k * 0.75) / 2;
  const out: string[] = [];
  let pen = 0;
  run.glyphs.forEach((glyph, i) => {
    const pos = run.positions[i];
    const gx = x0 + (pen + pos.xOffset) * k;
    const gy = baseline - pos.yOffset * k;
    for (const c of glyph.path.commands) {
      const a = c.args;
      const pt = (j: number) => `${r3(gx + a[j] * k)} ${r3(gy - a[j + 1] * k)}`;
      if (c.command === 'moveTo') out.push('M' + pt(0));
      else if (c.command === 'lineTo') out.push('L' + pt(0));
      else if (c.command === 'quadraticCurveTo') out.push('Q' + pt(0) + ' ' + pt(2));
      else if (c.command === 'bezierCurveTo') out.push('C' + pt(0) + ' ' + pt(2) + ' ' + pt(4));
      else if (c.command === 'closePath') out.push('Z');
    }
    pen += pos.xAdvance;
  });
  return out.join('');
}
