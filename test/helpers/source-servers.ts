// Link services on loopback (node:http) speaking the documented API shapes the importers read, with
// faults on demand (429 with Retry-After, 500) and a log of the requests:
// - Shlink REST v3 (https://shlink.io/documentation/api-docs/): X-Api-Key, GET /rest/v3/short-urls
//   (shortUrls {data, pagination}), .../{shortCode}/redirect-rules, .../{shortCode}/visits (newest
//   first, filtered by startDate/endDate, paginated), /rest/v3/visits (visit totals) and
//   /rest/v3/visits/orphan (orphan visits with visitedUrl and type, like a short URL's visits),
//   RFC 7807 problem bodies.
// - Bitly API v4 (https://dev.bitly.com/api-reference): bearer token, GET /v4/groups,
//   /v4/groups/{guid}/bitlinks (links + pagination with next and search_after),
//   /v4/bitlinks/{bitlink}/clicks (link_clicks per day), errors {message, description}.
// - Dub (https://dub.co/docs/api-reference): bearer API key, GET /links?page=&pageSize= (an array),
//   errors {error: {code, message, doc_url}}.
// - Kutt API v2 (https://docs.kutt.it): X-API-KEY, GET /api/v2/links (limit, skip; {data, total}),
//   errors {error}.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ShlinkUrl {
  shortCode: string;
  longUrl: string;
  dateCreated: string;
  domain: string | null;
  title?: string | null;
  tags?: string[];
  meta?: { validSince: string | null; validUntil: string | null; maxVisits: number | null };
  rules?: {
    longUrl: string;
    priority: number;
    conditions: { type: string; matchKey: string | null; matchValue: string }[];
  }[];
  visits: { date: string; referer: string; userAgent: string; countryCode: string | null; potentialBot?: boolean }[];
}

interface Fault {
  /** Matched against the request path and query. */
  match: RegExp;
  status: number;
  headers?: Record<string, string>;
  times: number;
  /** Matching requests let through before the fault starts. */
  after?: number;
}

/** A server that answers what `route` says, after the faults. */
abstract class SourceServer {
  faults: Fault[] = [];
  readonly requests: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  private server!: http.Server;
  port = 0;

