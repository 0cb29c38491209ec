// Logos: a data: URI only (PNG, JPEG or SVG, at most 256 KiB decoded), never a URL, so a render
// never touches the network. SVG logos are sanitised: scripts, event handlers, foreign objects,
// DTDs and every reference outside the document (other than embedded PNG/JPEG data) are removed,
// and what remains must hold none of them, else the logo is refused.
import { ApiError } from '../errors.js';
import { LOGO_MAX_BYTES } from './style.js';

type LogoMime = 'image/png' | 'image/jpeg' | 'image/svg+xml';

export interface Logo {
  mime: LogoMime;
  data: Buffer;
  /** Intrinsic size (pixels, or the SVG's viewBox units), for the aspect ratio. */
  width: number;
  height: number;
}

const FIELD = 'config.image';

function refuse(message: string): never {
  throw ApiError.field(FIELD, message);
}

/** Removes what may run or fetch from an SVG; throws when something dangerous is left. */
export function sanitizeSvg(svg: string): string {
  let s = svg
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<\?(?!xml\s)[\s\S]*?\?>/g, '')
    .replace(/<!DOCTYPE[\s\S]*?(\[[\s\S]*?\])?\s*>/gi, '')
    .replace(/<script\b[^>]*\/>/gi, '')
    .replace(/<script\b[\s\S]*?<\/script\s*>/gi, '')
    .replace(/<foreignObject\b[^>]*\/>/gi, '')
    .replace(/<foreignObject\b[\s\S]*?<\/foreignObject\s*>/gi, '')
    .replace(/\s(on[a-z]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
  // References: only fragment links and embedded PNG/JPEG stay.
  s = s.replace(/\s((?:xlink:)?href)\s*=\s*("([^"]*)"|'([^']*)')/gi, (all, _attr, _q, d1, d2) => {
    const v = String(d1 ?? d2 ?? '').trim();
    return v.startsWith('#') || /^data:image\/(png|jpeg);base64,[A-Za-z0-9+/=\s]*$/i.test(v) ? all : '';
  });
  s = s.replace(/url\(\s*(['"]?)(?!#)[^)]*\)/gi, 'none');
  const left =
    /<script|<foreignObject|<!ENTITY|<!DOCTYPE|javascript:|@import|<iframe|<embed|<object|\son[a-z]+\s*=/i.exec(s);
  if (left) refuse(`The SVG logo holds content that is not allowed (${left[0].trim()}).`);
  if (!/<svg[\s>]/i.test(s)) refuse('The SVG logo has no <svg> element.');
  return s;
}

function pngSize(b: Buffer): [number, number] | null {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

function jpegSize(b: Buffer): [number, number] | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    const len = b.readUInt16BE(i + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return [b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)];
    }
    i += 2 + len;
  }
  return null;
}

function svgSize(svg: string): [number, number] | null {
  const root = /<svg\b[^>]*>/i.exec(svg)?.[0] ?? '';
  const vb = /viewBox\s*=\s*["']\s*[-\d.e]+[\s,]+[-\d.e]+[\s,]+([\d.e]+)[\s,]+([\d.e]+)\s*["']/i.exec(root);
  if (vb) return [Number(vb[1]), Number(vb[2])];
  const w = /\swidth\s*=\s*["']\s*([\d.]+)(px)?\s*["']/i.exec(root);
  const h = /\sheight\s*=\s*["']\s*([\d.]+)(px)?\s*["']/i.exec(root);
  if (w && h) return [Number(w[1]), Number(h[1])];
  return null;
}

/** The logo of a data: URI, checked and (SVG) sanitised; throws a 422 on config.image otherwise. */
export function parseLogo(uri: string): Logo {
  const m = /^data:(image\/(?:png|jpeg|svg\+xml))(;charset=[A-Za-z0-9_-]+)?(;base64)?,(.*)$/s.exec(uri);
  if (!m) refuse('Must be a data: URI of a PNG, JPEG or SVG image.');
  const mime = m[1] as LogoMime;
  let data: Buffer;
  if (m[3]) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(m[4])) refuse('The base64 data is malformed.');
    data = Buffer.from(m[4], 'base64');
  } else {
    try {
      data = Buffer.from(decodeURIComponent(m[4]), 'utf8');
    } catch {
      refuse('The URI-encoded data is malformed.');
    }
  }
  if (data.length === 0) refuse('The image is empty.');
  if (data.length > LOGO_MAX_BYTES) refuse(`The image is larger than ${LOGO_MAX_BYTES / 1024} KiB.`);
  let size: [number, number] | null;
  if (mime === 'image/svg+xml') {
    const clean = sanitizeSvg(data.toString('utf8'));
    data = Buffer.from(clean, 'utf8');
    size = svgSize(clean) ?? [1, 1];
  } else {
    size = mime === 'image/png' ? pngSize(data) : jpegSize(data);
    if (!size) refuse(`The data is not a ${mime === 'image/png' ? 'PNG' : 'JPEG'} image.`);
  }
  const [width, height] = size;
  if (!(width > 0 && height > 0)) refuse('The image has no size.');
  return { mime, data, width, height };
}

/** The logo as a data: URI again (the sanitised SVG included), for the SVG writer. */
export function logoDataUri(logo: Logo): string {
  return `data:${logo.mime};base64,${logo.data.toString('base64')}`;
}
