// The hosted landing page of a dynamic code that is not a plain redirect (vcard, links, app,
// event), built from the code's destination object and landing_config, and the actions a visitor
// can take on it. Called by the redirect listener (server/redirect/handler.ts), which serves the
// page as the scan and records each action; other answers of the redirect (tracking-pixel
// interstitials, GS1 link pages) are meant to build on the same shell (./html.ts).
//
// Every action is a link to the code's own URL with `?qr_action=<name>` (and `&i=<n>` for a link
// of a links page): the redirect records it, then answers the file or a 302 to the target. A
// target URL is re-read through the same normaliser as destinations, so only http(s) leaves.
import type { LandingConfigData, PageLanguage } from '../qr-codes/landing-config.js';
import type { AppData, EventData, LandingType, LinksData, VcardData } from '../qr-codes/types.js';
import { isLandingType } from '../qr-codes/types.js';
import { telNumber } from '../qr-codes/payload.js';
import { httpUrlOrNull } from '../schemas/http-url.js';
import { escapeHtml } from '../http-common/html.js';
import { safeImage, shell, themeOf, type BuiltPage } from './html.js';
import { icsFile, vcardFile, zonedTimeToUtc } from './files.js';
import { WORDS, type PageWords } from './i18n.js';
import { iconSprite, iconUse, isLinkIcon } from './icons.js';

export const ACTIONS = ['vcard', 'ics', 'link', 'app_store', 'play_store', 'website'] as const;
type LandingAction = (typeof ACTIONS)[number];

