// The links of a gs1 code and how a GS1-Conformant resolver (GS1-Conformant Resolver standard
// 1.2.0) chooses among them: link types from the GS1 Web Vocabulary (the list the project ships,
// ./gs1-link-types.json), exactly one default link per level (optionally one more per language),
// lot and serial levels that override the GTIN's links type by type and inherit the rest, the RFC
// 9264 linkset in the GS1 form, and the choice of a link for a request (link type, language,
// context). Pure functions: the redirect (server/redirect/gs1.ts) answers with what they return.
import { readFileSync } from 'node:fs';
import { attributeQuery, keyPath, type Gs1Key } from './gs1.js';
import { inSchedule, type Schedule } from './routing.js';

const vocabulary = JSON.parse(readFileSync(new URL('./gs1-link-types.json', import.meta.url), 'utf8')) as {
  linkTypes: Record<string, string>;
};
/** Every link type of the shipped vocabulary, as CURIEs (`gs1:pip`). */
const LINK_TYPES: ReadonlySet<string> = new Set(Object.keys(vocabulary.linkTypes).map((n) => `gs1:${n}`));
/** The link types a link may have (the vocabulary less the derived ones), with their titles, in the vocabulary's order. */
export function settableLinkTypes(): { link_type: string; title: string }[] {
  return Object.entries(vocabulary.linkTypes)
    .map(([name, title]) => ({ link_type: `gs1:${name}`, title }))
    .filter((t) => !DERIVED.has(t.link_type));
}

/** Link types a code may not set itself: the resolver derives them (default links, the linkset). */
const DERIVED = new Set(['gs1:defaultLink', 'gs1:defaultLinkMulti', 'gs1:handledBy']);

export const GS1_VOC = 'https://gs1.org/voc/';
const GS1_REF_VOC = 'https://ref.gs1.org/voc/';
export const LINKSET_CONTEXT = 'https://ref.gs1.org/standards/resolver/linkset-context';

/** One link of a gs1 code, as stored. */
export interface Gs1Link {
  link_type: string;
  href: string;
  title: string;
  hreflang?: string[];
  type?: string;
  context?: string[];
  /** The default link of this level (with hreflang: the default for those languages). */
  default?: boolean;
}

/** A gs1 code's destination, as stored (gtin as GTIN-14). */
export interface Gs1Destination {
  gtin: string;
  cpv?: string;
  lot?: string;
  serial?: string;
  data?: Record<string, string>;
  description?: string;
  links: Gs1Link[];
}

export function keyOf(d: Gs1Destination): Gs1Key {
  const key: Gs1Key = { gtin: d.gtin };
  if (d.cpv !== undefined) key.cpv = d.cpv;
  if (d.lot !== undefined) key.lot = d.lot;
  if (d.serial !== undefined) key.serial = d.serial;
  return key;
}

/** Whether a destination is the GTIN's own level (no key qualifier). */
export const isGtinLevel = (d: Gs1Key): boolean => d.cpv === undefined && d.lot === undefined && d.serial === undefined;

/** A link type as given (`gs1:pip`, `https://gs1.org/voc/pip`, `https://ref.gs1.org/voc/pip`) as a CURIE. */
export function linkTypeCurie(value: string): string {
  if (value.startsWith(GS1_VOC)) return `gs1:${value.slice(GS1_VOC.length)}`;
  if (value.startsWith(GS1_REF_VOC)) return `gs1:${value.slice(GS1_REF_VOC.length)}`;
  if (value.startsWith('http://gs1.org/voc/')) return `gs1:${value.slice('http://gs1.org/voc/'.length)}`;
  return value;
}

/**
 * The rules of a level's links that a schema cannot say: link types from the vocabulary (and not
 * the derived ones), at most one default without hreflang (exactly one at the GTIN level), at most
 * one default per language, no link repeated. Returns the problems by field (`destination.links…`).
 */
