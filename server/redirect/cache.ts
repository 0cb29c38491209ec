// Code and domain lookups for the redirect, cached in memory and invalidated through Postgres
// LISTEN/NOTIFY (sql/0003_redirect_notify.sql), so a change made through any process is served by
// every process within a second. The process's one LISTEN connection is the shared NotifyListener;
// until it is up, and after it drops until it is back, nothing is cached: every lookup reads
// Postgres.
//
// Bounded: codes and domains are kept in least-recently-used caches (a full cache drops its
// coldest entry, never the hot ones). A slug or host that does not exist is answered by the known
// keys filter (./known-keys.ts) without a query, so a flood of random slugs cannot turn into one
// Postgres query per request: only `lookupsPerSecond` such keys are still checked in Postgres
// (which catches a code whose notification is on its way), plus the filter's false positives
// (0.1%). A key Postgres did not find is cached like a found one.
import type { Knex } from 'knex';
import { LRUCacheWithDelete } from 'mnemonist';
import type { NotifyListener } from '../stores/notify.js';
import { findServingDomain, type ServingDomain } from '../domains/serving.js';
import { findCodeForScan, findGs1CodesForScan, type Gs1Entry, type ScanCode } from '../qr-codes/scan-lookup.js';
import { addGs1Keys, codeKey, gs1Key, hostKey, KnownKeys, LookupBudget } from './known-keys.js';

/** A host's domain as cached: what server/domains/serving.ts finds. */
export type DomainEntry = ServingDomain;
/** A slug's code as cached: what server/qr-codes/scan-lookup.ts finds. */
export type CodeEntry = ScanCode;

interface Slot<T> {
  value: T | null;
  at: number;
}

const CHANNEL = 'redirect_cache';

export interface CacheOptions {
  /** Safety net: entries are re-read after this long even without a notification. */
  ttlMs?: number;
  /** Codes kept, and domains kept (least recently used dropped first). */
  maxCodes?: number;
  maxDomains?: number;
  /** Keys the filter says do not exist that are still checked in Postgres, per second. */
  lookupsPerSecond?: number;
}

const DEFAULT_MAX_CODES = 100_000;
const DEFAULT_MAX_DOMAINS = 10_000;
export const DEFAULT_LOOKUPS_PER_SECOND = 100;

export class RedirectCache {
  private readonly domains: LRUCacheWithDelete<string, Slot<DomainEntry>>;
  private readonly codes: LRUCacheWithDelete<string, Slot<CodeEntry>>;
  /** gs1 codes by `<org-slug>|<gtin-14>` (lower case): every level of one GTIN in one organization. */
  private readonly gs1: LRUCacheWithDelete<string, Slot<Gs1Entry>>;
  private readonly loadingGs1 = new Map<string, Promise<Gs1Entry | null>>();
  private readonly known: KnownKeys;
  private readonly budget: LookupBudget;
  private readonly loadingCodes = new Map<string, Promise<CodeEntry | null>>();
  private readonly loadingDomains = new Map<string, Promise<DomainEntry | null>>();
  private generation = 0;
  private closed = false;
  private readonly ttlMs: number;
  /** hits: answered from memory; filtered: answered "none" by the filter; misses: read from Postgres. */
  readonly stats = { hits: 0, misses: 0, filtered: 0, notifications: 0 };

  constructor(
    private readonly db: Knex,
    private readonly listener: NotifyListener,
    opts: CacheOptions & { onError?: (err: unknown) => void } = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.codes = new LRUCacheWithDelete(opts.maxCodes ?? DEFAULT_MAX_CODES);
    this.domains = new LRUCacheWithDelete(opts.maxDomains ?? DEFAULT_MAX_DOMAINS);
    this.gs1 = new LRUCacheWithDelete(opts.maxCodes ?? DEFAULT_MAX_CODES);
    this.budget = new LookupBudget(opts.lookupsPerSecond ?? DEFAULT_LOOKUPS_PER_SECOND);
    this.known = new KnownKeys(db, opts.onError ?? (() => undefined));
  }

  async start(): Promise<void> {
    await this.listener.subscribe(
      CHANNEL,
      (payload) => this.onNotification(payload),
      () => this.reset(),
    );
    // The process's LISTEN connection may have been up before this subscription (no reset then).
    if (this.listener.live && !this.known.ready) this.known.rebuild(true);
  }

  /** Whether the known-keys filter is answering (built, LISTEN connection up). */
  get filterReady(): boolean {
    return this.known.ready && this.listener.live;
  }

  /** false only when the filter says no domain has this host (for the TLS and ACME challenge caches). */
  hostMayExist(host: string): boolean {
    return !this.listener.live || this.known.mayExist(hostKey(host));
  }

