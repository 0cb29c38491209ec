// Demo data for `qrctl seed-demo --scans N`: an organization with brands and codes in Postgres
// (plain inserts into the sql/0002 tables) and N synthetic scans over the last 90 days written
// straight into ClickHouse in large batches. Distributions are shaped like real traffic: a few
// codes get most scans, traffic grows over the period with weekly and daily rhythms, visitors
// come back (a visitor keeps their country, device, language and network), and ~2% are bots.
// Deterministic for a given seed, so benchmark runs are comparable.
import { ulid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { syncFallbackDomains } from '../domains/fallback.js';
import { createOrganization } from '../organizations/service.js';
import { insertText, type ClickHouseHandle } from '../stores/clickhouse.js';
import type { ScanEvent as ScanEventRow } from './scan-event.js';

const DAY_MS = 86_400_000;

/** A generated scan, scanned_at in epoch milliseconds. */
export type ScanEvent = ScanEventRow<number>;

/** Writes events as one insert (JSONEachRow); for tests and small batches. */
export async function insertScanEvents(ch: ClickHouseHandle, events: ScanEvent[]): Promise<void> {
  if (!events.length) return;
  await insertText(ch.client, {
    table: `${ch.database}.scan_events`,
    body: events
      .map((e) =>
        JSON.stringify({ ...e, scanned_at: new Date(e.scanned_at).toISOString().slice(0, 23).replace('T', ' ') }),
      )
      .join('\n'),
    format: 'JSONEachRow',
    dedupToken: ulid(),
  });
}

// --- Postgres fixtures: brands and codes by plain inserts ---------------------------------------

/** The id of a shared fallback domain (created from FALLBACK_ORIGINS when missing). */
export async function fallbackDomainId(app: AppContext): Promise<number> {
  const find = () => app.db('domains').where({ type: 'fallback' }).whereNull('deleted_at').orderBy('id').first('id');
  let row = await find();
  if (!row) {
    await syncFallbackDomains(app.db, app.config.fallbackOrigins);
    row = await find();
  }
  if (!row) throw new Error('no fallback domain: set FALLBACK_ORIGINS');
  return Number(row.id);
}

export async function insertBrand(
  app: AppContext,
  org: OrgRecord,
  b: { name: string; slug: string },
): Promise<{ id: number; ulid: string }> {
  const [row] = await app
    .db('brands')
    .insert({ ulid: ulid(), org_id: org.id, name: b.name, slug: b.slug })
    .returning(['id', 'ulid']);
  return { id: Number(row.id), ulid: row.ulid };
}

export async function insertCode(
  app: AppContext,
  org: OrgRecord,
  c: { slug: string; name?: string | null; brandId?: number | null; domainId: number; destination?: string },
): Promise<{ id: number; ulid: string }> {
  const [row] = await app
    .db('qr_codes')
    .insert({
      ulid: ulid(),
      org_id: org.id,
      brand_id: c.brandId ?? null,
      domain_id: c.domainId,
      name: c.name ?? null,
      slug: `${org.slug}/${c.slug}`,
      destination: JSON.stringify(c.destination ?? `https://example.com/${c.slug}`),
    })
    .returning(['id', 'ulid']);
  return { id: Number(row.id), ulid: row.ulid };
}

// --- Synthetic traffic -----------------------------------------------------------------------

/** mulberry32: a small, fast, seedable PRNG (deterministic demo data). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from weighted items with one uniform draw (cumulative table, binary search). */
export function weighted<T>(items: [T, number][]): (u: number) => T {
  const cum: number[] = [];
  let total = 0;
  for (const [, w] of items) cum.push((total += w));
  return (u) => {
    const x = u * total;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return items[lo][0];
  };
}

interface CountryProfile {
  language: string;
  providers: [string, number, number][]; // name, asn, weight
}

const COUNTRIES: [string, number, CountryProfile][] = [
  [
    'US',
    24,
    {
      language: 'en',
      providers: [
        ['Verizon', 701, 4],
        ['AT&T', 7018, 4],
        ['T-Mobile US', 21928, 3],
        ['Comcast', 7922, 3],
      ],
    },
  ],
  [
    'DE',
    12,
    {
      language: 'de',
      providers: [
        ['Deutsche Telekom', 3320, 5],
        ['Vodafone Germany', 3209, 3],
        ['Telefonica Germany', 6805, 2],
      ],
    },
  ],
  [
    'GB',
    9,
    {
      language: 'en',
      providers: [
        ['BT', 2856, 3],
        ['Vodafone UK', 25135, 2],
        ['EE', 12576, 3],
        ['Virgin Media', 5089, 2],
      ],
    },
  ],
  [
    'FR',
    7,
    {
      language: 'fr',
      providers: [
        ['Orange', 3215, 4],
        ['SFR', 15557, 2],
        ['Free', 12322, 2],
        ['Bouygues Telecom', 5410, 2],
      ],
    },
  ],
  [
    'IN',
    6,
    {
      language: 'hi',
      providers: [
        ['Reliance Jio', 55836, 5],
        ['Bharti Airtel', 9498, 4],
      ],
    },
  ],
  [
    'BR',
    5,
    {
      language: 'pt',
      providers: [
        ['Claro', 28573, 3],
        ['Vivo', 26599, 3],
        ['TIM Brasil', 26615, 2],
      ],
    },
  ],
  [
    'JP',
    5,
    {
      language: 'ja',
      providers: [
        ['NTT Docomo', 9605, 4],
        ['KDDI', 2516, 3],
        ['SoftBank', 17676, 3],
      ],
    },
  ],
  [
    'CA',
    4,
    {
      language: 'en',
      providers: [
        ['Rogers', 812, 3],
        ['Bell Canada', 577, 3],
      ],
    },
  ],
  [
    'ES',
    4,
    {
      language: 'es',
      providers: [
        ['Movistar', 3352, 4],
        ['Orange Spain', 12479, 2],
      ],
    },
  ],
  [
    'IT',
    4,
    {
      language: 'it',
      providers: [
        ['TIM', 3269, 3],
        ['Vodafone Italia', 30722, 2],
      ],
    },
  ],
  [
    'NL',
    3,
    {
      language: 'nl',
      providers: [
        ['KPN', 1136, 3],
        ['VodafoneZiggo', 33915, 3],
      ],
    },
  ],
  [
    'MX',
    3,
    {
      language: 'es',
      providers: [
        ['Telcel', 28403, 4],
        ['Telmex', 8151, 2],
      ],
    },
  ],
  [
    'AU',
    3,
    {
      language: 'en',
      providers: [
        ['Telstra', 1221, 4],
        ['Optus', 4804, 2],
      ],
    },
  ],
  [
    'PL',
    2,
    {
      language: 'pl',
      providers: [
        ['Orange Polska', 5617, 2],
        ['Play', 39603, 2],
      ],
    },
  ],
  [
    'SE',
    2,
    {
      language: 'sv',
      providers: [
        ['Telia', 3301, 3],
        ['Tele2', 1257, 2],
      ],
    },
  ],
  [
    'CH',
    2,
    {
      language: 'de',
      providers: [
        ['Swisscom', 3303, 3],
        ['Sunrise', 6730, 2],
      ],
    },
  ],
  ['', 1, { language: '', providers: [['', 0, 1]] }],
];

const DEVICES: [{ type: string; os: [string, number][]; browser: [string, number][] }, number][] = [
  [
    {
      type: 'mobile',
      os: [
        ['iOS', 55],
        ['Android', 45],
      ],
      browser: [
        ['Mobile Safari', 50],
        ['Chrome Mobile', 40],
        ['Samsung Internet', 10],
      ],
    },
    72,
  ],
  [
    {
      type: 'desktop',
      os: [
        ['Windows', 60],
        ['macOS', 30],
        ['Linux', 10],
      ],
      browser: [
        ['Chrome', 60],
        ['Safari', 15],
        ['Edge', 15],
        ['Firefox', 10],
      ],
    },
    17,
  ],
  [
    {
      type: 'tablet',
      os: [
        ['iPadOS', 65],
        ['Android', 35],
      ],
      browser: [
        ['Mobile Safari', 65],
        ['Chrome', 35],
      ],
    },
    7,
  ],
  [{ type: 'other', os: [['', 1]], browser: [['', 1]] }, 2],
  [
    {
      type: 'bot',
      os: [['', 1]],
      browser: [
        ['Googlebot', 2],
        ['bingbot', 1],
      ],
    },
    2,
  ],
];

const REFERRERS: [string, number][] = [
  ['', 70],
  ['google.com', 8],
  ['instagram.com', 7],
  ['facebook.com', 5],
  ['t.co', 3],
  ['linkedin.com', 3],
  ['tiktok.com', 2],
  ['news.ycombinator.com', 1],
  ['reddit.com', 1],
];

const DEMO_BRANDS = [
  {
    name: 'Northwind Coffee',
    slug: 'northwind-coffee',
    codes: ['menu', 'loyalty', 'table-card', 'window-poster', 'cup-sleeve', 'receipt'],
  },
  {
    name: 'Contoso Books',
    slug: 'contoso-books',
    codes: ['catalog', 'author-talk', 'bookmark', 'gift-card', 'newsletter'],
  },
  {
    name: 'Fabrikam Travel',
    slug: 'fabrikam-travel',
    codes: ['brochure', 'boarding-pass', 'hotel-flyer', 'billboard', 'magazine-ad'],
  },
  {
    name: 'Tailspin Events',
    slug: 'tailspin-events',
    codes: ['tickets', 'badge', 'stage-screen', 'program', 'feedback', 'sponsor-wall'],
  },
];
const UNBRANDED_CODES = ['business-card', 'wifi', 'vcard'];

const PROFILE_CACHE = 500_000;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID for a given time, with the random part from the seeded generator. */
function ulidAt(ms: number, rand: () => number): string {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  // 80 random bits from three draws (30 + 30 + 20 bits).
  let r = '';
  for (const chars of [6, 6, 4]) {
    let x = Math.floor(rand() * 2 ** (chars * 5));
    for (let i = 0; i < chars; i++) {
      r += CROCKFORD[x & 31];
      x >>>= 5;
    }
  }
  return time + r;
}

export interface DemoCode {
  id: number;
  ulid: string;
  slug: string;
  brandId: number;
}

export interface SeedDemoOptions {
  /** Number of scans to write (default 1,000,000). */
  scans?: number;
  /** Called after each batch with the scans written so far. */
  onProgress?: (done: number, total: number) => void;
  /** Days of history ending today (default 90). */
  days?: number;
  /** Rows per ClickHouse insert (default 500,000). */
  batchSize?: number;
  seed?: number;
  /** Organization slug (default demo-<random>); its plan is enterprise_monthly. */
  slug?: string;
}

export interface SeedDemoResult {
  org: OrgRecord;
  /** The owner's initial token (plain text, shown once). */
  token: string;
  brands: { id: number; ulid: string; name: string }[];
  codes: DemoCode[];
  scans: number;
}

/** Creates the demo organization, its brands and codes, and writes the synthetic scans. */
export async function seedDemo(app: AppContext, opts: SeedDemoOptions = {}): Promise<SeedDemoResult> {
  const total = opts.scans ?? 1_000_000;
  const slug = opts.slug ?? `demo-${Math.random().toString(36).slice(2, 8)}`;
  const created = await createOrganization(app, {
    name: 'Demo Organization',
    slug,
    planCode: 'enterprise_monthly',
    currency: 'EUR',
    ownerEmail: `owner@${slug}.example.com`,
  });
  const org = created.org;
  const domainId = await fallbackDomainId(app);
  const brands: SeedDemoResult['brands'] = [];
  const codes: DemoCode[] = [];
  for (const b of DEMO_BRANDS) {
    const brand = await insertBrand(app, org, b);
    brands.push({ ...brand, name: b.name });
    for (const c of b.codes) {
      const code = await insertCode(app, org, {
        slug: `${b.slug}-${c}`,
        name: `${b.name}: ${c.replace(/-/g, ' ')}`,
        brandId: brand.id,
        domainId,
      });
      codes.push({ ...code, slug: `${b.slug}-${c}`, brandId: brand.id });
    }
  }
  for (const c of UNBRANDED_CODES) {
    const code = await insertCode(app, org, { slug: c, name: c.replace(/-/g, ' '), domainId });
    codes.push({ ...code, slug: c, brandId: 0 });
  }
  await writeSyntheticScans(app.ch, {
    orgId: org.id,
    domainId,
    codes,
    total,
    days: opts.days ?? 90,
    nowMs: app.clock.now().getTime(),
    batchSize: opts.batchSize ?? 500_000,
    seed: opts.seed ?? 42,
    onProgress: opts.onProgress,
  });
  return { org, token: created.token.secret, brands, codes, scans: total };
}

export interface SyntheticScanOptions {
  orgId: number;
  domainId: number;
  codes: DemoCode[];
  total: number;
  days: number;
  nowMs: number;
  batchSize: number;
  seed: number;
  onProgress?: (done: number, total: number) => void;
  /** Receives every batch as TSV too (the benchmark copies the same scans into Postgres). */
  onBatch?: (tsv: string) => Promise<void>;
}

/** Writes `total` synthetic scans of the given codes into scan_events, TSV batch by batch. */
export async function writeSyntheticScans(ch: ClickHouseHandle, o: SyntheticScanOptions): Promise<void> {
  const rand = prng(o.seed);
  // Code popularity: Zipf-like, shuffled so brands differ.
  const codeWeights: [DemoCode, number][] = o.codes.map((c, i) => [c, 1 / (1 + ((i * 7) % o.codes.length)) ** 1.1]);
  const pickCode = weighted(codeWeights);
  const pickCountry = weighted(
    COUNTRIES.map(([code, w, p]) => [{ code, ...p }, w] as [CountryProfile & { code: string }, number]),
  );
  const pickDevice = weighted(DEVICES);
  const pickReferrer = weighted(REFERRERS);
  const osPickers = new Map(DEVICES.map(([d]) => [d.type, weighted(d.os)]));
  const browserPickers = new Map(DEVICES.map(([d]) => [d.type, weighted(d.browser)]));
  const providerPickers = new Map(
    COUNTRIES.map(([code, , p]) => [
      code,
      weighted(p.providers.map(([n, asn, w]) => [[n, asn] as [string, number], w])),
    ]),
  );
  // Day weights: growth over the period and quieter weekends; hour weights: a daytime curve.
  const todayMs = Math.floor(o.nowMs / DAY_MS) * DAY_MS;
  const firstDayMs = todayMs - (o.days - 1) * DAY_MS;
  const dayWeights: [number, number][] = [];
  for (let d = 0; d < o.days; d++) {
    const dayMs = firstDayMs + d * DAY_MS;
    const weekday = new Date(dayMs).getUTCDay();
    const weekend = weekday === 0 || weekday === 6 ? 0.7 : 1;
    // Today is only partly over.
    const part = dayMs === todayMs ? (o.nowMs - todayMs) / DAY_MS : 1;
    dayWeights.push([dayMs, (1 + d / o.days) * weekend * part]);
  }
  const pickDay = weighted(dayWeights);
  // About one visitor per three scans; a power law makes some visitors come back often.
  const visitors = Math.max(1, Math.round(o.total / 3));
  const table = `${ch.database}.scan_events`;
  const profiles = new Map<number, { before: string; after: string }>();
  let done = 0;
  while (done < o.total) {
    const n = Math.min(o.batchSize, o.total - done);
    const lines: string[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const code = pickCode(rand());
      const dayMs = pickDay(rand());
      // Hours: a smooth daytime peak (sum of two uniforms centred at 14:00 UTC), minutes uniform.
      const hourMs = ((rand() + rand()) / 2) * DAY_MS;
      let ms = Math.floor(dayMs + ((hourMs + 2 * 3_600_000) % DAY_MS));
      if (ms > o.nowMs) ms = o.nowMs - Math.floor(rand() * Math.max(1, o.nowMs - dayMs));
      const visitor = Math.floor(visitors * rand() ** 2);
      let profile = profiles.get(visitor);
      if (!profile) {
        // A visitor's attributes come from their own generator, so they stay the same across scans.
        const vr = prng(visitor * 2654435761 + o.seed);
        const country = pickCountry(vr());
        const device = pickDevice(vr());
        const nativeLanguage = vr() < 0.8;
        const [provider, asn] = providerPickers.get(country.code)!(vr());
        const os = osPickers.get(device.type)!(vr());
        const browser = browserPickers.get(device.type)!(vr());
        const hash = (BigInt(Math.floor(vr() * 2 ** 32)) << 32n) | BigInt(Math.floor(vr() * 2 ** 32));
        const language = nativeLanguage ? country.language : 'en';
        profile = {
          // The columns from visitor_hash to provider, without the per-scan referrer.
          before: [hash.toString(), country.code, device.type, os, browser].join('\t'),
          after: [language, provider, asn, device.type === 'bot' ? 1 : 0].join('\t'),
        };
        // Frequent visitors have low numbers; caching only those bounds the memory.
        if (visitor < PROFILE_CACHE) profiles.set(visitor, profile);
      }
      lines[i] = [
        ulidAt(ms, rand),
        ms / 1000,
        o.orgId,
        code.brandId,
        o.domainId,
        code.id,
        profile.before,
        pickReferrer(rand()),
        profile.after,
        rand() < 0.1 ? 0 : -1,
      ].join('\t');
    }
    const tsv = lines.join('\n') + '\n';
    // A deterministic token per batch: re-running a failed seed with the same seed does not double it.
    await insertText(ch.client, {
      table,
      body: tsv,
      format: 'TabSeparated',
      dedupToken: `demo-${o.orgId}-${o.seed}-${o.total}-${done}`,
    });
    if (o.onBatch) await o.onBatch(tsv);
    done += n;
    o.onProgress?.(done, o.total);
  }
}
