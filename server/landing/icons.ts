// The icons a link of a `links` page may show (LINK_ICONS in server/qr-codes/types.ts), drawn from
// Tabler Icons (@tabler/icons, MIT): one outline style for the services' brand marks and for the
// generic website, email and phone, read from the package once, at start. A page inlines the
// symbols it uses once (a sprite) and each link refers to its own with <use href="#…">: nothing is
// fetched (the page's CSP stays default-src 'none'), and fifty links with icons cost fifty short
// references rather than fifty copies of a path. Icons are decorative: the link's text names it,
// so every <svg> is aria-hidden and not focusable.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { LINK_ICONS } from '../qr-codes/types.js';

type LinkIcon = (typeof LINK_ICONS)[number];

/** Tabler's name of each icon. */
const TABLER: Record<LinkIcon, string> = {
  website: 'world',
  email: 'mail',
  phone: 'phone',
  facebook: 'brand-facebook',
  instagram: 'brand-instagram',
  x: 'brand-x',
  linkedin: 'brand-linkedin',
  youtube: 'brand-youtube',
  tiktok: 'brand-tiktok',
  github: 'brand-github',
  mastodon: 'brand-mastodon',
  whatsapp: 'brand-whatsapp',
  telegram: 'brand-telegram',
  spotify: 'brand-spotify',
};

const require = createRequire(import.meta.url);

/** The drawing of an icon: the elements inside Tabler's <svg>, less its invisible 24×24 frame. */
function drawing(name: string): string {
  const svg = readFileSync(require.resolve(`@tabler/icons/outline/${name}.svg`), 'utf8');
  const inner = /<svg[^>]*>([\s\S]*)<\/svg>/.exec(svg)?.[1];
  if (!inner) throw new Error(`@tabler/icons: ${name}.svg has no drawing`);
  return inner
    .replace(/<path stroke="none" d="M0 0h24v24H0z" fill="none"\s*\/>/, '')
    .replace(/\s*\n\s*/g, '')
    .trim();
}

const SYMBOLS = new Map<string, string>(
  LINK_ICONS.map((icon) => [icon, `<symbol id="i-${icon}" viewBox="0 0 24 24">${drawing(TABLER[icon])}</symbol>`]),
);

/** Whether a stored icon name is one the page can draw (anything else is drawn without an icon). */
export function isLinkIcon(name: unknown): name is LinkIcon {
  return typeof name === 'string' && SYMBOLS.has(name);
}

/** The reference a link shows its icon with. */
export function iconUse(icon: LinkIcon): string {
  return `<svg class="icon" aria-hidden="true" focusable="false"><use href="#i-${icon}"/></svg>`;
}

/** The symbols of the icons a page uses, once each, in a sprite that takes no room ('' when none). */
export function iconSprite(icons: Iterable<LinkIcon>): string {
  const used = [...new Set(icons)];
  if (!used.length) return '';
  return `<svg class="sprite" width="0" height="0" aria-hidden="true" focusable="false">${used.map((i) => SYMBOLS.get(i)).join('')}</svg>\n`;
}