export function checkLinks(links: Gs1Link[], gtinLevel: boolean): [field: string, message: string][] {
  const errors: [string, string][] = [];
  const addError = (_: unknown, field: string, message: string) => errors.push([field, message]);
  let plainDefaults = 0;
  const langDefaults = new Map<string, number>();
  const seen = new Set<string>();
  links.forEach((l, i) => {
    const at = `destination.links.${i}`;
    const curie = linkTypeCurie(l.link_type);
    if (DERIVED.has(curie))
      addError(
        errors,
        `${at}.link_type`,
        `${curie} is derived by the resolver: give the link its descriptive type (e.g. gs1:pip) and set default: true.`,
      );
    else if (!LINK_TYPES.has(curie))
      addError(
        errors,
        `${at}.link_type`,
        `Unknown link type "${l.link_type}": use a link type of the GS1 Web Vocabulary, e.g. gs1:pip, gs1:recipeInfo, gs1:instructions (docs/gs1.md lists them).`,
      );
    const sig = `${curie} ${l.href} ${(l.hreflang ?? []).join(',')} ${(l.context ?? []).join(',')}`;
    if (seen.has(sig)) addError(errors, at, `Repeats an earlier link (same link type, href, hreflang and context).`);
    seen.add(sig);
    if (!l.default) return;
    if (!l.hreflang?.length) plainDefaults++;
    for (const lang of l.hreflang ?? []) {
      const n = (langDefaults.get(lang.toLowerCase()) ?? 0) + 1;
      langDefaults.set(lang.toLowerCase(), n);
      if (n === 2)
        addError(errors, 'destination.links', `Two default links for the language ${lang}: at most one per language.`);
    }
  });
  if (plainDefaults > 1)
    addError(
      errors,
      'destination.links',
      `${plainDefaults} links are the default (default: true without hreflang): exactly one is allowed.`,
    );
  else if (plainDefaults === 0 && gtinLevel)
    addError(
      errors,
      'destination.links',
      'A product (a GTIN without lot or serial) needs exactly one default link: set default: true on one link without hreflang.',
    );
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Resolution: the levels of a request, merged.

/** One level (a gs1 code) that matches a request, least specific first. */
export interface Gs1Level {
  key: Gs1Key;
  links: Gs1Link[];
  description?: string;
}

/** When a level answers: its code's date_begin, expire_at and schedule (status is the lookup's: active only). */
export interface Gs1Availability {
  dateBegin: Date | null;
  expireAt: Date | null;
  schedule: Schedule | null;
}

/** Why a level does not answer now, or null when it does (the same rules as a plain code's, routing.ts decide). */
export function gs1Unavailable(
  level: Gs1Availability,
  now: Date,
): 'not_started' | 'expired' | 'outside_schedule' | null {
  if (level.dateBegin && now < level.dateBegin) return 'not_started';
  if (level.expireAt && now >= level.expireAt) return 'expired';
  if (level.schedule && !inSchedule(level.schedule, now)) return 'outside_schedule';
  return null;
}

/** How specific a key is: the number of its qualifiers. */
const depth = (k: Gs1Key) =>
  (k.cpv !== undefined ? 1 : 0) + (k.lot !== undefined ? 1 : 0) + (k.serial !== undefined ? 1 : 0);

/** Whether a code's key is the request's or one of its ancestors (every qualifier it sets matches). */
function keyCovers(code: Gs1Key, request: Gs1Key): boolean {
  return (
    code.gtin === request.gtin &&
    (code.cpv === undefined || code.cpv === request.cpv) &&
    (code.lot === undefined || code.lot === request.lot) &&
    (code.serial === undefined || code.serial === request.serial)
  );
}

/** Levels least specific first (a GTIN before its lots, a lot before its serials): how the cache keeps them. */
export function byDepth<T extends Gs1Level>(levels: T[]): T[] {
  return levels.sort((a, b) => depth(a.key) - depth(b.key));
}

/** The levels among `all` (least specific first, byDepth) that cover the request, in that order. */
export function levelsFor<T extends Gs1Level>(all: T[], request: Gs1Key): T[] {
  return all.filter((l) => keyCovers(l.key, request));
}

/** What the levels that answer a request resolve to: their links merged, the description of the most specific. */
export interface Gs1Resolution<T extends Gs1Level = Gs1Level> {
  /** Least specific first; the last is the code that answered (the scan's). */
  levels: T[];
  links: Gs1Link[];
  description: string | undefined;
  /** What choosing among the links needs, worked out with them (choiceTables). */
  choices: Gs1Choices;
}

function resolutionOf<T extends Gs1Level>(levels: T[]): Gs1Resolution<T> {
  const links = mergeLinks(levels);
  return {
    levels,
    links,
    description: levels
      .map((l) => l.description)
      .filter(Boolean)
      .pop(),
    choices: choiceTables(links),
  };
}

/**
 * A level's chain: the level and those above it on its resolver (its ancestors among `scope`, least
 * specific first), resolved once when its GTIN's codes are read (the cache reads them again when one
 * changes), with the time in which every one of them answers: from the latest date_begin to the
 * earliest expire_at (ms). `scheduled` when one of them has a schedule (which only a request's time
 * can settle).
 */
export interface Gs1Chain<T extends Gs1Level = Gs1Level> extends Gs1Resolution<T> {
  from: number;
  until: number;
  scheduled: boolean;
}

export function chainOf<T extends Gs1Level & Gs1Availability>(level: T, scope: T[]): Gs1Chain<T> {
  const levels = levelsFor(scope, level.key);
  return {
    ...resolutionOf(levels),
    from: Math.max(-Infinity, ...levels.map((l) => l.dateBegin?.getTime() ?? -Infinity)),
    until: Math.min(Infinity, ...levels.map((l) => l.expireAt?.getTime() ?? Infinity)),
    scheduled: levels.some((l) => l.schedule !== null),
  };
}

/**
 * What a request resolves to now, from the levels that cover it (levelsFor): the chain of the most
 * specific when they are exactly that chain and all answer now (the usual case: no per-request
 * work); otherwise the levels that answer now, merged (a level not begun, expired or outside its
 * schedule is left out like a paused one: a lot's links fall back to the product's). null when
 * none answers.
 */
export function resolveNow<T extends Gs1Level & Gs1Availability & { chain: Gs1Chain<T> }>(
  covering: T[],
  now: Date,
): Gs1Resolution<T> | null {
  const chain = covering[covering.length - 1].chain;
  const t = now.getTime();
  if (chain.levels.length === covering.length && !chain.scheduled && t >= chain.from && t < chain.until) return chain;
  const levels = covering.filter((l) => gs1Unavailable(l, now) === null);
  return levels.length ? resolutionOf(levels) : null;
}

/**
 * The links of a request: each level's links replace those of the same link type from the levels
 * above it; a level's default (without hreflang) replaces the inherited default, and a language
 * default replaces the inherited default of that language.
 */
export function mergeLinks(levels: Gs1Level[]): Gs1Link[] {
  let out: Gs1Link[] = [];
  for (const level of levels) {
    const types = new Set(level.links.map((l) => linkTypeCurie(l.link_type)));
    const plainDefault = level.links.some((l) => l.default && !l.hreflang?.length);
    const langs = new Set(
      level.links.filter((l) => l.default).flatMap((l) => (l.hreflang ?? []).map((x) => x.toLowerCase())),
    );
    out = out
      .filter((l) => !types.has(linkTypeCurie(l.link_type)))
      .map((l) => {
        if (!l.default) return l;
        const drop = l.hreflang?.length ? l.hreflang.some((x) => langs.has(x.toLowerCase())) : plainDefault;
        return drop ? { ...l, default: false } : l;
      });
    out.push(...level.links.map((l) => ({ ...l, link_type: linkTypeCurie(l.link_type) })));
  }
  return out;
}

/**
 * Where a domain's Digital Link URIs start: `<origin>/<org-slug>` on a shared fallback origin (the
 * organization's path keeps organizations apart on one host), `https://<host>` on a custom domain.
 */
export function resolverStem(domain: { type: string; host: string; origin: string | null }, orgSlug: string): string {
  if (domain.type === 'fallback') {
    const origin = domain.origin ?? `http://${domain.host}`;
    return `${origin.endsWith('/') ? origin.replace(/\/+$/, '') : origin}/${orgSlug}`;
  }
  return `https://${domain.host}`;
}

/** A gs1 code's public URI: the stem, the key's path, its data attributes as the query string. */
export function gs1PublicUrl(stem: string, d: Gs1Destination): string {
  return `${stem}${keyPath(keyOf(d))}${attributeQuery(d.data)}`;
}

/** The URI of the linkset's anchor: the uncompressed Digital Link URI of the request's key on this resolver. */
export function anchorOf(stem: string, key: Gs1Key): string {
  return `${stem}${keyPath(key)}`;
}

const expand = (curie: string) => (curie.startsWith('gs1:') ? `${GS1_REF_VOC}${curie.slice(4)}` : curie);

function target(l: Gs1Link): Record<string, unknown> {
  const t: Record<string, unknown> = { href: l.href, title: l.title };
  if (l.type) t.type = l.type;
  if (l.hreflang?.length) t.hreflang = l.hreflang;
  if (l.context?.length) t.context = l.context;
  return t;
}

/**
 * The RFC 9264 linkset (application/linkset+json) in the GS1 form: one context object anchored at
 * the uncompressed URI, link types as full URIs of the GS1 vocabulary, each target with href,
 * title, and type, hreflang and context where given; the default links also under
 * gs1:defaultLink (and gs1:defaultLinkMulti when there are several).
 */
export function linksetOf(anchor: string, links: Gs1Link[], description?: string): Record<string, unknown> {
  const ctx: Record<string, unknown> = { anchor };
  if (description) ctx.description = description;
  const defaults = links.filter((l) => l.default);
  const plain = defaults.find((l) => !l.hreflang?.length);
  if (plain) ctx[expand('gs1:defaultLink')] = [target(plain)];
  if (defaults.length > 1) ctx[expand('gs1:defaultLinkMulti')] = defaults.map(target);
  for (const l of links) {
    const k = expand(l.link_type);
    ((ctx[k] ??= []) as unknown[]).push(target(l));
  }
  return { linkset: [ctx] };
}

// ---------------------------------------------------------------------------------------------
// The choice of a link for a request.

export type Choice =
  | { kind: 'redirect'; link: Gs1Link; served: string }
  | { kind: 'multiple'; links: Gs1Link[]; served: string }
  | { kind: 'linkset' }
  | { kind: 'no_link'; message: string };

/**
 * What choosing among a resolution's links needs that does not depend on the request, worked out
 * once with the links (a cached level's chain holds it): the default links (all, those per
 * language, the one without hreflang), the links of each link type, and each link's languages in
 * lower case.
 */
export interface Gs1Choices {
  defaults: Gs1Link[];
  byLanguage: Gs1Link[];
  plainDefault: Gs1Link | undefined;
  /**
   * The primary subtags (`de` of `de-CH`) of the default links' languages: a language range that
   * fits one of them shares its primary subtag, so an Accept-Language holding none of them cannot
   * change the default and is not parsed.
   */
  defaultPrimaryTags: string[];
  byType: ReadonlyMap<string, Gs1Link[]>;
  langs: ReadonlyMap<Gs1Link, string[]>;
}

export function choiceTables(links: Gs1Link[]): Gs1Choices {
  const defaults = links.filter((l) => l.default);
  const byType = new Map<string, Gs1Link[]>();
  for (const l of links) {
    const same = byType.get(l.link_type);
    if (same) same.push(l);
    else byType.set(l.link_type, [l]);
  }
  const byLanguage = defaults.filter((l) => l.hreflang?.length);
  const primary = byLanguage.flatMap((l) => l.hreflang!.map((x) => x.toLowerCase().split('-')[0]));
  return {
    defaults,
    byLanguage,
    plainDefault: defaults.find((l) => !l.hreflang?.length),
    defaultPrimaryTags: [...new Set(primary)],
    byType,
    langs: new Map(links.map((l) => [l, (l.hreflang ?? []).map((x) => x.toLowerCase())])),
  };
}

/** The language ranges of an Accept-Language header, best first (q=0 dropped), in one pass. */
function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const tags: string[] = [];
  const qs: number[] = [];
  let sorted = true;
  for (const part of header.split(',')) {
    const semi = part.indexOf(';');
    const tag = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    let q = 1;
    if (semi !== -1) {
      for (const param of part.slice(semi + 1).split(';')) {
        const p = param.trim();
        if (p.startsWith('q=')) {
          q = Number(p.slice(2));
          break;
        }
      }
    }
    if (!tag || tag === '*' || !(q > 0) || !Number.isFinite(q)) continue;
    if (qs.length && q > qs[qs.length - 1]) sorted = false;
    tags.push(tag);
    qs.push(q);
  }
  if (sorted) return tags;
  // Best q first; equal q in the header's order (a stable sort).
  return tags
    .map((tag, i) => ({ tag, q: qs[i], i }))
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag);
}