  protected async listen(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      this.requests.push({ path: u.pathname + u.search, headers: req.headers });
      const fault = this.faults.find((f) => f.times > 0 && f.match.test(u.pathname + u.search));
      if (fault && (fault.after ?? 0) > 0) fault.after!--;
      else if (fault) {
        fault.times--;
        return this.error(
          res,
          fault.status,
          fault.status === 429 ? 'Too many requests' : 'Internal Server Error',
          fault.headers,
        );
      }
      this.route(req, u, res);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  protected json(res: http.ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  /** The service's own error body. */
  protected abstract error(
    res: http.ServerResponse,
    status: number,
    title: string,
    headers?: Record<string, string>,
  ): void;
  protected abstract route(req: http.IncomingMessage, u: URL, res: http.ServerResponse): void;
}

/** Page `page` (1-based) of `all`, `perPage` a page (-1: everything on one page). */
function pageOf<T>(all: T[], page: number, perPage: number) {
  const size = perPage > 0 ? perPage : Math.max(all.length, 1);
  const pagesCount = Math.max(1, Math.ceil(all.length / size));
  const data = all.slice((page - 1) * size, page * size);
  return {
    data,
    pagination: {
      currentPage: page,
      pagesCount,
      itemsPerPage: size,
      itemsInCurrentPage: data.length,
      totalItems: all.length,
    },
  };
}

export type ShlinkVisit = ShlinkUrl['visits'][number];
export type ShlinkOrphanVisit = ShlinkVisit & {
  visitedUrl: string;
  type: 'base_url' | 'invalid_short_url' | 'regular_404';
};

export class ShlinkServer extends SourceServer {
  urls: ShlinkUrl[] = [];
  /**
   * Lookups a real Shlink gets from its database's indexes: short URLs by domain and code (rebuilt
   * when `urls` is replaced or grows) and each visit list newest first with its times parsed
   * (rebuilt when the list grows). Without them this server spent more CPU than the import it
   * serves in make bench-import (a scan of every short URL, and every visit's date parsed and sorted,
   * on every request).
   */
  private index: { urls: ShlinkUrl[]; length: number; byCode: Map<string, ShlinkUrl> } | null = null;
  private sortedVisits = new WeakMap<object, { length: number; visits: { v: ShlinkVisit; t: number }[] }>();
  orphanVisits: ShlinkOrphanVisit[] = [];
  /** Short URLs say whether they have redirect rules (hasRedirectRules), as Shlink 4.3 and later do. */
  reportsRedirectRules = true;

  constructor(readonly apiKey = 'shlink-test-key') {
    super();
  }

  static start(apiKey?: string): Promise<ShlinkServer> {
    return new ShlinkServer(apiKey).listen();
  }

  protected error(res: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}) {
    this.problem(res, status, title, title, `https://shlink.io/api/error/${status}`, headers);
  }

  private problem(res: http.ServerResponse, status: number, title: string, detail: string, type: string, headers = {}) {
    res.writeHead(status, { 'Content-Type': 'application/problem+json', ...headers });
    res.end(JSON.stringify({ type, title, detail, status }));
  }

  protected route(req: http.IncomingMessage, u: URL, res: http.ServerResponse) {
    if (req.headers['x-api-key'] !== this.apiKey)
      return this.problem(
        res,
        401,
        'Invalid API key',
        'Provided API key does not exist or is invalid.',
        'https://shlink.io/api/error/invalid-api-key',
      );
    const page = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const perPage = Number(u.searchParams.get('itemsPerPage') ?? -1);
    const paginate = <T>(all: T[]) => pageOf(all, page, perPage);
    if (u.pathname === '/rest/v3/short-urls') {
      const all = [...this.urls];
      if (u.searchParams.get('orderBy') === 'dateCreated-ASC')
        all.sort((a, b) => a.dateCreated.localeCompare(b.dateCreated));
      const p = paginate(all);
      return this.json(res, {
        shortUrls: {
          data: p.data.map((s) => ({
            shortCode: s.shortCode,
            shortUrl: `https://${s.domain ?? 's.test'}/${s.shortCode}`,
            longUrl: s.longUrl,
            dateCreated: s.dateCreated,
            tags: s.tags ?? [],
            meta: s.meta ?? { validSince: null, validUntil: null, maxVisits: null },
            domain: s.domain,
            title: s.title ?? null,
            crawlable: false,
            forwardQuery: true,
            ...(this.reportsRedirectRules ? { hasRedirectRules: (s.rules ?? []).length > 0 } : {}),
            visitsSummary: {
              total: s.visits.length,
              nonBots: s.visits.filter((v) => !v.potentialBot).length,
              bots: s.visits.filter((v) => v.potentialBot).length,
            },
          })),
          pagination: p.pagination,
        },
      });
    }
    if (u.pathname === '/rest/v3/visits') {
      const all = this.urls.flatMap((s) => s.visits);
      const sum = (vs: ShlinkVisit[]) => ({
        total: vs.length,
        nonBots: vs.filter((v) => !v.potentialBot).length,
        bots: vs.filter((v) => v.potentialBot).length,
      });
      return this.json(res, {
        visits: {
          nonOrphanVisits: sum(all),
          orphanVisits: sum(this.orphanVisits),
          visitsCount: all.length,
          orphanVisitsCount: this.orphanVisits.length,
        },
      });
    }
    if (u.pathname === '/rest/v3/visits/orphan') return this.visits(res, u, this.orphanVisits, paginate);
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/(redirect-rules|visits)$/.exec(u.pathname);
    const domain = u.searchParams.get('domain') || null;
    const found = m && this.shortUrl(decodeURIComponent(m[1]), domain);
    if (!m || !found)
      return this.problem(
        res,
        404,
        'Short URL not found',
        `No URL found with short code "${m?.[1] ?? ''}"`,
        'https://shlink.io/api/error/short-url-not-found',
      );
    if (m[2] === 'redirect-rules')
      return this.json(res, { defaultLongUrl: found.longUrl, redirectRules: found.rules ?? [] });
    return this.visits(res, u, found.visits, paginate);
  }

  private shortUrl(shortCode: string, domain: string | null): ShlinkUrl | undefined {
    if (this.index?.urls !== this.urls || this.index.length !== this.urls.length) {
      const byCode = new Map<string, ShlinkUrl>();
      for (const s of this.urls) {
        const key = `${s.domain ?? ''}/${s.shortCode}`;
        if (!byCode.has(key)) byCode.set(key, s);
      }
      this.index = { urls: this.urls, length: this.urls.length, byCode };
    }
    return this.index.byCode.get(`${domain ?? ''}/${shortCode}`);
  }

  private newestFirst(all: ShlinkVisit[]): { v: ShlinkVisit; t: number }[] {
    let cached = this.sortedVisits.get(all);
    if (!cached || cached.length !== all.length) {
      const visits = all.map((v) => ({ v, t: Date.parse(v.date) })).sort((a, b) => b.t - a.t);
      cached = { length: all.length, visits };
      this.sortedVisits.set(all, cached);
    }
    return cached.visits;
  }

  /** A page of visits, newest first, between startDate and endDate. */
  private visits(
    res: http.ServerResponse,
    u: URL,
    all: (ShlinkVisit & Partial<ShlinkOrphanVisit>)[],
    paginate: <T>(all: T[]) => ReturnType<typeof pageOf<T>>,
  ) {
    const start = u.searchParams.get('startDate');
    const end = u.searchParams.get('endDate');
    const from = start ? Date.parse(start) : -Infinity;
    const to = end ? Date.parse(end) : Infinity;
    const visits = this.newestFirst(all)
      .filter((x) => x.t >= from && x.t <= to)
      .map((x) => x.v as ShlinkVisit & Partial<ShlinkOrphanVisit>);
    const p = paginate(visits);
    return this.json(res, {
      visits: {
        data: p.data.map((v) => ({
          referer: v.referer,
          date: v.date,
          userAgent: v.userAgent,
          visitLocation: v.countryCode
            ? {
                countryCode: v.countryCode,
                countryName: '',
                cityName: '',
                regionName: '',
                latitude: 0,
                longitude: 0,
                timezone: '',
              }
            : null,
          potentialBot: v.potentialBot ?? false,
          visitedUrl: v.visitedUrl ?? null,
          ...(v.type ? { type: v.type } : {}),
        })),
        pagination: p.pagination,
      },
    });
  }
}

export interface BitlyLink {
  id: string;
  long_url: string;
  title?: string;
  archived?: boolean;
  created_at: string;
  tags?: string[];
  custom_bitlinks?: string[];
  group: string;
  clicks: { date: string; clicks: number }[];
}

export class BitlyServer extends SourceServer {
  links: BitlyLink[] = [];
  groups = ['Bg1', 'Bg2'];
  /** Answer clicks with 402 UPGRADE_REQUIRED (a plan without click history). */
  clicksNeedUpgrade = false;