  private onNotification(payload: string | undefined): void {
    if (this.closed) return;
    this.stats.notifications++;
    this.generation++;
    try {
      const msg = JSON.parse(payload ?? '') as { t: string; keys: string[]; gs1?: string[] };
      if (msg.t === 'code') {
        for (const k of msg.keys) {
          this.codes.delete(k);
          this.known.add(codeKey(k));
        }
        // A gs1 code's GS1 keys before and after the change (sql/0056).
        for (const k of msg.gs1 ?? []) {
          this.gs1.delete(k);
          addGs1Keys((key) => this.known.add(key), k);
        }
      } else if (msg.t === 'domain') {
        for (const k of msg.keys) {
          this.domains.delete(k);
          this.known.add(hostKey(k));
        }
        // A domain's status decides whether its codes answer: drop code entries too.
        this.codes.clear();
        this.gs1.clear();
      } else if (msg.t === 'codes') {
        // A brand's pixels or kit, or an organization's pixel consent rule: what cached codes carry.
        this.codes.clear();
      } else this.reset(); // an organization's slug changed: every key of its codes did
    } catch {
      this.reset();
    }
  }

  /** Notifications may have been missed (or keys changed wholesale): forget everything, rebuild. */
  private reset(): void {
    this.clear();
    if (this.listener.live) this.known.rebuild(true);
    else this.known.drop();
  }

  clear(): void {
    this.generation++;
    this.domains.clear();
    this.codes.clear();
    this.gs1.clear();
  }

  private fresh<T>(slot: Slot<T> | undefined, now: number): slot is Slot<T> {
    return slot !== undefined && now - slot.at < this.ttlMs;
  }

  private store<T>(lru: LRUCacheWithDelete<string, Slot<T>>, key: string, value: T | null, generation: number): void {
    if (this.closed || !this.listener.live || generation !== this.generation) return; // a change arrived meanwhile
    lru.set(key, { value, at: Date.now() });
  }

  private once<T>(loading: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
    let p = loading.get(key);
    if (!p) {
      p = read().finally(() => loading.delete(key));
      loading.set(key, p);
    }
    return p;
  }

  /**
   * Whether the filter says a key does not exist, and this lookup is not one of the few still
   * checked (a key already being loaded joins that load and costs nothing).
   */
  private surelyAbsent(key: string, loading: boolean, now: number): boolean {
    if (loading || !this.listener.live || this.known.mayExist(key) || this.budget.take(now)) return false;
    this.stats.filtered++;
    return true;
  }

  /** The cached domain for a host (null: none), or undefined when it must be loaded. */
  peekDomain(host: string): DomainEntry | null | undefined {
    const now = Date.now();
    const slot = this.domains.get(host);
    if (this.fresh(slot, now)) {
      this.stats.hits++;
      return slot.value;
    }
    return this.surelyAbsent(hostKey(host), this.loadingDomains.has(host), now) ? null : undefined;
  }

  /** The domain for a host from Postgres; concurrent loads of one host share one query. */
  loadDomain(host: string): Promise<DomainEntry | null> {
    return this.once(this.loadingDomains, host, () => this.readDomain(host));
  }

  private async readDomain(host: string): Promise<DomainEntry | null> {
    this.stats.misses++;
    const gen = this.generation;
    const entry = await findServingDomain(this.db, host);
    this.store(this.domains, host, entry, gen);
    return entry;
  }

  /** The cached code for a stored slug `<org-slug>/<slug>` in lower case (null: none). */
  peekCode(key: string): CodeEntry | null | undefined {
    const now = Date.now();
    const slot = this.codes.get(key);
    if (this.fresh(slot, now)) {
      this.stats.hits++;
      return slot.value;
    }
    return this.surelyAbsent(codeKey(key), this.loadingCodes.has(key), now) ? null : undefined;
  }

  /** The code for a key from Postgres; concurrent loads of one key share one query. */
  loadCode(key: string): Promise<CodeEntry | null> {
    return this.once(this.loadingCodes, key, () => this.readCode(key));
  }

  private async readCode(key: string): Promise<CodeEntry | null> {
    this.stats.misses++;
    const gen = this.generation;
    const entry = await findCodeForScan(this.db, key);
    this.store(this.codes, key, entry, gen);
    return entry;
  }

  /**
   * The cached gs1 codes of a GTIN in an organization (`<org-slug>|<gtin-14>`, lower case; null:
   * none), or undefined when they must be loaded (the known-keys filter answers made-up GTINs).
   */
  peekGs1(key: string): Gs1Entry | null | undefined {
    const now = Date.now();
    const slot = this.gs1.get(key);
    if (this.fresh(slot, now)) {
      this.stats.hits++;
      return slot.value;
    }
    return this.surelyAbsent(gs1Key(key), this.loadingGs1.has(key), now) ? null : undefined;
  }

  /** false only when the filter says the organization (slug, lower case) has no gs1 code. */
  mayHaveGs1(orgSlug: string): boolean {
    return !this.surelyAbsent(gs1Key(orgSlug), false, Date.now());
  }

  loadGs1(key: string): Promise<Gs1Entry | null> {
    return this.once(this.loadingGs1, key, async () => {
      this.stats.misses++;
      const gen = this.generation;
      const bar = key.indexOf('|');
      const entry = await findGs1CodesForScan(this.db, key.slice(0, bar), key.slice(bar + 1));
      this.store(this.gs1, key, entry, gen);
      return entry;
    });
  }

  async close(): Promise<void> {
    // The LISTEN connection is the process's and closes with the application context.
    this.closed = true;
    this.known.close();
    this.clear();
  }
}
