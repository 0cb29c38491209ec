// Authenticated principals cached in memory, so an API call costs one round trip (admission)
// instead of two. Entries are dropped when Postgres says an organization's tokens, memberships,
// organization row or plans changed (sql/0007_auth_notify.sql), and all of them whenever the
// LISTEN connection is lost; while it is down nothing is served from the cache.
import type { Knex } from 'knex';
import type { Counter } from 'prom-client';
import { ApiError } from '../errors.js';
import type { NotifyListener } from '../stores/notify.js';
import { authenticate, parseBearer, type Principal } from './principal.js';

interface Entry {
  principal: Principal;
  /**
   * The token's secret as verified against its stored SHA-256 when the entry was made. Later calls
   * compare with it in constant time instead of hashing again (a digest costs several times the
   * rest of a cached lookup); it lives in this process's memory as long as the entry (ttlMs).
   */
  secret: string;
  expiresAt: Date | null;
  at: number;
}

/**
 * Whether two secrets are equal, in a time that depends on their lengths only, never on where they
 * differ (every issued secret has the same, documented length).
 */
function sameSecret(known: string, given: string): boolean {
  if (known.length !== given.length) return false;
  let diff = 0;
  for (let i = 0; i < known.length; i++) diff |= known.charCodeAt(i) ^ given.charCodeAt(i);
  return diff === 0;
}

export class PrincipalCache {
  private readonly entries = new Map<number, Entry>();
  /** Bumped on every invalidation; a load that raced one is not cached. */
  private generation = 0;
  readonly stats = { hits: 0, misses: 0 };

  constructor(
    private readonly db: Knex,
    private readonly listener: NotifyListener,
    private readonly counter: Counter<'result'> | null = null,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 60_000, maxEntries: 50_000 },
  ) {}

  async start(): Promise<void> {
    await this.listener.subscribe(
      'auth_cache',
      (payload) => {
        this.generation++;
        if (payload === '*') this.entries.clear();
        else this.evictOrg(Number(payload));
      },
      () => {
        this.generation++;
        this.entries.clear();
      },
    );
  }

  /**
   * Drops an organization's entries in this process right away (after a write that changes them);
   * other processes follow on the NOTIFY, within milliseconds.
   */
  forgetOrg(orgId: number): void {
    this.generation++;
    this.evictOrg(orgId);
  }

  private evictOrg(orgId: number): void {
    for (const [id, e] of this.entries) if (e.principal.org.id === orgId) this.entries.delete(id);
  }

  /**
   * Same contract as authenticate(): a principal, or 401. `audience` is the resource asking: a
   * token bound to a resource (an OAuth access token for /mcp) is accepted there only, and an API
   * token (no audience) everywhere.
   */
  async authenticate(header: string | undefined, now: Date, audience: string | null = null): Promise<Principal> {
    const principal = await this.lookup(header, now);
    const bound = principal.token.audience ?? null;
    if (bound !== null && bound !== audience) {
      throw ApiError.unauthenticated(`This token is for ${bound} only.`);
    }
    return principal;
  }

  private async lookup(header: string | undefined, now: Date): Promise<Principal> {
    const parsed = parseBearer(header);
    const entry = parsed && this.listener.live ? this.entries.get(parsed.id) : undefined;
    if (parsed && entry && Date.now() - entry.at < this.opts.ttlMs) {
      const ok = sameSecret(entry.secret, parsed.secret);
      if (!ok || (entry.expiresAt && entry.expiresAt <= now)) {
        throw ApiError.unauthenticated('The bearer token is invalid, expired or revoked.');
      }
      this.stats.hits++;
      this.counter?.inc({ result: 'hit' });
      return entry.principal;
    }
    this.stats.misses++;
    this.counter?.inc({ result: 'miss' });
    const generation = this.generation;
    const { principal, expiresAt } = await authenticate(this.db, header, now);
    if (parsed && this.listener.live && generation === this.generation) {
      if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(parsed.id, { principal, secret: parsed.secret, expiresAt, at: Date.now() });
    }
    return principal;
  }
}
