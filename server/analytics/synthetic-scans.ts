// Synthetic scans for demo data and benchmarks, written straight into ClickHouse in large batches.
// Distributions are shaped like real traffic (demo-traffic.ts): a few codes get most scans,
// traffic grows over the period with weekly and daily rhythms, visitors come back (a visitor
// keeps their country, device, language and network), and ~2% are bots. Deterministic for a
// given seed, so benchmark runs are comparable.
import { ulid } from 'ulid';
import { insertText, type ClickHouseHandle } from '../stores/clickhouse.js';
import { COUNTRIES, DEVICES, REFERRERS, type CountryProfile } from './demo-traffic.js';
import { clickHouseTime, type ScanEvent as ScanEventRow } from './scan-event.js';

const DAY_MS = 86_400_000;

/** A generated scan, scanned_at in epoch milliseconds. */
export type ScanEvent = ScanEventRow<number>;

/** Writes events as one insert (JSONEachRow); for tests and small batches. */
export async function insertScanEvents(ch: ClickHouseHandle, events: ScanEvent[]): Promise<void> {
  if (!events.length) return;
  await insertText(ch.client, {
    table: `${ch.database}.scan_events`,
    body: events.map((e) => JSON.stringify({ ...e, scanned_at: clickHouseTime(e.scanned_at) })).join('\n'),
    format: 'JSONEachRow',
    dedupToken: ulid(),
  });
}

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
