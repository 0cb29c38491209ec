// Code and domain lookups for the redirect, cached in memory (misses too) and invalidated through
// Postgres LISTEN/NOTIFY (sql/0003_redirect_notify.sql), so a change made through any process is
// served by every process within a second. The process's one LISTEN connection is the shared
// NotifyListener; until it is up, and after it drops until it is back, nothing is cached: every
// lookup reads Postgres.
import type { Knex } from 'knex';
import type { NotifyListener } from '../stores/notify.js';
import { parseCode, type CodeSettings, type ParsedCode } from '../qr-codes/routing.js';
import { httpUrlOrNull } from '../schemas/http-url.js';

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
  maxEntries?: number;
}

export class RedirectCache {
  private domains = new Map<string, Slot<DomainEntry>>();
  private codes = new Map<string, Slot<CodeEntry>>();
  private generation = 0;
  private closed = false;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  readonly stats = { hits: 0, misses: 0, notifications: 0 };

  constructor(
    private readonly db: Knex,
    private readonly listener: NotifyListener,
    opts: CacheOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.maxEntries = opts.maxEntries ?? 100_000;
  }

  async start(): Promise<void> {
    await this.listener.subscribe(
      CHANNEL,
      (payload) => this.onNotification(payload),
      () => this.clear(),
    );
  }

  private onNotification(payload: string | undefined): void {
    if (this.closed) return;
    this.stats.notifications++;
    this.generation++;
    try {
      const msg = JSON.parse(payload ?? '') as { t: string; keys: string[] };
      if (msg.t === 'code') for (const k of msg.keys) this.codes.delete(k);
      else if (msg.t === 'domain') {
        for (const k of msg.keys) this.domains.delete(k);
        // A domain's status decides whether its codes answer: drop code entries too.
        this.codes.clear();
      } else this.clear();
    } catch {
      this.clear();
    }
  }

  clear(): void {
    this.generation++;
    this.domains.clear();
    this.codes.clear();
  }

  private fresh<T>(slot: Slot<T> | undefined, now: number): slot is Slot<T> {
    return slot !== undefined && now - slot.at < this.ttlMs;
  }

  private store<T>(map: Map<string, Slot<T>>, key: string, value: T | null, generation: number): void {
    if (this.closed || !this.listener.live || generation !== this.generation) return; // a change arrived meanwhile
    if (map.size >= this.maxEntries) map.clear();
    map.set(key, { value, at: Date.now() });
  }

  /** The cached domain for a host (null: none), or undefined when it must be loaded. */
  peekDomain(host: string): DomainEntry | null | undefined {
    const slot = this.domains.get(host);
    if (this.fresh(slot, Date.now())) {
      this.stats.hits++;
      return slot.value;
    }
    return undefined;
  }

  async loadDomain(host: string): Promise<DomainEntry | null> {
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
    const slot = this.codes.get(key);
    if (this.fresh(slot, Date.now())) {
      this.stats.hits++;
      return slot.value;
    }
    return undefined;
  }

  async loadCode(key: string): Promise<CodeEntry | null> {
    this.stats.misses++;
    const gen = this.generation;
    const row = await this.db('qr_codes as c')
      .join('domains as d', 'd.id', 'c.domain_id')
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
      );
    let entry: CodeEntry | null = null;
    if (row) {
      const settings: CodeSettings = {
        id: Number(row.id),
        status: row.status,
        destination: row.destination,
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
      };
    }
    this.store(this.codes, key, entry, gen);
    return entry;
  }

  async close(): Promise<void> {
    // The LISTEN connection is the process's and closes with the application context.
    this.closed = true;
    this.clear();
  }
}
