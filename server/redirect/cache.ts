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
import { parseCode, type CodeSettings, type ParsedCode } from '../qr-codes/routing.js';
import { httpUrlOrNull } from '../schemas/http-url.js';
import { codeKey, hostKey, KnownKeys, LookupBudget } from './known-keys.js';
import { landingEntryOf, type LandingEntry } from '../landing/page.js';

export interface DomainEntry {
  id: number;
  /** null: a shared fallback origin. */
  orgId: number | null;
  orgSlug: string | null;
  type: 'custom' | 'fallback';
  /** Until when (ms) its codes answer: Infinity, or an unverified domain's certificate expiry. */
  answersUntil: number;
  /** Until when (ms) plain HTTP gets a 308 to HTTPS: its certificate's expiry, or 0 (never). */
  httpsUntil: number;
  rootRedirect: string | null;
  notFoundRedirect: string | null;
}

export interface CodeEntry {
  id: number;
  orgId: number;
  brandId: number;
  domainId: number;
  domainType: string;
  settings: CodeSettings;
  parsed: ParsedCode;
  passwordHash: string | null;
  redirectCap: number | null;
  prelander: { seconds: number; message: string | null } | null;
  /** The stored type (url, a landing-page type, or a static type, which the redirect never serves). */
  type: string;
  /** The landing page of a vcard, links, app or event code; null for the others. */
  landing: LandingEntry | null;
}

interface Slot<T> {
  value: T | null;
  at: number;
}

const CHANNEL = 'redirect_cache';

const expiry = (d: Date | null): number => (d ? new Date(d).getTime() : 0);

export interface CacheOptions {
  /** Safety net: entries are re-read after this long even without a notification. */
  ttlMs?: number;
  /** Codes kept, and domains kept (least recently used dropped first). */
  maxCodes?: number;
  maxDomains?: number;
  /** Keys the filter says do not exist that are still checked in Postgres, per second. */
  lookupsPerSecond?: number;
}

export const DEFAULT_MAX_CODES = 100_000;
export const DEFAULT_MAX_DOMAINS = 10_000;
export const DEFAULT_LOOKUPS_PER_SECOND = 100;

export class RedirectCache {
  private readonly domains: LRUCacheWithDelete<string, Slot<DomainEntry>>;
  private readonly codes: LRUCacheWithDelete<string, Slot<CodeEntry>>;
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
      const msg = JSON.parse(payload ?? '') as { t: string; keys: string[] };
      if (msg.t === 'code') {
        for (const k of msg.keys) {
          this.codes.delete(k);
          this.known.add(codeKey(k));
        }
      } else if (msg.t === 'domain') {
        for (const k of msg.keys) {
          this.domains.delete(k);
          this.known.add(hostKey(k));
        }
        // A domain's status decides whether its codes answer: drop code entries too.
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
    const row = await this.db('domains as d')
      .leftJoin('organizations as o', 'o.id', 'd.org_id')
      .whereRaw('lower(d.host) = ?', [host])
      .whereNull('d.deleted_at')
      // The row that holds the host (unique among these statuses); pending claims of it hold nothing.
      .whereIn('d.status', ['active', 'unverified', 'retired'])
      .first('d.id', 'd.org_id', 'o.slug as org_slug', 'd.type', 'd.status', 'd.settings', 'd.ssl_expires_at');
    const entry: DomainEntry | null = row
      ? {
          id: Number(row.id),
          orgId: row.org_id === null ? null : Number(row.org_id),
          orgSlug: row.org_slug ?? null,
          type: row.type,
          answersUntil: row.status === 'unverified' ? expiry(row.ssl_expires_at) : Infinity,
          httpsUntil: row.type === 'custom' && row.settings?.https_redirect !== false ? expiry(row.ssl_expires_at) : 0,
          rootRedirect: httpUrlOrNull(row.settings?.root_redirect),
          notFoundRedirect: httpUrlOrNull(row.settings?.not_found_redirect),
        }
      : null;
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
    const row = await this.db('qr_codes as c')
      .join('domains as d', 'd.id', 'c.domain_id')
      .leftJoin('brands as b', 'b.id', 'c.brand_id')
      .whereRaw('lower(c.slug) = ?', [key])
      .whereNull('c.deleted_at')
      .first(
        'c.id',
        'c.org_id',
        'c.brand_id',
        'c.domain_id',
        'd.type as domain_type',
        'c.status',
        'c.destination',
        'c.routing',
        'c.schedule',
        'c.password_hash',
        'c.redirect_cap',
        'c.date_begin',
        'c.expire_at',
        'c.utm_params',
        'c.prelander_enabled',
        'c.prelander_seconds',
        'c.prelander_message',
        'c.ulid',
        'c.type',
        'c.landing_config',
        'b.brand_kit',
      );
    let entry: CodeEntry | null = null;
    if (row) {
      const landing = landingEntryOf({ ...row, uid: `${row.ulid}@qr-code` });
      const settings: CodeSettings = {
        id: Number(row.id),
        status: row.status,
        // A landing page's destination is its page's content, never a URL to send to.
        destination: landing ? null : row.destination,
        routing: row.routing,
        schedule: row.schedule,
        dateBegin: row.date_begin ? new Date(row.date_begin) : null,
        expireAt: row.expire_at ? new Date(row.expire_at) : null,
        utmParams: row.utm_params,
      };
      entry = {
        id: Number(row.id),
        orgId: Number(row.org_id),
        brandId: row.brand_id === null ? 0 : Number(row.brand_id),
        domainId: Number(row.domain_id),
        domainType: row.domain_type,
        settings,
        parsed: parseCode(settings),
        passwordHash: row.password_hash ?? null,
        redirectCap: row.redirect_cap === null ? null : Number(row.redirect_cap),
        prelander: row.prelander_enabled
          ? { seconds: row.prelander_seconds ?? 5, message: row.prelander_message ?? null }
          : null,
        type: row.type,
        landing,
      };
    }
    this.store(this.codes, key, entry, gen);
    return entry;
  }

  async close(): Promise<void> {
    // The LISTEN connection is the process's and closes with the application context.
    this.closed = true;
    this.known.close();
    this.clear();
  }
}