  constructor(readonly token = 'bitly-test-token') {
    super();
  }

  static start(): Promise<BitlyServer> {
    return new BitlyServer().listen();
  }

  protected error(res: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}) {
    const message =
      status === 429
        ? 'RATE_LIMIT_EXCEEDED'
        : status === 403
          ? 'FORBIDDEN'
          : status === 404
            ? 'NOT_FOUND'
            : 'INTERNAL_ERROR';
    this.json(res, { message, description: title, resource: 'bitlinks' }, status, headers);
  }

  protected route(req: http.IncomingMessage, u: URL, res: http.ServerResponse) {
    if (req.headers.authorization !== `Bearer ${this.token}`) return this.error(res, 403, 'Forbidden');
    if (u.pathname === '/v4/groups')
      return this.json(res, { groups: this.groups.map((guid) => ({ guid, name: guid, organization_guid: 'Oa1' })) });
    const g = /^\/v4\/groups\/([^/]+)\/bitlinks$/.exec(u.pathname);
    if (g) {
      const archived = u.searchParams.get('archived') ?? 'off';
      const size = Number(u.searchParams.get('size') ?? 50);
      const all = this.links.filter(
        (l) => l.group === g[1] && (archived === 'both' || (archived === 'on') === !!l.archived),
      );
      // search_after pagination: the cursor is the last id of the previous page.
      const after = u.searchParams.get('search_after');
      const from = after
        ? all.findIndex((l) => l.id === after) + 1
        : (Number(u.searchParams.get('page') ?? 1) - 1) * size;
      const links = all.slice(from, from + size);
      const more = from + size < all.length;
      const last = links[links.length - 1]?.id ?? '';
      return this.json(res, {
        links: links.map(({ group: _g, clicks: _c, ...l }) => ({
          ...l,
          link: `https://${l.id}`,
          deeplinks: [],
          references: {},
        })),
        pagination: {
          prev: '',
          next: more
            ? `${this.url}/v4/groups/${g[1]}/bitlinks?search_after=${encodeURIComponent(last)}&size=${size}`
            : '',
          size,
          page: 1,
          total: all.length,
          search_after: more ? last : '',
        },
      });
    }
    const c = /^\/v4\/bitlinks\/(.+)\/clicks$/.exec(u.pathname);
    const link = c && this.links.find((l) => l.id === decodeURIComponent(c[1]));
    if (!link) return this.error(res, 404, 'Not found');
    if (this.clicksNeedUpgrade) return this.json(res, { message: 'UPGRADE_REQUIRED', description: 'Upgrade' }, 402);
    return this.json(res, {
      link_clicks: link.clicks,
      units: -1,
      unit: 'day',
      unit_reference: new Date().toISOString(),
    });
  }
}

