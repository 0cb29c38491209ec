// The public redirect listener (REDIRECT_PORT): Host + path → code → answer, then the scan.
// Bare node:http rather than Koa: this is the hot path, and it needs no middleware stack (the bench,
// test/bench/redirect.ts, compares it with a bare server answering the same 302).
//
// Order of a request: domain (cache) → code (cache, else Postgres) → decision (rules.ts) →
// password / cap (counters.ts, Postgres only when a block of a capped code is used up) → 302 →
// scan into the buffer. Nothing here waits for ClickHouse.
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { RedirectCache, type CodeEntry, type DomainEntry } from './cache.js';
import { RedirectCounters } from './counters.js';
import {
  clientIp,
  createEnricher,
  loadGeoData,
  normaliseIp,
  primaryLanguage,
  referrerHost,
  trustList,
  type Enricher,
} from './enrich.js';
import { gonePage, notFoundPage, passwordPage, prelanderPage, throttledPage } from './pages.js';
import {
  cookieName,
  cookieValid,
  COOKIE_TTL_SECONDS,
  issueCookie,
  PasswordThrottle,
  readCookie,
  verifyPassword,
  type ThrottleOptions,
} from './password.js';
import { decide, type Visitor } from './rules.js';
import { ScanBuffer } from './scan-buffer.js';
import { fastUlid } from '../ids.js';

/** One row of scan_events (docs/scan-event-contract.md). */
export interface ScanRow {
  scan_id: string;
  scanned_at: string;
  org_id: number;
  brand_id: number;
  domain_id: number;
  code_id: number;
  visitor_hash: string;
  country: string;
  device_type: string;
  os: string;
  browser: string;
  referrer: string;
  language: string;
  provider: string;
  asn: number;
  is_bot: 0 | 1;
  matched_rule: number;
}

/** One row of orphan_scans (clickhouse/0003_orphan_scans.ts). */
export interface OrphanRow {
  scan_id: string;
  scanned_at: string;
  org_id: number;
  domain_id: number;
  host: string;
  path: string;
  reason: 'unknown' | 'inactive';
  visitor_hash: string;
  country: string;
  device_type: string;
  referrer: string;
  is_bot: 0 | 1;
}

/** Column order of the scan_events and orphan_scans inserts. */
const SCAN_COLUMNS: readonly (keyof ScanRow)[] = [
  'scan_id',
  'scanned_at',
  'org_id',
  'brand_id',
  'domain_id',
  'code_id',
  'visitor_hash',
  'country',
  'device_type',
  'os',
  'browser',
  'referrer',
  'language',
  'provider',
  'asn',
  'is_bot',
  'matched_rule',
];
const ORPHAN_COLUMNS: readonly (keyof OrphanRow)[] = [
  'scan_id',
  'scanned_at',
  'org_id',
  'domain_id',
  'host',
  'path',
  'reason',
  'visitor_hash',
  'country',
  'device_type',
  'referrer',
  'is_bot',
];

export interface RedirectOptions {
  /** Scan buffer flush interval (default 1000 ms) and batch size (default 10,000). */
  flushMs?: number;
  maxRows?: number;
  /** Redirect counter flush interval (default 1000 ms). */
  counterFlushMs?: number;
  /** Insert attempts before a batch is spilled, and the first backoff. */
  insertAttempts?: number;
  backoffMs?: number;
  spillDir?: string;
  throttle?: ThrottleOptions;
}

export interface RedirectListener {
  port: number;
  close(): Promise<void>;
  scans: ScanBuffer<ScanRow>;
  orphans: ScanBuffer<OrphanRow>;
  counters: RedirectCounters;
  cache: RedirectCache;
}

const SLUG = /^[A-Za-z0-9_-]{1,64}$/;
const ORG_SLUG = /^[A-Za-z0-9_-]{1,100}$/;
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'private, max-age=0',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
};
const PRELANDER_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

function utcStamp(d: Date): string {
  // '2024-01-02T03:04:05.678Z' → '2024-01-02 03:04:05.678', what DateTime64(3) reads.
  return d.toISOString().slice(0, 23).replace('T', ' ');
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

function readForm(req: http.IncomingMessage, limit = 4096): Promise<URLSearchParams | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', () => resolve(null));
  });
}

export class RedirectHandler {
  private readonly trust: net.BlockList | null;
  private readonly throttle: PasswordThrottle;

  constructor(
    private readonly app: AppContext,
    private readonly enricher: Enricher,
    readonly cache: RedirectCache,
    readonly counters: RedirectCounters,
    readonly scans: ScanBuffer<ScanRow>,
    readonly orphans: ScanBuffer<OrphanRow>,
    opts: RedirectOptions,
  ) {
    this.trust = app.config.trustProxy.length ? trustList(app.config.trustProxy) : null;
    this.throttle = new PasswordThrottle(opts.throttle);
  }

