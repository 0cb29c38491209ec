// The resolution of a request's levels (server/qr-codes/gs1-links.ts): each level's chain is resolved
// once when its GTIN's codes are read, and a request uses it only while it is exactly the levels
// that answer; otherwise the levels that answer at the request's time are merged then. Both must
// give what merging the answering levels gives.
import { expect } from 'chai';
import {
  byDepth,
  chainOf,
  choiceTables,
  chooseLink,
  gs1Unavailable,
  levelsFor,
  mergeLinks,
  resolveNow,
  type Gs1Availability,
  type Gs1Chain,
  type Gs1Level,
} from '../../server/qr-codes/gs1-links.js';
import type { Gs1Key } from '../../server/qr-codes/gs1.js';
import type { Schedule } from '../../server/qr-codes/routing.js';

type Level = Gs1Level & Gs1Availability & { name: string; chain: Gs1Chain<Level> };

const GTIN = '09506000134352';
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

function level(name: string, key: Partial<Gs1Key>, availability: Partial<Gs1Availability> = {}): Level {
  return {
    name,
    key: { gtin: GTIN, ...key },
    links: [
      { link_type: 'gs1:pip', href: `https://example.com/${name}`, title: name, default: true },
      {
        link_type: `https://gs1.org/voc/${name === 'product' ? 'recipeInfo' : 'instructions'}`,
        href: `https://example.com/${name}/more`,
        title: `${name} more`,
      },
    ],
    description: `${name} description`,
    dateBegin: null,
    expireAt: null,
    schedule: null,
    ...availability,
    chain: null as unknown as Gs1Chain<Level>,
  };
}

/** The levels as the cache keeps them: least specific first, each with its chain. */
function prepared(levels: Level[]): Level[] {
  const all = byDepth(levels);
  for (const l of all) l.chain = chainOf(l, all);
  return all;
}

/** What merging the levels that answer at `at` gives: the resolution a request must get. */
function expected(covering: Level[], at: number) {
  const levels = covering.filter((l) => gs1Unavailable(l, new Date(at)) === null);
  return { names: levels.map((l) => l.name), links: mergeLinks(levels), description: levels.at(-1)?.description };
}

function resolved(covering: Level[], at: number) {
  const r = resolveNow(covering, new Date(at));
  return r && { names: r.levels.map((l) => l.name), links: r.links, description: r.description };
}

describe('GS1 resolution: chains resolved once, levels that answer now', () => {
  it('sorts levels least specific first and gives each the chain of its ancestors, merged', () => {
    const all = prepared([
      level('serial', { lot: 'L1', serial: 'S1' }),
      level('lot', { lot: 'L1' }),
      level('product', {}),
    ]);
    expect(all.map((l) => l.name)).to.deep.equal(['product', 'lot', 'serial']);
    expect(all[2].chain.levels.map((l) => l.name)).to.deep.equal(['product', 'lot', 'serial']);
    expect(all[1].chain.levels.map((l) => l.name)).to.deep.equal(['product', 'lot']);
    expect(all[2].chain.links).to.deep.equal(mergeLinks(all));
    // The serial's pip replaces the lot's and the product's; the product's recipes stay.
    expect(all[2].chain.links.map((l) => `${l.link_type} ${l.title}`)).to.deep.equal([
      'gs1:recipeInfo product more',
      'gs1:pip serial',
      'gs1:instructions serial more',
    ]);
    expect(all[2].chain.description).to.equal('serial description');
    expect(resolveNow(levelsFor(all, { gtin: GTIN, lot: 'L1', serial: 'S1' }), new Date(NOW))).to.equal(all[2].chain);
  });

  it('leaves out a level once its expire_at has passed, and one not begun, though the chain was resolved before', () => {
    const all = prepared([
      level('product', {}),
      level('lot', { lot: 'L1' }, { expireAt: new Date(NOW + 60_000) }),
      level('serial', { lot: 'L1', serial: 'S1' }, { dateBegin: new Date(NOW + 30_000) }),
    ]);
    const covering = levelsFor(all, { gtin: GTIN, lot: 'L1', serial: 'S1' });
    for (const at of [NOW - 1, NOW, NOW + 30_000, NOW + 59_999, NOW + 60_000, NOW + 3_600_000]) {
      expect(resolved(covering, at), `at +${at - NOW} ms`).to.deep.equal(expected(covering, at));
    }
    expect(resolved(covering, NOW)!.names).to.deep.equal(['product', 'lot']);
    expect(resolved(covering, NOW + 30_000)!.names).to.deep.equal(['product', 'lot', 'serial']);
    expect(resolved(covering, NOW + 60_000)!.names).to.deep.equal(['product', 'serial']);
  });

  it('checks a schedule at the request time, and is null when no level answers', () => {
    // Open from 12:00 to 13:00 (UTC) every day: NOW is 12:00, two hours later it is closed.
    const schedule: Schedule = {
      enabled: true,
      timezone: 'UTC',
      windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: 12 * 60, end: 13 * 60 }],
      fallback: null,
    };
    const all = prepared([level('product', {}, { schedule }), level('lot', { lot: 'L1' })]);
    const covering = levelsFor(all, { gtin: GTIN, lot: 'L1' });
    expect(resolved(covering, NOW)!.names).to.deep.equal(['product', 'lot']);
    expect(resolved(covering, NOW + 2 * 3_600_000)!.names).to.deep.equal(['lot']);
    const alone = prepared([level('product', {}, { schedule })]);
    expect(resolveNow(alone, new Date(NOW + 2 * 3_600_000))).to.equal(null);
  });

  it('merges every level that covers a request when no one chain holds them all (a lot and a serial without it)', () => {
    const all = prepared([level('product', {}), level('lot', { lot: 'L1' }), level('serial', { serial: 'S1' })]);
    const covering = levelsFor(all, { gtin: GTIN, lot: 'L1', serial: 'S1' });
    expect(covering.map((l) => l.name)).to.deep.equal(['product', 'lot', 'serial']);
    expect(covering[2].chain.levels.map((l) => l.name)).to.deep.equal(['product', 'serial']);
    expect(resolved(covering, NOW)).to.deep.equal(expected(covering, NOW));
    expect(resolved(covering, NOW)!.names).to.deep.equal(['product', 'lot', 'serial']);
  });
});

