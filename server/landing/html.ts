// The pieces every hosted page is built from: escaping, the themed stylesheet and the document
// shell with its Content-Security-Policy. Pages are plain server-side HTML: no script, no
// third-party asset, images only as data: URIs. The stylesheet is allowed by its hash, so the
// policy stays strict although each brand's colours make its own stylesheet.
import { escapeHtml } from '../http-common/html.js';
import { createHash } from 'node:crypto';

const COLOUR = /^#[0-9A-Fa-f]{6}$/;
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

/** A colour read back from storage: used only when it is exactly #rrggbb (nothing can leave the CSS value). */
function safeColour(v: unknown): string | null {
  return typeof v === 'string' && COLOUR.test(v) ? v.toLowerCase() : null;
}

/** An image read back from storage: only a base64 data: URI of a raster type (never SVG, never a URL). */
export function safeImage(v: unknown): string | null {
  return typeof v === 'string' && v.length <= 400_000 && DATA_IMAGE.test(v) ? v : null;
}

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/** Black or white, whichever reads better on the colour (WCAG contrast). */
function textOn(bg: string): string {
  return contrast(bg, '#000000') >= contrast(bg, '#ffffff') ? '#000000' : '#ffffff';
}

export interface Theme {
  primary: string;
  background: string;
  text: string;
}

const DEFAULT_THEME: Theme = { primary: '#0b57d0', background: '#f6f6f4', text: '#1a1a1a' };

/**
 * The page's colours: landing_config.theme, else the brand kit's colours, else the defaults. A text
 * colour that would not read on the background (contrast under 4.5) is replaced by black or white.
 */
export function themeOf(
  theme: Record<string, unknown> | undefined,
  kitColours: Record<string, unknown> | undefined,
): Theme {
  const pick = (own: unknown, kit: unknown, fallback: string) => safeColour(own) ?? safeColour(kit) ?? fallback;
  const t = theme ?? {};
  const k = kitColours ?? {};
  const background = pick(t.background_color, k.background, DEFAULT_THEME.background);
  let text = pick(t.text_color, k.text, DEFAULT_THEME.text);
  if (contrast(text, background) < 4.5) text = textOn(background);
  let primary = pick(t.primary_color, k.primary, DEFAULT_THEME.primary);
  // Links are drawn in the primary colour on the card (white): keep them readable.
  if (contrast(primary, '#ffffff') < 4.5) primary = DEFAULT_THEME.primary;
  return { primary, background, text };
}

function stylesheet(t: Theme): string {
  const onPrimary = textOn(t.primary);
  return `*{box-sizing:border-box}body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:${t.text};background:${t.background}}
main{max-width:30rem;margin:0 auto;padding:2rem 1rem 3rem}
.card{background:#fff;color:#1a1a1a;border-radius:.75rem;padding:1.5rem;box-shadow:0 1px 3px #0003;overflow-wrap:anywhere}
header{text-align:center;margin-bottom:1rem}header img{max-width:8rem;max-height:4rem}
.avatar{width:6rem;height:6rem;border-radius:50%;object-fit:cover;display:block;margin:0 auto 1rem}
h1{font-size:1.5rem;margin:0 0 .5rem;text-align:center}h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
p{margin:.25rem 0 .75rem;white-space:pre-line}.lead{text-align:center}
a{color:${t.primary}}ul{list-style:none;padding:0;margin:0}
.btn{display:block;text-align:center;text-decoration:none;font-weight:600;margin:.75rem 0;padding:.8rem 1rem;border-radius:.5rem;background:${t.primary};color:${onPrimary};border:2px solid ${t.primary}}
.btn.alt{background:#fff;color:${t.primary}}
.icon{width:1.25em;height:1.25em;vertical-align:-.25em;margin-right:.5rem;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round}.sprite{position:absolute}
dl{margin:0}dt{font-weight:600;margin-top:.75rem}dd{margin:0;overflow-wrap:anywhere}
a:focus,.btn:focus{outline:3px solid #f9ab00;outline-offset:2px}`;
}

export interface ShellInput {
  lang: string;
  title: string;
  theme: Theme;
  logo: string | null;
  body: string;
}

export interface BuiltPage {
  html: Buffer;
  /** The page's Content-Security-Policy: its stylesheet by hash, images from data: only, nothing else. */
  csp: string;
}

/** The document: noindex, the themed stylesheet (allowed by its hash), the logo, the body. */
export function shell(p: ShellInput): BuiltPage {
  const css = stylesheet(p.theme);
  const hash = createHash('sha256').update(css).digest('base64');
  const logo = p.logo ? `<header><img src="${p.logo}" alt=""></header>\n` : '';
  const html = `<!doctype html>
<html lang="${escapeHtml(p.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(p.title)}</title>
<style>${css}</style>
</head>
<body>
<main>
${logo}<div class="card">
${p.body}
</div>
</main>
</body>
</html>
`;
  return {
    html: Buffer.from(html),
    csp: `default-src 'none'; style-src 'sha256-${hash}'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`,
  };
}