/** Whether an Accept-Language header holds one of the primary subtags anywhere (a cheap check before parsing it). */
function mayFit(header: string | undefined, primaryTags: string[]): boolean {
  if (!header) return false;
  const lower = header.toLowerCase();
  return primaryTags.some((t) => lower.includes(t));
}

/** How well a link's hreflang fits the accepted languages: lower is better; Infinity: not at all. */
function languageRank(langs: string[], accepted: string[]): number {
  if (!langs.length || !accepted.length) return Infinity;
  let best = Infinity;
  for (const h of langs) {
    for (let i = 0; i < accepted.length; i++) {
      const a = accepted[i];
      // "de" accepts "de" and "de-CH"; "de-CH" accepts "de-CH" and, less well, "de".
      const r = h === a ? 2 * i : h.startsWith(`${a}-`) || a.startsWith(`${h}-`) ? 2 * i + 1 : Infinity;
      if (r < best) best = r;
    }
  }
  return best;
}

/**
 * Narrows links of one type by the request: the context asked for, then the best-fitting language.
 * Links without hreflang are kept when no language fits.
 */
function narrow(c: Gs1Choices, links: Gs1Link[], accepted: string[], context: string | null): Gs1Link[] {
  let pool = links;
  if (context) {
    const inContext = pool.filter((l) => l.context?.includes(context));
    if (inContext.length) pool = inContext;
  }
  if (pool.length <= 1) return pool;
  const ranks = pool.map((l) => languageRank(c.langs.get(l)!, accepted));
  const best = Math.min(...ranks);
  if (best !== Infinity) return pool.filter((_, i) => ranks[i] === best);
  const plain = pool.filter((l) => !l.hreflang?.length);
  return plain.length ? plain : pool;
}

