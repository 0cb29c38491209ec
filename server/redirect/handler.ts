// The redirect's request handling: Host + path → domain → code → decision → answer, then the scan.
// Bare node:http rather than Koa: this is the hot path, and it needs no middleware stack (the bench,
// test/bench/redirect.ts, compares it with a bare server answering the same 302).
//
// Order of a request: domain (cache) → code (cache, else Postgres) → decision (qr-codes/routing.ts)
// → password / cap (password.ts, counters.ts; Postgres only when a block of a capped code is used
// up) → scan into the buffer → 302. Nothing here waits for ClickHouse.
import type http from 'node:http';
import { NO_GS1, type ScanGs1 } from '../analytics/scan-event.js';
import type { AppContext } from '../context.js';
import { fastUlid } from '../ids.js';
import { appendScanId, decide, type Visitor } from '../qr-codes/routing.js';
import { slugKey } from '../qr-codes/slug.js';
import type { CodeEntry, DomainEntry, RedirectCache } from './cache.js';
import type { RedirectCounters } from './counters.js';
import { clientIp, normaliseIp, trustList, type TrustList } from '../http-common/client-ip.js';
import { referrerHost, type AgentInfo, type Enricher, type NetworkInfo } from './enrich.js';
import {
  GONE_PAGES,
  NOT_FOUND_PAGE,
  passwordPage,
  pixelPage,
  PRELANDER_CSP,
  prelanderPage,
  throttledPage,
  TOO_LARGE_PAGE,
} from './pages.js';
import { answerPasswordForm, cookieName, cookieValid, FORM_LIMIT_BYTES, readCookie } from './password.js';
import { DEFAULT_ORPHANS_PER_SECOND, OrphanSampler } from './orphan-sampler.js';
import { PasswordThrottle, type ThrottleOptions } from './password-throttle.js';
import { ACME_CHALLENGE_PREFIX, type ChallengeCache } from './acme-challenge.js';
import type { ScanBuffer } from './scan-buffer.js';
import type { AnswerGate } from './scan-ipc.js';
import { utcStamp, type ActionRow, type OrphanRow, type ScanRow } from './scan-rows.js';
import { landingAction, landingPage, storeFor } from '../landing/page.js';
import { pageLanguage } from '../landing/i18n.js';
import { landingQuery, type LandingQuery } from '../landing/query.js';
import {
  CONSENT_COOKIE,
  carriedScanId,
  consentChoice,
  consentCookie,
  pixelRecipients,
  rememberedConsent,
  type ConsentChoice,
  type ConsentOutcome,
} from '../qr-codes/pixels.js';
import { looksLikeAi, parseKeySegments, type ParsedPath } from '../qr-codes/gs1.js';
import { resolverStem } from '../qr-codes/gs1-links.js';
import { decompressSegment } from '../qr-codes/gs1-compression.js';
import type { Gs1Entry } from '../qr-codes/scan-lookup.js';
import { CORS, descriptionFile, gs1Answer, gs1Gone, PREFLIGHT, type Gs1Answer } from './gs1.js';
import { CUSTOM_SCRIPT_PREFIX, parseScriptName, withCustomScript } from '../qr-codes/custom-js.js';

/** A visit being answered: what the decision and the scan need. */
interface Visit {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  head: boolean;
  domain: DomainEntry;
  code: CodeEntry;
  now: Date;
  url: string;
  rule: number;
  agent: AgentInfo;
  network: NetworkInfo;
  visitor: Visitor;
  /** Answered with the code's landing page (vcard, links, app, event) instead of a redirect. */
  page: boolean;
  /**
   * A code with pixels: the consent known when the scan is recorded, or `ask` (the banner asks, the
   * answer comes with the next request); null for a code without pixels.
   */
  consent: Exclude<ConsentOutcome, 'none'> | 'ask' | null;
  /** The Path of the consent cookie: per domain, and per organization on a shared fallback host. */
  cookiePath: string;
  /** The scan's id when the destination carries it (conversion_tracking); else made when recorded. */
  scanId: string | null;
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
/** PAGE_HEADERS as names and values in turn (page() sends them as a flat list). */
const PAGE_HEADER_LIST: readonly string[] = Object.entries(PAGE_HEADERS).flat();
/** How long the consent banner waits for an answer when the code has no prelander time of its own. */
const CONSENT_BANNER_SECONDS = 10;

/**
 * How much of a body too large to take is still read (and dropped) before the 413: a client that is
 * still sending it then reads the answer, where closing at once would reset its connection first.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

function declaredLength(req: http.IncomingMessage): number {
  const value = req.headers['content-length'];
  return value === undefined ? 0 : Number(value);
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * The organization slug and key segments (`['01', '<gtin>', …]`) of a Digital Link path: /01/… on a
 * custom domain, /<org-slug>/01/… on a fallback host; null for any other path, told by its first
 * characters before anything is split.
 */
function digitalLinkPath(rawPath: string, domain: DomainEntry): { orgSlug: string; segments: string[] } | null {
  let start = 1;
  if (domain.type === 'fallback') {
    const slash = rawPath.indexOf('/', 1);
    if (slash === -1) return null;
    start = slash + 1;
  } else if (domain.type !== 'custom' || !domain.orgSlug) return null;
  const first = rawPath.charCodeAt(start);
  if (!(first >= 48 && first <= 57)) return null; // an application identifier is digits
  const orgSlug = domain.type === 'fallback' ? rawPath.slice(1, start - 1) : domain.orgSlug!;
  if (domain.type === 'fallback' && !ORG_SLUG.test(orgSlug)) return null;
  const segments = rawPath.slice(start).split('/');
  return segments.length >= 2 && looksLikeAi(segments[0]) ? { orgSlug, segments } : null;
}

export class RedirectHandler {
  private readonly trust: TrustList | null;
  private readonly throttle: PasswordThrottle;
  /** A redirect process of several: answers wait until their scans are journaled (scan-ipc.ts). */
  private readonly answerGate: AnswerGate | null;
  private readonly orphanSampler: OrphanSampler;

