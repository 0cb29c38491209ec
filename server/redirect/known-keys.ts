// The redirect's negative cache: a Bloom filter of every lookup key that may exist (the stored slug
// `<org-slug>/<slug>` of every code that is not deleted, every domain host, and the GS1 keys of gs1
// codes: `<org-slug>|<gtin-14>` and the organization's slug alone), so a request for a slug, host
// or GTIN that does not exist is answered without asking Postgres, however many random ones a
// flood sends. A Bloom filter has no false negatives: a key it does not hold surely does not
// exist (as of the last notification); a key it holds may exist, and is looked up.
//
// It is built from Postgres when the LISTEN connection comes up (and again after it drops, since
// notifications may have been missed), and kept current by the redirect_cache NOTIFY channel: every
// code or domain notification adds its keys. Keys of deleted codes stay until the next rebuild
// (they only cost a lookup); the filter is rebuilt larger once the keys added since the build
// reach half its capacity.
import type { Knex } from 'knex';
import { BloomFilter } from 'mnemonist';
import { countLiveDomains, liveHostPage } from '../domains/serving.js';
import { countLiveCodes, countLiveGs1Codes, liveGs1KeyPage, liveSlugPage } from '../qr-codes/scan-lookup.js';

/** A code's key in the filter: its stored slug in lower case. */
export const codeKey = (slug: string): string => `c:${slug}`;
/** A domain's key in the filter: its host in lower case. */
export const hostKey = (host: string): string => `h:${host}`;
/**
 * A GS1 key in the filter: `<org-slug>|<gtin-14>` (lower case) for a GTIN of an organization, or
 * the organization's slug alone for "has gs1 codes at all".
 */
export const gs1Key = (key: string): string => `g:${key}`;

/** Adds the filter keys of one GS1 key `<org-slug>|<gtin-14>`: itself and its organization. */
export function addGs1Keys(add: (key: string) => void, key: string): void {
  add(gs1Key(key));
  add(gs1Key(key.slice(0, key.indexOf('|'))));
}

const MIN_CAPACITY = 100_000;
const ERROR_RATE = 0.001;
const PAGE = 10_000;
const RETRY_MS = 5000;

export class KnownKeys {
  private filter: BloomFilter | null = null;
  /** A build in flight, and what notifications added while it runs. */
  private building: { id: number; added: string[] } | null = null;
  private builds = 0;
  private added = 0;
  private capacity = 0;
  private closed = false;

  constructor(
    private readonly db: Knex,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Whether the filter can answer (built, and not being rebuilt after a reset). */
  get ready(): boolean {
    return this.filter !== null;
  }

  /** false only when the key surely does not exist; true when it may (or the filter is not ready). */
  mayExist(key: string): boolean {
    return this.filter === null || this.filter.test(key);
  }

  add(key: string): void {
    this.building?.added.push(key);
    if (!this.filter) return;
    this.filter.add(key);
    if (++this.added > this.capacity / 2 && !this.building) this.rebuild(false);
  }

  /**
   * Builds a new filter from Postgres. `reset`: notifications may have been missed, so the current
   * filter stops answering until the new one is ready; otherwise it keeps answering meanwhile.
   */
  rebuild(reset: boolean): void {
    if (this.closed) return;
    if (reset) this.filter = null;
    const build = { id: ++this.builds, added: [] as string[] };
    this.building = build;
    this.load(build).then(
      ({ filter, capacity }) => {
        if (this.closed || this.building !== build) return; // a newer build replaced this one
        for (const k of build.added) filter.add(k);
        this.filter = filter;
        this.capacity = capacity;
        this.added = build.added.length;
        this.building = null;
      },
      (err: unknown) => {
        if (this.building !== build) return;
        this.building = null;
        this.onError(err);
        // Until a build succeeds every lookup reads Postgres; try again shortly.
        setTimeout(() => this.rebuild(false), RETRY_MS).unref();
      },
    );
  }

  private async load(build: { id: number }): Promise<{ filter: BloomFilter; capacity: number }> {
    const capacity = Math.max(
      MIN_CAPACITY,
      2 *
        ((await countLiveCodes(this.db)) + (await countLiveDomains(this.db)) + 2 * (await countLiveGs1Codes(this.db))),
    );
    const filter = new BloomFilter({ capacity, errorRate: ERROR_RATE });
    const add = (key: string) => filter.add(key);
    for (const [page, addKeys] of [
      [liveSlugPage, (k: string) => add(codeKey(k))],
      [liveHostPage, (k: string) => add(hostKey(k))],
      [liveGs1KeyPage, (k: string) => addGs1Keys(add, k)],
    ] as const) {
      // Keyset pages, so a large table is read in bounded memory.
      for (let after = 0; ;) {
        const rows = await page(this.db, after, PAGE);
        if (this.building?.id !== build.id) return { filter, capacity }; // superseded: stop reading
        for (const r of rows) addKeys(r.key);
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1].id;
      }
    }
    return { filter, capacity };
  }

  /** Stops answering (the LISTEN connection is down or the cache is closing). */
  drop(): void {
    this.filter = null;
    this.building = null;
  }

  close(): void {
    this.closed = true;
    this.drop();
  }
}

/**
 * How many keys the filter says do not exist are still looked up in Postgres, per second: at a
 * normal rate every one is (so a code created a moment ago, whose notification is still on its way,
 * is found), under a flood only this many, and the filter answers the rest.
 */
export class LookupBudget {
  private second = 0;
  private used = 0;

  constructor(readonly perSecond: number) {}

  take(nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second) {
      this.second = second;
      this.used = 0;
    }
    if (this.used >= this.perSecond) return false;
    this.used++;
    return true;
  }
}