  readonly listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    this.handle(req, res).catch((err) => {
      this.app.log.error({ err, host: req.headers.host, url: req.url }, 'redirect failed');
      if (!res.headersSent)
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end('Internal error\n');
    });
  };

  private page(
    res: http.ServerResponse,
    head: boolean,
    status: number,
    html: string,
    extra: Record<string, string | string[]> = {},
  ): void {
    res.writeHead(status, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(html), ...extra });
    res.end(head ? undefined : html);
  }

  private redirect(
    res: http.ServerResponse,
    status: number,
    location: string,
    extra: Record<string, string | string[]> = {},
  ): void {
    res.writeHead(status, { Location: location, 'Cache-Control': 'private, max-age=0', 'Content-Length': 0, ...extra });
    res.end();
  }

  private async domainFor(host: string): Promise<DomainEntry | null> {
    let d = this.cache.peekDomain(host);
    if (d === undefined) d = await this.cache.loadDomain(host);
    if (d === null) {
      // A custom domain is stored without a port; a Host header may carry one.
      const colon = host.lastIndexOf(':');
      if (colon > 0 && !host.endsWith(']')) {
        const bare = host.slice(0, colon);
        d = this.cache.peekDomain(bare);
        if (d === undefined) d = await this.cache.loadDomain(bare);
        if (d && d.type !== 'custom') d = null;
      }
    }
    return d;
  }

  private async codeFor(key: string): Promise<CodeEntry | null> {
    const c = this.cache.peekCode(key);
    return c === undefined ? this.cache.loadCode(key) : c;
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    if (method !== 'GET' && !head && method !== 'POST') {
      res.writeHead(405, { Allow: 'GET, HEAD, POST', 'Content-Length': 0 });
      res.end();
      return;
    }
    const host = (req.headers.host ?? '').toLowerCase();
    const domain = host ? await this.domainFor(host) : null;
    if (!domain || !domain.active) return this.page(res, head, 404, notFoundPage());

    const rawPath = (req.url ?? '/').split('?')[0];
    const pathname = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    if (pathname === '/' || pathname === '') {
      if (domain.rootRedirect) return this.redirect(res, 302, domain.rootRedirect);
      return this.page(res, head, 404, notFoundPage());
    }
    const parts = pathname.slice(1).split('/').map(safeDecode);
    let key: string | null = null;
    if (
      domain.type === 'fallback' &&
      parts.length === 2 &&
      parts[0] &&
      parts[1] &&
      ORG_SLUG.test(parts[0]) &&
      SLUG.test(parts[1])
    ) {
      key = `${parts[0]}/${parts[1]}`.toLowerCase();
    } else if (domain.type === 'custom' && parts.length === 1 && parts[0] && SLUG.test(parts[0]) && domain.orgSlug) {
      key = `${domain.orgSlug}/${parts[0]}`.toLowerCase();
    }
    let code = key ? await this.codeFor(key) : null;
    // A custom domain serves only its own codes; fallback origins serve the codes made on one.
    if (code && (domain.type === 'custom' ? code.domainId !== domain.id : code.domainType !== 'fallback')) code = null;
    if (!code || code.settings.status !== 'active') {
      if (!head) this.orphan(req, domain, host, pathname, code ? 'inactive' : 'unknown');
      if (domain.notFoundRedirect) return this.redirect(res, 302, domain.notFoundRedirect);
      return this.page(res, head, 404, notFoundPage());
    }

    const now = this.app.clock.now();
    const ua = req.headers['user-agent'] ?? '';
    const ip = this.clientIp(req);
    const agent = this.enricher.agent(ua);
    const network = this.enricher.network(ip);
    const visitor: Visitor = {
      device: agent.device,
      os: agent.os,
      country: network.country,
      language: primaryLanguage(req.headers['accept-language']),
      visitorHash: this.enricher.visitorHash(ip, ua),
    };
    const decision = decide(code.settings, visitor, now, code.parsed);
    if (decision.kind === 'not_found') return this.page(res, head, 404, notFoundPage());
    if (decision.kind === 'gone') return this.page(res, head, 410, gonePage(decision.reason));

    let status = 302;
    let setCookie: string | null = null;
    if (code.passwordHash) {
      const name = cookieName(code.id);
      if (method === 'POST') {
        const throttleKey = `${code.id}|${ip}`;
        const wait = this.throttle.retryAfter(throttleKey, now.getTime());
        if (wait > 0) return this.page(res, false, 429, throttledPage(wait), { 'Retry-After': String(wait) });
        const form = await readForm(req);
        const given = form?.get('password') ?? '';
        if (!given || !(await verifyPassword(given, code.passwordHash))) {
          this.throttle.fail(throttleKey, now.getTime());
          return this.page(res, false, 401, passwordPage({ action: pathname, error: 'That password is not correct.' }));
        }
        this.throttle.succeed(throttleKey);
        setCookie = `${name}=${issueCookie(this.app.secretKey, code.id, code.passwordHash, now)}; Max-Age=${COOKIE_TTL_SECONDS}; Path=/; HttpOnly; SameSite=Lax${this.secure(req) ? '; Secure' : ''}`;
        status = 303; // POST → GET of the destination
      } else if (
        !cookieValid(this.app.secretKey, code.id, code.passwordHash, readCookie(req.headers.cookie, name), now)
      ) {
        return this.page(res, head, 200, passwordPage({ action: pathname }));
      }
    } else if (method === 'POST') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 });
      res.end();
      return;
    }

    // HEAD answers like GET but is not a visit: no count, no scan.
    if (!head) {
      if (code.redirectCap !== null) {
        const ok = this.counters.take(code.id);
        if (!(ok === true || (ok !== false && (await ok)))) return this.page(res, false, 410, gonePage('cap_reached'));
      } else this.counters.count(code.id);
    }
    const extra: Record<string, string> = setCookie ? { 'Set-Cookie': setCookie } : {};
    if (code.prelander) {
      this.page(
        res,
        head,
        200,
        prelanderPage({ url: decision.url, seconds: code.prelander.seconds, message: code.prelander.message }),
        {
          ...extra,
          'Content-Security-Policy': PRELANDER_CSP,
        },
      );
    } else this.redirect(res, status, decision.url, extra);
    if (head) return;

    this.scans.push({
      scan_id: fastUlid(now.getTime()),
      scanned_at: utcStamp(now),
      org_id: code.orgId,
      brand_id: code.brandId,
      domain_id: domain.type === 'fallback' ? 0 : domain.id,
      code_id: code.id,
      visitor_hash: visitor.visitorHash,
      country: network.country,
      device_type: agent.device,
      os: agent.os,
      browser: agent.browser,
      referrer: referrerHost(req.headers.referer),
      language: visitor.language,
      provider: network.provider,
      asn: network.asn,
      is_bot: agent.isBot ? 1 : 0,
      matched_rule: decision.matchedRule,
    });
  }

  /** Whether the visitor reached us over https (directly, or through a trusted proxy that says so). */
  private secure(req: http.IncomingMessage): boolean {
    if ((req.socket as { encrypted?: boolean }).encrypted) return true;
    const peer = normaliseIp(req.socket.remoteAddress ?? '');
    return (
      !!this.trust &&
      net.isIP(peer) !== 0 &&
      this.trust.check(peer, net.isIPv6(peer) ? 'ipv6' : 'ipv4') &&
      req.headers['x-forwarded-proto'] === 'https'
    );
  }

  private clientIp(req: http.IncomingMessage): string {
    return this.trust
      ? clientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.trust)
      : normaliseIp(req.socket.remoteAddress ?? '');
  }

  private orphan(
    req: http.IncomingMessage,
    domain: DomainEntry,
    host: string,
    pathname: string,
    reason: 'unknown' | 'inactive',
  ): void {
    const ua = req.headers['user-agent'] ?? '';
    const ip = this.clientIp(req);
    const agent = this.enricher.agent(ua);
    const now = this.app.clock.now();
    this.orphans.push({
      scan_id: fastUlid(now.getTime()),
      scanned_at: utcStamp(now),
      org_id: domain.orgId ?? 0,
      domain_id: domain.type === 'fallback' ? 0 : domain.id,
      host: host.slice(0, 255),
      path: pathname.slice(0, 512),
      reason,
      visitor_hash: this.enricher.visitorHash(ip, ua),
      country: this.enricher.network(ip).country,
      device_type: agent.device,
      referrer: referrerHost(req.headers.referer),
      is_bot: agent.isBot ? 1 : 0,
    });
  }
}