/**
 * The answer to a request for a key's links (`c`: their choiceTables). `linkType` is the query
 * parameter (null: absent), `wantsLinkset` whether Accept asks for application/linkset+json.
 */
export function chooseLink(
  c: Gs1Choices,
  req: { linkType: string | null; wantsLinkset: boolean; acceptLanguage: string | undefined; context: string | null },
): Choice {
  const asked = req.linkType === null ? null : linkTypeCurie(req.linkType);
  if (asked === 'linkset' || asked === 'all' || (asked === null && req.wantsLinkset)) return { kind: 'linkset' };
  if (asked === null || asked === 'gs1:defaultLink') {
    // Without a default per language, Accept-Language cannot change the choice: not read.
    let pick = c.plainDefault;
    if (c.byLanguage.length && mayFit(req.acceptLanguage, c.defaultPrimaryTags)) {
      const accepted = acceptedLanguages(req.acceptLanguage);
      const lang = narrow(c, c.byLanguage, accepted, null).filter(
        (l) => languageRank(c.langs.get(l)!, accepted) !== Infinity,
      );
      if (lang.length === 1) pick = lang[0];
    }
    if (!pick) return { kind: 'no_link', message: 'This item has no default link.' };
    return { kind: 'redirect', link: pick, served: pick.link_type };
  }
  if (asked === 'gs1:defaultLinkMulti') {
    const defaults = c.defaults;
    if (!defaults.length) return { kind: 'no_link', message: 'This item has no default link.' };
    return defaults.length === 1
      ? { kind: 'redirect', link: defaults[0], served: defaults[0].link_type }
      : { kind: 'multiple', links: defaults, served: asked };
  }
  const ofType = c.byType.get(asked);
  if (!ofType) return { kind: 'no_link', message: `No link of type ${req.linkType} for this item.` };
  const pool = narrow(c, ofType, acceptedLanguages(req.acceptLanguage), req.context);
  if (pool.length === 1) return { kind: 'redirect', link: pool[0], served: asked };
  return { kind: 'multiple', links: pool, served: asked };
}