  constructor(
    private readonly app: AppContext,
    private readonly enricher: Enricher,
    readonly cache: RedirectCache,
    readonly counters: RedirectCounters,
    readonly scans: ScanBuffer<ScanRow>,
    readonly orphans: ScanBuffer<OrphanRow>,
    readonly actions: ScanBuffer<ActionRow>,
    readonly challenges: ChallengeCache,
    opts: {
      throttle?: ThrottleOptions;
      orphansPerSecond?: number;
      answerGate?: AnswerGate;
    } = {},
  ) {
    this.answerGate = opts.answerGate ?? null;
    this.trust = app.config.trustProxy.length ? trustList(app.config.trustProxy) : null;
    this.throttle = new PasswordThrottle(app.db, app.secretKey, opts.throttle);
    this.orphanSampler = new OrphanSampler(opts.orphansPerSecond ?? DEFAULT_ORPHANS_PER_SECOND, () =>
      app.metrics.orphanScansDropped.inc(),
    );
  }

  readonly listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    // A served redirect whose domain and code are cached runs synchronously, start to finish: no
    // promise, no microtask. Only a cache miss, a password form or a used-up cap block awaits.
    try {
      this.handle(req, res)?.catch((err: unknown) => this.fail(req, res, err));
    } catch (err) {
      this.fail(req, res, err);
    }
  };