/** Builds the redirect's parts on an application context and serves them on a port. */
export async function startRedirectListener(
  app: AppContext,
  port: number,
  host: string,
  opts: RedirectOptions = {},
): Promise<RedirectListener> {
  const spillDir = opts.spillDir ?? path.join(app.config.dataDir, 'spill');
  const enricher = createEnricher(await loadGeoData(), app.secretKey);
  const cache = new RedirectCache(app.db, app.databaseUrl, app.log);
  await cache.start();
  const counters = new RedirectCounters(app.db, app.log, { flushMs: opts.counterFlushMs });
  counters.start();
  const buffer = <R extends object>(table: string, columns: readonly (keyof R & string)[]) =>
    new ScanBuffer<R>({
      client: app.ch.client,
      table: `${app.ch.database}.${table}`,
      columns,
      spillDir,
      log: app.log,
      flushMs: opts.flushMs,
      maxRows: opts.maxRows,
      attempts: opts.insertAttempts,
      backoffMs: opts.backoffMs,
    });
  const scans = buffer<ScanRow>('scan_events', SCAN_COLUMNS);
  const orphans = buffer<OrphanRow>('orphan_scans', ORPHAN_COLUMNS);
  scans.start();
  orphans.start();
  const handler = new RedirectHandler(app, enricher, cache, counters, scans, orphans, opts);

  const server = http.createServer({ keepAliveTimeout: 5000 }, handler.listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as net.AddressInfo).port;
  app.log.info({ port: bound, host }, 'redirect listener started');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, let requests in flight finish (a grace period, then cut), then drain.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 5000);
      await stopped;
      clearTimeout(grace);
      await Promise.all([scans.close(), orphans.close(), counters.close()]);
      await cache.close();
    })());
  app.onClose(close);
  return { port: bound, close, scans, orphans, counters, cache };
}
