// HTTP-01 answers on the plain-HTTP redirect listener: GET /.well-known/acme-challenge/<token> for
// a host answers the key authorization that the issuing process stored in Postgres, whichever process
// the ACME server's validation request reaches. Anything else under the prefix is a plain 404.
//
// The challenges in flight are cached per host (all of a host's tokens in one query), and the
// acme_challenges NOTIFY channel (sql/0017_acme_challenge_notify.sql) drops a host's entry whenever
// one of its challenges is written or removed. A host that surely is no domain (the redirect's
// known-keys filter) is answered 404 without a query. So a flood of random hosts or random tokens
// costs at most a few Postgres queries a second. While the LISTEN connection is down every request asks
// Postgres, as before.
import type http from 'node:http';
import type { Knex } from 'knex';
import { LRUCacheWithDelete } from 'mnemonist';
import { findChallenge, findHostChallenges } from '../domains/certificate-store.js';
import type { NotifyListener } from '../stores/notify.js';
import { LookupBudget } from './known-keys.js';

export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' };
const CHANNEL = 'acme_challenges';
const MAX_HOSTS = 10_000;
const RECHECKS_PER_SECOND = 20;

/** The Host header without its port, lowercase. */
function bareHost(host: string): string {
  const colon = host.lastIndexOf(':');
  return (colon > 0 && !host.endsWith(']') ? host.slice(0, colon) : host).toLowerCase();
}

interface HostChallenges {
  tokens: Map<string, { keyAuthorization: string; expiresAt: number }>;
  at: number;
}

export class ChallengeCache {
  private readonly hosts = new LRUCacheWithDelete<string, HostChallenges>(MAX_HOSTS);
  private readonly loading = new Map<string, Promise<HostChallenges>>();
  private readonly budget = new LookupBudget(RECHECKS_PER_SECOND);
  private generation = 0;
  /** queries: Postgres reads; filtered: answered 404 because the host is no domain. */
  readonly stats = { queries: 0, filtered: 0 };

  constructor(
    private readonly db: Knex,
    private readonly listener: NotifyListener,
    /** false only when the host surely is no domain (the known-keys filter). */
    private readonly hostMayExist: (host: string) => boolean,
    private readonly ttlMs = 60_000,
  ) {}

  async start(): Promise<void> {
    await this.listener.subscribe(
      CHANNEL,
      (host) => {
        this.generation++;
        this.hosts.delete(host);
      },
      () => {
        this.generation++;
        this.hosts.clear();
      },
    );
  }

  /** The key authorization to answer for a token on a host, or null. */
  async find(host: string, token: string, now: Date): Promise<string | null> {
    if (!TOKEN.test(token)) return null;
    if (!this.listener.live) {
      this.stats.queries++;
      return findChallenge(this.db, host, token, now);
    }
    if (!this.hostMayExist(host)) {
      this.stats.filtered++;
      return null;
    }
    const t = Date.now();
    let slot = this.hosts.get(host);
    if (!slot || t - slot.at >= this.ttlMs) slot = await this.load(host, now);
    // A token missing from a cached entry is read again, a few times a second: the notification of
    // a challenge written a moment ago may still be on its way. Under a flood the entry answers.
    else if (!slot.tokens.has(token) && this.budget.take(t)) slot = await this.load(host, now);
    const c = slot.tokens.get(token);
    return c && c.expiresAt > now.getTime() ? c.keyAuthorization : null;
  }

  private load(host: string, now: Date): Promise<HostChallenges> {
    let p = this.loading.get(host);
    if (!p) {
      const gen = this.generation;
      this.stats.queries++;
      p = findHostChallenges(this.db, host, now)
        .then((rows) => {
          const slot: HostChallenges = {
            tokens: new Map(
              rows.map((r) => [r.token, { keyAuthorization: r.keyAuthorization, expiresAt: r.expiresAt.getTime() }]),
            ),
            at: Date.now(),
          };
          // Cache only what no notification overtook, and only while notifications flow.
          if (gen === this.generation && this.listener.live) this.hosts.set(host, slot);
          return slot;
        })
        .finally(() => this.loading.delete(host));
      this.loading.set(host, p);
    }
    return p;
  }

  /** Answers GET/HEAD /.well-known/acme-challenge/<token>. */
  async answer(req: http.IncomingMessage, res: http.ServerResponse, now: Date): Promise<void> {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const token = (q === -1 ? url : url.slice(0, q)).slice(ACME_CHALLENGE_PREFIX.length);
    const keyAuthorization = await this.find(bareHost(req.headers.host ?? ''), token, now);
    const body = keyAuthorization ?? 'Not found\n';
    res.writeHead(keyAuthorization ? 200 : 404, { ...HEADERS, 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}
