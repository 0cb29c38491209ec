// A Shlink server on loopback (node:http) speaking the documented REST v3 shapes the importer reads
// (https://shlink.io/documentation/api-docs/): X-Api-Key auth, GET /rest/v3/short-urls (shortUrls
// {data, pagination}), .../{shortCode}/redirect-rules, .../{shortCode}/visits (newest first, filtered
// by startDate/endDate, paginated), RFC 7807 problem bodies, and faults on demand (429 with
// Retry-After, 500).
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

export interface Fault {
  /** Matched against the request path and query. */
  match: RegExp;
  status: number;
  headers?: Record<string, string>;
  times: number;
  /** Matching requests let through before the fault starts. */
  after?: number;
}

export class ShlinkServer {
  urls: ShlinkUrl[] = [];
  faults: Fault[] = [];
  readonly requests: { path: string; apiKey: string | undefined }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    readonly apiKey: string,
  ) {}

  static async start(apiKey = 'shlink-test-key'): Promise<ShlinkServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const s = new ShlinkServer(server, (server.address() as AddressInfo).port, apiKey);
    server.on('request', (req, res) => s.handle(req, res));
    return s;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private problem(res: http.ServerResponse, status: number, title: string, detail: string, type: string, headers = {}) {
    res.writeHead(status, { 'Content-Type': 'application/problem+json', ...headers });
    res.end(JSON.stringify({ type, title, detail, status }));
  }

  private json(res: http.ServerResponse, body: unknown) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const u = new URL(req.url ?? '/', this.url);
    const apiKey = req.headers['x-api-key'] as string | undefined;
    this.requests.push({ path: u.pathname + u.search, apiKey });
    const fault = this.faults.find((f) => f.times > 0 && f.match.test(u.pathname + u.search));
    if (fault && (fault.after ?? 0) > 0) fault.after!--;
    else if (fault) {
      fault.times--;
      if (fault.status === 429)
        return this.problem(
          res,
          429,
          'Too many requests',
          'Slow down',
          'https://shlink.io/api/error/rate-limit',
          fault.headers,
        );
      return this.problem(
        res,
        fault.status,
        'Internal Server Error',
        'Something went wrong',
        'https://shlink.io/api/error/internal',
        fault.headers,
      );
    }
    if (apiKey !== this.apiKey)
      return this.problem(
        res,
        401,
        'Invalid API key',
        'Provided API key does not exist or is invalid.',
        'https://shlink.io/api/error/invalid-api-key',
      );
    const page = Math.max(1, Number(u.searchParams.get('page') ?? 1));
    const perPage = Number(u.searchParams.get('itemsPerPage') ?? -1);
    const paginate = <T>(all: T[]) => {
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
    };
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
    const m = /^\/rest\/v3\/short-urls\/([^/]+)\/(redirect-rules|visits)$/.exec(u.pathname);
    const domain = u.searchParams.get('domain') || null;
    const found = m && this.urls.find((s) => s.shortCode === decodeURIComponent(m[1]) && (s.domain ?? null) === domain);
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
    const start = u.searchParams.get('startDate');
    const end = u.searchParams.get('endDate');
    const visits = found.visits
      .filter(
        (v) => (!start || Date.parse(v.date) >= Date.parse(start)) && (!end || Date.parse(v.date) <= Date.parse(end)),
      )
      .sort((a, b) => b.date.localeCompare(a.date));
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
          visitedUrl: null,
        })),
        pagination: p.pagination,
      },
    });
  }
}