export interface KuttLink {
  id: string;
  address: string;
  target: string;
  domain: string | null;
  description: string | null;
  visit_count: number;
  created_at: string;
  expire_in: string | null;
  password: boolean;
}

export class KuttServer extends SourceServer {
  links: KuttLink[] = [];

  constructor(readonly apiKey = 'kutt-test-key') {
    super();
  }

  static start(): Promise<KuttServer> {
    return new KuttServer().listen();
  }

  protected error(res: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}) {
    this.json(res, { error: title }, status, headers);
  }

  protected route(req: http.IncomingMessage, u: URL, res: http.ServerResponse) {
    if (req.headers['x-api-key'] !== this.apiKey) return this.error(res, 401, 'API key is not correct.');
    if (u.pathname !== '/api/v2/links') return this.error(res, 404, 'Not found.');
    const limit = Math.min(50, Number(u.searchParams.get('limit') ?? 10));
    const skip = Number(u.searchParams.get('skip') ?? 0);
    const data = this.links.slice(skip, skip + limit).map((l) => ({
      ...l,
      banned: false,
      link: `https://${l.domain ?? 'kutt.it'}/${l.address}`,
      updated_at: l.created_at,
    }));
    return this.json(res, { limit, skip, total: this.links.length, data });
  }
}

export interface DubLink {
  id: string;
  domain: string;
  key: string;
  url: string;
  title: string | null;
  tags: { id: string; name: string; color: string }[];
  createdAt: string;
  clicks: number;
}

export class DubServer extends SourceServer {
  links: DubLink[] = [];

  constructor(readonly token = 'dub_test_key') {
    super();
  }

  static start(): Promise<DubServer> {
    return new DubServer().listen();
  }

  protected error(res: http.ServerResponse, status: number, title: string, headers: Record<string, string> = {}) {
    const code = status === 401 ? 'unauthorized' : status === 429 ? 'rate_limit_exceeded' : 'internal_server_error';
    this.json(
      res,
      { error: { code, message: title, doc_url: `https://dub.co/docs/api-reference/errors#${code}` } },
      status,
      headers,
    );
  }

  protected route(req: http.IncomingMessage, u: URL, res: http.ServerResponse) {
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return this.error(res, 401, 'Unauthorized: Invalid API key.');
    if (u.pathname !== '/links') return this.error(res, 404, 'Not found');
    const page = Number(u.searchParams.get('page') ?? 1);
    const size = Math.min(100, Number(u.searchParams.get('pageSize') ?? 100));
    return this.json(res, this.links.slice((page - 1) * size, page * size));
  }
}