export interface LandingEntry {
  type: LandingType;
  destination: Record<string, unknown>;
  config: LandingConfigData;
  brandKit: Record<string, unknown>;
  /** Identifies the code in files (the event's UID). */
  uid: string;
  /** Built pages by language, kept with the cached code (a change of the code replaces the entry). */
  pages: Map<PageLanguage, BuiltPage>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The landing entry of a stored code, or null when its type has no page (url, static types). */
export function landingEntryOf(row: {
  type: string;
  destination: unknown;
  landing_config: unknown;
  brand_kit: unknown;
  uid: string;
}): LandingEntry | null {
  if (!isLandingType(row.type) || !isObj(row.destination)) return null;
  return {
    type: row.type,
    destination: row.destination,
    config: (isObj(row.landing_config) ? row.landing_config : {}) as LandingConfigData,
    brandKit: isObj(row.brand_kit) ? row.brand_kit : {},
    uid: row.uid,
    pages: new Map(),
  };
}

const action = (name: LandingAction, i?: number): string => `?qr_action=${name}${i === undefined ? '' : `&amp;i=${i}`}`;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function words(entry: LandingEntry, lang: PageLanguage): PageWords {
  const own = entry.config.button_labels ?? {};
  const base = WORDS[lang];
  const out = { ...base };
  for (const k of ['save_contact', 'add_to_calendar', 'app_store', 'play_store', 'open_website'] as const) {
    if (typeof own[k] === 'string' && own[k]) out[k] = own[k];
  }
  return out;
}

function button(href: string, label: string, alt = false): string {
  return `<a class="btn${alt ? ' alt' : ''}" href="${href}">${escapeHtml(label)}</a>`;
}

function heading(title: string, description: string | undefined, image: string | null): string {
  const img = image ? `<img class="avatar" src="${image}" alt="">\n` : '';
  const desc = description ? `<p class="lead">${escapeHtml(description)}</p>\n` : '';
  return `${img}<h1>${escapeHtml(title)}</h1>\n${desc}`;
}

function vcardBody(d: VcardData, c: LandingConfigData, w: PageWords): string {
  const lines: string[] = [];
  const subtitle = [d.title, d.organization].filter(Boolean).join(' · ');
  lines.push(heading(c.title ?? d.name, c.description ?? (subtitle || undefined), safeImage(d.photo)));
  lines.push(button(action('vcard'), w.save_contact));
  const facts: string[] = [];
  for (const p of d.phones ?? []) {
    facts.push(
      `<dt>${escapeHtml(w.call)}</dt><dd><a href="tel:${escapeHtml(telNumber(str(p.number)))}">${escapeHtml(str(p.number))}</a></dd>`,
    );
  }
  for (const e of d.emails ?? []) {
    facts.push(
      `<dt>${escapeHtml(w.email)}</dt><dd><a href="mailto:${encodeURIComponent(str(e.address)).replace(/%40/g, '@')}">${escapeHtml(str(e.address))}</a></dd>`,
    );
  }
  if (httpUrlOrNull(d.website)) {
    facts.push(
      `<dt>${escapeHtml(w.website)}</dt><dd><a href="${action('website')}">${escapeHtml(str(d.website))}</a></dd>`,
    );
  }
  if (isObj(d.address)) {
    const a = d.address;
    const parts = [a.street, [a.postal_code, a.city].filter(Boolean).join(' '), a.region, a.country].filter(Boolean);
    if (parts.length)
      facts.push(`<dt>${escapeHtml(w.address)}</dt><dd>${parts.map((p) => escapeHtml(str(p))).join('<br>')}</dd>`);
  }
  if (facts.length) lines.push(`<h2>${escapeHtml(w.contact)}</h2>\n<dl>${facts.join('\n')}</dl>`);
  if (d.note) lines.push(`<p>${escapeHtml(d.note)}</p>`);
  return lines.join('\n');
}

function linksBody(d: LinksData, c: LandingConfigData, w: PageWords): string {
  const icons: Parameters<typeof iconUse>[0][] = [];
  const items = (Array.isArray(d.links) ? d.links : [])
    .map((l, i) => {
      if (!httpUrlOrNull(l.url)) return '';
      if (!isLinkIcon(l.icon)) return `<li>${button(action('link', i), str(l.label), true)}</li>`;
      icons.push(l.icon);
      return `<li><a class="btn alt" href="${action('link', i)}">${iconUse(l.icon)}${escapeHtml(str(l.label))}</a></li>`;
    })
    .filter(Boolean);
  return `${iconSprite(icons)}${heading(c.title ?? d.title, c.description ?? d.description, safeImage(d.avatar))}<nav aria-label="${escapeHtml(w.links)}"><ul>\n${items.join('\n')}\n</ul></nav>`;
}

function appBody(d: AppData, c: LandingConfigData, w: PageWords): string {
  const out = [heading(c.title ?? d.name, c.description ?? d.description, null)];
  if (httpUrlOrNull(d.app_store_url)) out.push(button(action('app_store'), w.app_store));
  if (httpUrlOrNull(d.play_store_url)) out.push(button(action('play_store'), w.play_store));
  if (httpUrlOrNull(d.fallback_url)) out.push(button(action('website'), w.open_website, true));
  return out.join('\n');
}

function eventBody(d: EventData, c: LandingConfigData, w: PageWords, lang: PageLanguage): string {
  const when = (local: string): string => {
    try {
      return new Intl.DateTimeFormat(lang, { dateStyle: 'full', timeStyle: 'short', timeZone: d.timezone }).format(
        zonedTimeToUtc(local, d.timezone),
      );
    } catch {
      return local;
    }
  };
  const facts = [
    `<dt>${escapeHtml(w.starts)}</dt><dd>${escapeHtml(when(d.start))}</dd>`,
    `<dt>${escapeHtml(w.ends)}</dt><dd>${escapeHtml(when(d.end))}</dd>`,
  ];
  if (d.location) facts.push(`<dt>${escapeHtml(w.where)}</dt><dd>${escapeHtml(d.location)}</dd>`);
  const out = [heading(c.title ?? d.title, c.description ?? d.description, null), `<dl>${facts.join('\n')}</dl>`];
  out.push(button(action('ics'), w.add_to_calendar));
  if (httpUrlOrNull(d.url)) out.push(button(action('website'), w.open_website, true));
  return out.join('\n');
}

/** The page in a language, built once per cached code and language. */
export function landingPage(entry: LandingEntry, lang: PageLanguage): BuiltPage {
  const cached = entry.pages.get(lang);
  if (cached) return cached;
  const c = entry.config;
  const w = words(entry, lang);
  const d = entry.destination;
  let body: string;
  let title: string;
  switch (entry.type) {
    case 'vcard':
      body = vcardBody(d as unknown as VcardData, c, w);
      title = c.title ?? str(d.name);
      break;
    case 'links':
      body = linksBody(d as unknown as LinksData, c, w);
      title = c.title ?? str(d.title);
      break;
    case 'app':
      body = appBody(d as unknown as AppData, c, w);
      title = c.title ?? str(d.name);
      break;
    case 'event':
      body = eventBody(d as unknown as EventData, c, w, lang);
      title = c.title ?? str(d.title);
      break;
  }
  const kitColours = isObj(entry.brandKit.colors) ? entry.brandKit.colors : undefined;
  const page = shell({
    lang,
    title,
    theme: themeOf(isObj(c.theme) ? c.theme : undefined, kitColours),
    logo: safeImage(c.logo) ?? safeImage(entry.brandKit.logo),
    body,
  });
  entry.pages.set(lang, page);
  return page;
}

export type ActionAnswer =
  { kind: 'redirect'; url: string } | { kind: 'file'; body: Buffer; contentType: string; filename: string };

/** What an action answers: the file or where it sends; null when the page offers no such action. */
export function landingAction(entry: LandingEntry, name: string, index: number, now: Date): ActionAnswer | null {
  const d = entry.destination;
  const to = (v: unknown): ActionAnswer | null => {
    const url = httpUrlOrNull(v);
    return url ? { kind: 'redirect', url } : null;
  };
  switch (`${entry.type}:${name}`) {
    case 'vcard:vcard':
      return {
        kind: 'file',
        body: Buffer.from(vcardFile(d as unknown as VcardData)),
        contentType: 'text/vcard; charset=utf-8',
        filename: 'contact.vcf',
      };
    case 'vcard:website':
      return to(d.website);
    case 'links:link': {
      const links = Array.isArray(d.links) ? (d.links as { url?: unknown }[]) : [];
      return Number.isInteger(index) && index >= 0 && index < links.length ? to(links[index]?.url) : null;
    }
    case 'app:app_store':
      return to(d.app_store_url);
    case 'app:play_store':
      return to(d.play_store_url);
    case 'app:website':
      return to(d.fallback_url);
    case 'event:ics':
      return {
        kind: 'file',
        body: Buffer.from(icsFile(d as unknown as EventData, entry.uid, now)),
        contentType: 'text/calendar; charset=utf-8',
        filename: 'event.ics',
      };
    case 'event:website':
      return to(d.url);
    default:
      return null;
  }
}

/** An app code sends iOS and Android visitors straight to their store; null: show the page. */
export function storeFor(entry: LandingEntry, os: string): string | null {
  if (entry.type !== 'app') return null;
  const o = os.toLowerCase();
  if (o === 'ios') return httpUrlOrNull(entry.destination.app_store_url);
  if (o === 'android') return httpUrlOrNull(entry.destination.play_store_url);
  return null;
}