  /**
   * `Expect: 100-continue` (the server's 'checkContinue'): a body larger than any form the redirect
   * takes is refused before the client sends it, instead of a 100 Continue and then a 413.
   */
  readonly checkContinue = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (declaredLength(req) > FORM_LIMIT_BYTES) {
      this.page(res, false, 413, TOO_LARGE_PAGE, { Connection: 'close' });
      return;
    }
    res.writeContinue();
    this.listener(req, res);
  };

  /** 413 for a body over FORM_LIMIT_BYTES, after dropping what is left of it if that is small. */
  private tooLarge(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.readableEnded || declaredLength(req) > DRAIN_LIMIT_BYTES) {
      this.page(res, false, 413, TOO_LARGE_PAGE, { Connection: 'close' });
      return;
    }
    let drained = 0;
    const onData = (c: Buffer) => {
      drained += c.length;
      if (drained > DRAIN_LIMIT_BYTES) {
        req.off('data', onData);
        req.off('end', onEnd);
        this.page(res, false, 413, TOO_LARGE_PAGE, { Connection: 'close' });
      }
    };
    const onEnd = () => this.page(res, false, 413, TOO_LARGE_PAGE);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', () => res.destroy());
    req.resume();
  }

  private fail(req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
    this.app.log.error({ err, host: req.headers.host, url: req.url }, 'redirect failed');
    if (!res.headersSent)
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end('Internal error\n');
  }

  /**
   * An answer of the request path that records no scan (a 404 or 410 page, a domain's root or
   * not-found redirect), sent with the answers of the same turn of the event loop when there is a
   * gate: answers that leave together after the round of I/O cost less CPU than each at once (a flood
   * of unknown slugs: 82-94 against 62-82 µs a 404, docs/redirect.md).
   */
  private later(answer: () => void): void {
    if (this.answerGate) this.answerGate.after(answer);
    else answer();
  }

  /** The 404 page: every one the redirect sends, through later(). */
  private notFound(res: http.ServerResponse, head: boolean): void {
    this.later(() => this.page(res, head, 404, NOT_FOUND_PAGE));
  }

  /**
   * A page with PAGE_HEADERS, those of `extra` in their place. The headers go to writeHead as one flat
   * list of names and values: an object spread per request cost several microseconds here.
   */
  private page(
    res: http.ServerResponse,
    head: boolean,
    status: number,
    html: string | Buffer,
    extra: Record<string, string | string[]> | null = null,
  ): void {
    const headers: (string | string[])[] = [];
    for (let i = 0; i < PAGE_HEADER_LIST.length; i += 2) {
      if (!extra || !(PAGE_HEADER_LIST[i] in extra)) headers.push(PAGE_HEADER_LIST[i], PAGE_HEADER_LIST[i + 1]);
    }
    headers.push('Content-Length', String(Buffer.byteLength(html)));
    if (extra) for (const name in extra) headers.push(name, extra[name]);
    res.writeHead(status, headers);
    res.end(head ? undefined : html);
  }

  private redirect(res: http.ServerResponse, status: number, location: string, setCookie: string | null = null): void {
    res.writeHead(
      status,
      setCookie
        ? { Location: location, 'Cache-Control': 'private, max-age=0', 'Content-Length': 0, 'Set-Cookie': setCookie }
        : { Location: location, 'Cache-Control': 'private, max-age=0', 'Content-Length': 0 },
    );
    res.end();
  }

  /** The domain of a Host header from the cache: an entry, null (none), or undefined (ask Postgres). */
  private peekDomainFor(host: string): DomainEntry | null | undefined {
    const d = this.cache.peekDomain(host);
    if (d !== null) return d;
    // A custom domain is stored without a port; a Host header may carry one.
    const colon = host.lastIndexOf(':');
    if (colon > 0 && !host.endsWith(']')) {
      const bare = this.cache.peekDomain(host.slice(0, colon));
      if (bare === undefined) return undefined;
      return bare && bare.type === 'custom' ? bare : null;
    }
    return null;
  }

  private async domainFor(host: string): Promise<DomainEntry | null> {
    let d = this.cache.peekDomain(host);
    if (d === undefined) d = await this.cache.loadDomain(host);
    if (d === null) {
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

  handle(req: http.IncomingMessage, res: http.ServerResponse): void | Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST' && method !== 'OPTIONS') {
      res.writeHead(405, { Allow: 'GET, HEAD, POST', 'Content-Length': 0 });
      res.end();
      return;
    }
    if (method === 'POST' && declaredLength(req) > FORM_LIMIT_BYTES) return this.tooLarge(req, res);
    // HTTP-01 validations of certificate issuance, before any domain rule (never a 308).
    if (method !== 'POST' && req.url?.startsWith(ACME_CHALLENGE_PREFIX)) {
      return this.challenges.answer(req, res, this.app.clock.now());
    }
    let host = (req.headers.host ?? '').toLowerCase();
    // The fully qualified spelling (`qr.example.com.`, with or without a port) names the same host.
    if (host.endsWith('.')) host = host.slice(0, -1);
    else if (host.includes('.:')) host = host.replace('.:', ':');
    if (!host) return this.withDomain(req, res, method, host, null);
    const domain = this.peekDomainFor(host);
    if (domain === undefined) return this.domainFor(host).then((d) => this.withDomain(req, res, method, host, d));
    return this.withDomain(req, res, method, host, domain);
  }

  private withDomain(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    host: string,
    domain: DomainEntry | null,
  ): void | Promise<void> {
    const head = method === 'HEAD';
    if (!domain) return this.notFound(res, head);
    if (domain.answersUntil !== Infinity || domain.httpsUntil !== 0) {
      const now = this.app.clock.now().getTime();
      if (now >= domain.answersUntil) return this.notFound(res, head);
      if (now < domain.httpsUntil && !this.secure(req)) {
        // Permanent, method-preserving: a form posted over HTTP is posted again over HTTPS.
        const bare = host.lastIndexOf(':') > 0 && !host.endsWith(']') ? host.slice(0, host.lastIndexOf(':')) : host;
        return this.redirect(res, 308, `https://${bare}${req.url ?? '/'}`);
      }
    }

    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    // GS1 Digital Link (docs/gs1.md): /01/<gtin>… on a custom domain, /<org-slug>/01/<gtin>… on a
    // fallback host; the resolver description file at /.well-known/gs1resolver of every domain.
    const link = digitalLinkPath(rawPath, domain);
    if (link) return this.gs1(req, res, method, domain, link.orgSlug, link.segments, q === -1 ? '' : url.slice(q + 1));
    if (rawPath === '/.well-known/gs1resolver' && method !== 'POST') return this.gs1Description(res, method, domain);
    // A code's custom_js, on its own verified custom domain only (on a fallback host this path is a 404 like any other).
    if (domain.type === 'custom' && rawPath.startsWith(CUSTOM_SCRIPT_PREFIX) && (method === 'GET' || method === 'HEAD'))
      return this.customScript(res, method === 'HEAD', domain, rawPath.slice(CUSTOM_SCRIPT_PREFIX.length));
    if (method === 'OPTIONS') {
      res.writeHead(405, { Allow: 'GET, HEAD, POST', 'Content-Length': 0 });
      res.end();
      return;
    }
    const pathname = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    if (pathname === '/' || pathname === '') {
      const rootRedirect = domain.rootRedirect;
      if (rootRedirect) return this.later(() => this.redirect(res, 302, rootRedirect));
      return this.notFound(res, head);
    }
    const rest = pathname.slice(1);
    const parts = rest.includes('%') ? rest.split('/').map(safeDecode) : rest.split('/');
    let key: string | null = null;
    if (
      domain.type === 'fallback' &&
      parts.length === 2 &&
      parts[0] &&
      parts[1] &&
      ORG_SLUG.test(parts[0]) &&
      SLUG.test(parts[1])
    ) {
      key = slugKey(parts[0], parts[1]);
    } else if (domain.type === 'custom' && parts.length === 1 && parts[0] && SLUG.test(parts[0]) && domain.orgSlug) {
      key = slugKey(domain.orgSlug, parts[0]);
    }
    if (!key) return this.withCode(req, res, method, host, domain, pathname, null);
    const code = this.cache.peekCode(key);
    if (code === undefined) {
      return this.cache.loadCode(key).then((c) => this.withCode(req, res, method, host, domain, pathname, c));
    }
    return this.withCode(req, res, method, host, domain, pathname, code);
  }

  private withCode(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    host: string,
    domain: DomainEntry,
    pathname: string,
    found: CodeEntry | null,
  ): void | Promise<void> {
    const head = method === 'HEAD';
    // A custom domain serves only its own codes; fallback origins serve the codes made on one.
    const code =
      found && (domain.type === 'custom' ? found.domainId !== domain.id : found.domainType !== 'fallback')
        ? null
        : found;
    if (!found) {
      // Not a slug: perhaps a compressed GS1 Digital Link (one segment after the stem).
      const gs1 = this.compressedGs1(req, res, method, domain, pathname);
      if (gs1 !== false) return gs1;
    }
    if (!code || code.settings.status !== 'active') {
      if (!head && this.orphanSampler.take(domain.id, Date.now())) {
        this.orphan(req, domain, host, pathname, code ? 'inactive' : 'unknown');
      }
      const notFoundRedirect = domain.notFoundRedirect;
      if (notFoundRedirect) return this.later(() => this.redirect(res, 302, notFoundRedirect));
      return this.notFound(res, head);
    }
    // A static code's QR holds its payload: its public_url is never printed, and answers nothing.
    if (code.type !== 'url' && !code.landing) return this.notFound(res, head);

    const now = this.app.clock.now();
    const ua = req.headers['user-agent'] ?? '';
    const ip = this.clientIp(req);
    const agent = this.enricher.agent(ua);
    const network = this.enricher.network(ip);
    const visitor: Visitor = {
      device: agent.device,
      os: agent.os,
      country: network.country,
      language: this.enricher.language(req.headers['accept-language']),
      visitorHash: this.enricher.visitorHash(ip, ua),
    };
    const decision = decide(code.settings, visitor, now, code.parsed);
    if (decision.kind === 'not_found') return this.notFound(res, head);
    // A landing-page code has no URL of its own: where routing and schedule send nowhere, the page answers.
    const page = !!code.landing && decision.kind === 'gone' && decision.reason === 'no_destination';
    if (decision.kind === 'gone' && !page)
      return this.later(() => this.page(res, head, 410, GONE_PAGES[decision.reason]));
    const visit: Visit = {
      req,
      res,
      head,
      domain,
      code,
      now,
      url: decision.kind === 'redirect' ? decision.url : '',
      rule: decision.kind === 'redirect' ? decision.matchedRule : -1,
      agent,
      network,
      visitor,
      page,
      consent: null,
      cookiePath: '/',
      scanId: null,
    };
    // The pixel page's answer (?qr_consent=): not a scan of its own (onConsent).
    const choice = code.pixels && method !== 'POST' ? consentChoice(req.url) : null;
    if (code.conversionTracking && decision.kind === 'redirect') {
      // Only the pixel page's answer carries on the id of the scan recorded when the page was served;
      // a scan recorded now always gets a new id, whatever its URL says.
      visit.scanId = (choice ? carriedScanId(req.url) : null) ?? fastUlid(now.getTime());
      visit.url = appendScanId(visit.url, visit.scanId);
    }
    if (code.pixels) {
      visit.consent = code.pixels.consentRequired
        ? (rememberedConsent(readCookie(req.headers.cookie, CONSENT_COOKIE) ?? null) ?? 'ask')
        : 'not_required';
      if (domain.type === 'fallback') visit.cookiePath = pathname.slice(0, pathname.indexOf('/', 1));
    }
    const query = page ? landingQuery(req.url) : null;

    if (code.passwordHash) {
      if (method === 'POST') return this.passwordPost(visit, pathname, ip);
      if (
        !cookieValid(
          this.app.secretKey,
          code.id,
          code.passwordHash,
          readCookie(req.headers.cookie, cookieName(code.id)),
          now,
        )
      ) {
        return this.page(res, head, 200, passwordPage({ action: pathname }));
      }
    } else if (method === 'POST') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 });
      res.end();
      return;
    }
    if (choice) return this.onConsent(visit, choice);
    if (query && method !== 'POST') return this.onPage(visit, query);
    return this.count(visit, 302, null);
  }

  /**
   * The pixel page's answer (`?qr_consent=`): recorded as the scan's consent action, remembered in
   * the cookie (an accept or a decline), then on to where the scan goes. Not a second scan.
   */
  private onConsent(visit: Visit, choice: ConsentChoice): void {
    const secure = this.secure(visit.req);
    // Under the scan's id (carried by the page's links) the answer replaces the scan's `asked`.
    if (!visit.head) this.recordAction(visit, `consent_${choice}`, 0, carriedScanId(visit.req.url));
    const cookie = choice === 'none' ? null : consentCookie(choice, visit.cookiePath, secure);
    if (visit.page) return this.redirect(visit.res, 302, '?qr_action=page', cookie);
    this.redirect(visit.res, 302, visit.url, cookie);
  }

  /**
   * A compressed Digital Link at `/<segment>` (custom domain) or `/<org-slug>/<segment>` (fallback):
   * answered as its uncompressed URI, with owl:sameAs; false when the path is not one.
   */
  private compressedGs1(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    domain: DomainEntry,
    pathname: string,
  ): void | Promise<void> | false {
    const parts = pathname.slice(1).split('/');
    const orgSlug = domain.type === 'custom' ? domain.orgSlug : parts.length === 2 ? parts[0] : null;
    const segment = domain.type === 'custom' ? (parts.length === 1 ? parts[0] : null) : parts[1];
    if (!orgSlug || !segment || method === 'POST') return false;
    // Decompressing costs tens of microseconds: not for every unknown slug of an organization without gs1 codes.
    if (!this.cache.mayHaveGs1(orgSlug.toLowerCase())) return false;
    const dl = decompressSegment(segment);
    if (!dl) return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const asked = q === -1 ? '' : url.slice(q + 1);
    const query = [dl.query, asked].filter(Boolean).join('&');
    return this.gs1(req, res, method, domain, orgSlug, dl.segments, query, { query: dl.query });
  }

  /** A GS1 Digital Link request: the codes of its GTIN (cache, else Postgres), then the answer. */
  private gs1(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    domain: DomainEntry,
    orgSlug: string,
    segments: string[],
    query: string,
    compressed?: { query: string },
  ): void | Promise<void> {
    if (method === 'OPTIONS') {
      res.writeHead(204, PREFLIGHT);
      res.end();
      return;
    }
    if (method === 'POST') {
      res.writeHead(405, { ...CORS, Allow: 'GET, HEAD, OPTIONS', 'Content-Length': 0 });
      res.end();
      return;
    }
    const parsed = parseKeySegments(segments);
    if (parsed.kind !== 'key')
      return this.gs1Answer(req, res, method, domain, orgSlug, parsed, null, query, compressed);
    const key = `${orgSlug.toLowerCase()}|${parsed.key.gtin}`;
    const entry = this.cache.peekGs1(key);
    if (entry === undefined) {
      return this.cache
        .loadGs1(key)
        .then((e) => this.gs1Answer(req, res, method, domain, orgSlug, parsed, e, query, compressed));
    }
    return this.gs1Answer(req, res, method, domain, orgSlug, parsed, entry, query, compressed);
  }

  private gs1Answer(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    domain: DomainEntry,
    orgSlug: string,
    parsed: ParsedPath,
    entry: Gs1Entry | null,
    query: string,
    compressed?: { query: string },
  ): void | Promise<void> {
    const head = method === 'HEAD';
    const answer = gs1Answer(parsed, entry, domain, {
      stem: resolverStem(domain, orgSlug),
      query,
      accept: req.headers.accept,
      acceptLanguage: req.headers['accept-language'],
      compressed,
      now: this.app.clock.now(),
    });
    // A capped code at its cap answers 410 and records nothing, like a plain code (count).
    if (!head && answer.code && answer.code.redirectCap !== null) {
      const ok = this.counters.take(answer.code.id);
      if (ok === false) return this.writeGs1(res, head, gs1Gone('cap_reached'));
      if (ok !== true)
        return ok.then((allowed) =>
          allowed ? this.gs1Resolved(req, res, head, domain, answer) : this.writeGs1(res, head, gs1Gone('cap_reached')),
        );
    }
    return this.gs1Resolved(req, res, head, domain, answer);
  }

  /** A resolution served: its scan, with the resolution's GS1 dimensions (not for HEAD), then the answer. */
  private gs1Resolved(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    head: boolean,
    domain: DomainEntry,
    answer: Gs1Answer,
  ): void {
    // Every resolution that found the item is one scan (HEAD is not a visit).
    if (!head && answer.code) {
      const ua = req.headers['user-agent'] ?? '';
      const ip = this.clientIp(req);
      const agent = this.enricher.agent(ua);
      const network = this.enricher.network(ip);
      const key = answer.key!;
      this.pushScan(
        req,
        domain,
        answer.code,
        this.app.clock.now(),
        agent,
        network,
        {
          device: agent.device,
          os: agent.os,
          country: network.country,
          language: this.enricher.language(req.headers['accept-language']),
          visitorHash: this.enricher.visitorHash(ip, ua),
        },
        -1,
        null,
        {
          gtin: key.gtin,
          cpv: key.cpv ?? '',
          lot: key.lot ?? '',
          serial: key.serial ?? '',
          link_type_asked: answer.asked.slice(0, 100),
          link_type_served: answer.served,
        },
      );
    }
    // The answer leaves once its scan is journaled (scan-ipc.ts), like every scan's.
    if (!head && answer.code && this.answerGate) return this.answerGate.after(() => this.writeGs1(res, head, answer));
    this.writeGs1(res, head, answer);
  }

  private writeGs1(
    res: http.ServerResponse,
    head: boolean,
    answer: { status: number; headers: Record<string, string>; body: string },
  ): void {
    const body = answer.body;
    res.writeHead(
      answer.status,
      body ? { ...answer.headers, 'Content-Length': String(Buffer.byteLength(body)) } : answer.headers,
    );
    res.end(head || !body ? undefined : body);
  }

  /** /.well-known/gs1resolver: the resolver description file of this domain. */
  private gs1Description(res: http.ServerResponse, method: string, domain: DomainEntry): void {
    if (method === 'OPTIONS') {
      res.writeHead(204, PREFLIGHT);
      res.end();
      return;
    }
    const root =
      domain.type === 'fallback'
        ? (domain.origin ?? `http://${domain.host}`).replace(/\/+$/, '')
        : `https://${domain.host}`;
    const body = JSON.stringify(descriptionFile(root, domain.host));
    res.writeHead(200, {
      ...CORS,
      'Content-Type': 'application/json',
      'Cache-Control': 'public, max-age=3600',
      'Content-Length': String(Buffer.byteLength(body)),
    });
    res.end(method === 'HEAD' ? undefined : body);
  }

  /**
   * `/_qr/js/<slug>.<version>.js` on a custom domain: the script of the domain's own active code,
   * while the domain is verified and the version is the script's (a page names the file of the
   * script it was built with); anything else is the 404 page.
   */
  private customScript(
    res: http.ServerResponse,
    head: boolean,
    domain: DomainEntry,
    name: string,
  ): void | Promise<void> {
    const parsed = parseScriptName(name);
    if (!parsed || !domain.orgSlug) return this.notFound(res, head);
    const key = slugKey(domain.orgSlug, parsed.slug);
    const send = (code: CodeEntry | null): void => {
      const script = code && code.domainId === domain.id && code.settings.status === 'active' ? code.script : null;
      if (!script || !script.src.endsWith(`.${parsed.version}.js`)) return this.notFound(res, head);
      res.writeHead(200, {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Content-Length': script.body.length,
        // The name changes with the content: a file never changes under its name.
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
        'Cross-Origin-Resource-Policy': 'same-origin',
      });
      res.end(head ? undefined : script.body);
    };
    const code = this.cache.peekCode(key);
    if (code === undefined) return this.cache.loadCode(key).then(send);
    send(code);
  }

  /**
   * A hosted page of a code: with its custom_js (script tag and CSP hash) when it has one. `headers`
   * is a fresh object of the page's own headers, which the answer takes over and adds to (a spread
   * copy of it cost about 10 µs a page: a generic copy and a slow define after it).
   */
  private hostedPage(
    visit: Visit,
    html: string | Buffer,
    csp: string,
    headers: Record<string, string>,
    setCookie: string | null,
  ): void {
    headers['Content-Security-Policy'] = csp;
    let body = html;
    if (visit.code.script) {
      const page = withCustomScript(html, csp, visit.code.script);
      body = page.html;
      headers['Content-Security-Policy'] = page.csp;
    }
    if (setCookie) headers['Set-Cookie'] = setCookie;
    this.page(visit.res, visit.head, 200, body, headers);
  }

  /** The password form posted: 303 to the destination with a cookie, or the form again (401, 429). */
  private async passwordPost(visit: Visit, pathname: string, ip: string): Promise<void> {
    const { req, res, code, now } = visit;
    const answer = await answerPasswordForm(
      req,
      { id: code.id, passwordHash: code.passwordHash! },
      {
        throttle: this.throttle,
        passwords: this.app.passwords,
        ip,
        now,
        key: this.app.secretKey,
        secure: this.secure(req),
      },
    );
    if (answer.kind === 'throttled') {
      return this.page(res, false, 429, throttledPage(answer.retryAfter), { 'Retry-After': String(answer.retryAfter) });
    }
    if (answer.kind === 'too_large') return this.tooLarge(req, res);
    if (answer.kind === 'wrong') {
      return this.page(res, false, 401, passwordPage({ action: pathname, error: 'That password is not correct.' }));
    }
    return this.count(visit, 303, answer.setCookie); // POST → GET of the destination
  }

  /** Counts the visit (HEAD is not one), or refuses it when the code's redirect_cap is reached. */
  private count(visit: Visit, status: number, setCookie: string | null): void | Promise<void> {
    if (!visit.head) {
      const code = visit.code;
      if (code.redirectCap !== null) {
        const ok = this.counters.take(code.id);
        if (ok === false) return this.page(visit.res, false, 410, GONE_PAGES.cap_reached);
        if (ok !== true) {
          return ok.then((allowed) =>
            allowed ? this.serve(visit, status, setCookie) : this.page(visit.res, false, 410, GONE_PAGES.cap_reached),
          );
        }
      }
      // A code without a cap is counted from its scan batch (scan-counts.ts), once per batch.
    }
    this.serve(visit, status, setCookie);
  }

  /**
   * The scan into the buffer, then the answer (302/303, or the prelander page). In this order so
   * that a process without the store has written the scan to its journal (scan-ipc.ts) before the
   * visitor can see the answer: a kill after the answer loses nothing that was served. There the
   * answers of one turn of the event loop wait for one write of their rows (FileJournal, grouped).
   */
  private serve(visit: Visit, status: number, setCookie: string | null): void {
    // HEAD answers like GET but is not a visit: no count, no scan.
    if (!visit.head) {
      this.record(visit);
      if (this.answerGate) return this.answerGate.after(() => this.answer(visit, status, setCookie));
    }
    this.answer(visit, status, setCookie);
  }

  /**
   * A request on a landing page: an action (recorded, then its file or a 302 to its target) or the
   * page itself after a prelander (not a second scan).
   */
  private onPage(visit: Visit, query: LandingQuery): void {
    const { res, head, code, now } = visit;
    const landing = code.landing!;
    if (query.action === 'page') return this.landingPageAnswer(visit, null);
    const answer = landingAction(landing, query.action, query.index, now);
    if (!answer) return this.notFound(res, head);
    if (!head) this.recordAction(visit, query.action, query.action === 'link' ? query.index : 0);
    if (answer.kind === 'redirect') return this.redirect(res, 302, answer.url);
    res.writeHead(200, {
      'Content-Type': answer.contentType,
      'Content-Disposition': `attachment; filename="${answer.filename}"`,
      'Content-Length': answer.body.length,
      'Cache-Control': 'private, max-age=0',
      'X-Content-Type-Options': 'nosniff',
      'X-Robots-Tag': 'noindex',
    });
    res.end(head ? undefined : answer.body);
  }

  /** An action on a landing page, or a consent answer, into scan_actions (with the scan's visitor hash and bot flag). */
  private recordAction(visit: Visit, action: string, target: number, actionId: string | null = null): void {
    const { domain, code, now, agent, visitor } = visit;
    const ms = now.getTime();
    this.actions.push({
      action_id: actionId ?? fastUlid(ms),
      scanned_at: utcStamp(ms),
      org_id: code.orgId,
      brand_id: code.brandId,
      domain_id: domain.type === 'fallback' ? 0 : domain.id,
      code_id: code.id,
      action,
      target,
      visitor_hash: visitor.visitorHash,
      is_bot: agent.isBot ? 1 : 0,
    });
  }

  /** The landing page in the visitor's language (an app code sends phones to their store instead). */
  private landingPageAnswer(visit: Visit, setCookie: string | null): void {
    const { req, res, code, visitor } = visit;
    const landing = code.landing!;
    const store = storeFor(landing, visitor.os);
    if (store) return this.redirect(res, 302, store, setCookie);
    const lang = pageLanguage(landing.config.language, req.headers['accept-language']);
    const built = landingPage(landing, lang);
    this.hostedPage(
      visit,
      built.html,
      built.csp,
      { 'Content-Language': lang, 'X-Robots-Tag': 'noindex, nofollow', Vary: 'Accept-Language, User-Agent' },
      setCookie,
    );
  }

  /** The pixel page: the banner (consent asked) or the pixels at once, then on to the destination or the page. */
  private pixelPageAnswer(visit: Visit, setCookie: string | null): void {
    const { req, code } = visit;
    const pixels = code.pixels!;
    const lang = pageLanguage(code.landing?.config.language, req.headers['accept-language']);
    const ask = visit.consent === 'ask';
    const html = pixelPage({
      lang,
      script: pixels.script,
      recipients: pixelRecipients(pixels.pixels),
      mode: ask ? 'ask' : 'load',
      answerSuffix: visit.scanId ? `&qr_scan=${visit.scanId}` : '',
      next: visit.page ? '?qr_action=page' : visit.url,
      seconds: code.prelander?.seconds ?? (ask ? CONSENT_BANNER_SECONDS : 0),
      message: code.prelander?.message ?? null,
    });
    this.hostedPage(
      visit,
      html,
      pixels.csp,
      { 'Content-Language': lang, 'X-Robots-Tag': 'noindex, nofollow', Vary: 'Accept-Language, Cookie' },
      setCookie,
    );
  }

  private answer(visit: Visit, status: number, setCookie: string | null): void {
    const { res, code } = visit;
    // A declined consent loads nothing: the code answers as one without pixels.
    if (visit.consent !== null && visit.consent !== 'denied') return this.pixelPageAnswer(visit, setCookie);
    if (visit.page && !code.prelander) return this.landingPageAnswer(visit, setCookie);
    // A url code with custom_js is answered with the interstitial (0 seconds unless it has a prelander): its script runs there.
    if (code.prelander || code.script) {
      // A landing page comes after the prelander as the page itself (?qr_action=page), not as a second scan.
      const url = visit.page ? '?qr_action=page' : visit.url;
      const html = prelanderPage({
        url,
        seconds: code.prelander?.seconds ?? 0,
        message: code.prelander?.message ?? null,
      });
      this.hostedPage(visit, html, PRELANDER_CSP, {}, setCookie);
    } else this.redirect(res, status, visit.url, setCookie);
  }

  private record(visit: Visit): void {
    const scanId = this.pushScan(
      visit.req,
      visit.domain,
      visit.code,
      visit.now,
      visit.agent,
      visit.network,
      visit.visitor,
      visit.rule,
      visit.scanId,
    );
    if (visit.consent === null) return;
    // A consent known now is the scan's. One asked for is `asked` (counted as none) until the page's
    // answer comes (onConsent) under the same id, the scan's, which the page's links carry.
    visit.scanId = scanId;
    this.recordAction(visit, visit.consent === 'ask' ? 'consent_asked' : `consent_${visit.consent}`, 0, scanId);
  }

  /** One scan event into the buffer: the code's organization, brand and id, and the visitor. */
  private pushScan(
    req: http.IncomingMessage,
    domain: DomainEntry,
    code: { orgId: number; brandId: number; id: number },
    now: Date,
    agent: AgentInfo,
    network: NetworkInfo,
    visitor: Visitor,
    rule: number,
    /** The id the destination was given (conversion_tracking); else a new one. */
    givenId: string | null = null,
    /** A GS1 resolution's dimensions; '' for every other scan. */
    gs1: Readonly<ScanGs1> = NO_GS1,
  ): string {
    const ms = now.getTime();
    const scanId = givenId ?? fastUlid(ms);
    this.scans.push({
      scan_id: scanId,
      scanned_at: utcStamp(ms),
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
      matched_rule: rule,
      gtin: gs1.gtin,
      cpv: gs1.cpv,
      lot: gs1.lot,
      serial: gs1.serial,
      link_type_asked: gs1.link_type_asked,
      link_type_served: gs1.link_type_served,
    });
    return scanId;
  }

  /** Whether the visitor reached us over https (directly, or through a trusted proxy that says so). */
  private secure(req: http.IncomingMessage): boolean {
    if ((req.socket as { encrypted?: boolean }).encrypted) return true;
    const peer = normaliseIp(req.socket.remoteAddress ?? '');
    return !!this.trust && this.trust.has(peer) && req.headers['x-forwarded-proto'] === 'https';
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
      scanned_at: utcStamp(now.getTime()),
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