describe('GS1 link choice: tables worked out with the links, the request read once', () => {
  const links = mergeLinks([
    {
      key: { gtin: GTIN },
      links: [
        { link_type: 'gs1:pip', href: 'https://example.com/', title: 'any', default: true },
        { link_type: 'gs1:pip', href: 'https://example.com/de', title: 'de', hreflang: ['DE'], default: true },
        { link_type: 'gs1:pip', href: 'https://example.com/fr', title: 'fr', hreflang: ['fr-CA'], default: true },
        { link_type: 'https://gs1.org/voc/recipeInfo', href: 'https://example.com/r/en', title: 'r', hreflang: ['en'] },
        { link_type: 'gs1:recipeInfo', href: 'https://example.com/r/x', title: 'r', context: ['x'] },
      ],
    },
  ]);
  const tables = choiceTables(links);
  const pick = (acceptLanguage: string | undefined, linkType: string | null = null, context: string | null = null) => {
    const c = chooseLink(tables, { linkType, wantsLinkset: false, acceptLanguage, context });
    return c.kind === 'redirect' ? c.link.href : c.kind;
  };

  it('holds the defaults, the default without hreflang, and the links of each link type (as CURIEs)', () => {
    expect(tables.defaults.map((l) => l.title)).to.deep.equal(['any', 'de', 'fr']);
    expect(tables.byLanguage.map((l) => l.title)).to.deep.equal(['de', 'fr']);
    expect(tables.plainDefault?.title).to.equal('any');
    expect(tables.defaultPrimaryTags).to.deep.equal(['de', 'fr']);
    expect([...tables.byType.keys()]).to.deep.equal(['gs1:pip', 'gs1:recipeInfo']);
  });

  it('takes Accept-Language by q (best first, ties in order), case-insensitively, q=0 and * left out', () => {
    expect(pick('de')).to.equal('https://example.com/de');
    expect(pick('de-AT')).to.equal('https://example.com/de'); // less well, but the only fit
    expect(pick('fr')).to.equal('https://example.com/fr'); // "fr" accepts "fr-CA"
    expect(pick('de;q=0.5, fr-ca')).to.equal('https://example.com/fr'); // out of order: sorted by q
    expect(pick('fr-CA;q=0.5,de;q=0.5')).to.equal('https://example.com/fr'); // a tie keeps the header's order
    expect(pick('de;q=0, fr;q=0.1')).to.equal('https://example.com/fr');
    expect(pick('de;q=0')).to.equal('https://example.com/');
    expect(pick('*, it')).to.equal('https://example.com/');
    expect(pick(' DE ; q=1 ')).to.equal('https://example.com/de');
    expect(pick('de;level=1;q=0.9,fr;q=0.95')).to.equal('https://example.com/fr');
    expect(pick('de;q=abc,fr;q=0.1')).to.equal('https://example.com/fr'); // a q that is no number drops its range
    expect(pick(undefined)).to.equal('https://example.com/');
    expect(pick('en-GB,en;q=0.9')).to.equal('https://example.com/'); // no default's language in it: not parsed
    expect(pick('en-GB,FR;q=0.9')).to.equal('https://example.com/fr');
  });

  it('chooses among the links of a link type by context, then language, and says when none fits', () => {
    expect(pick('en', 'https://ref.gs1.org/voc/recipeInfo')).to.equal('https://example.com/r/en');
    expect(pick('en', 'gs1:recipeInfo', 'x')).to.equal('https://example.com/r/x');
    expect(pick('it', 'gs1:recipeInfo')).to.equal('https://example.com/r/x'); // no language fits: the one without hreflang
    expect(pick('en', 'gs1:epil')).to.equal('no_link');
    expect(pick(undefined, 'gs1:defaultLinkMulti')).to.equal('multiple');
  });
});
