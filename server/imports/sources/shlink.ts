// Shlink, REST API v3 (https://shlink.io/documentation/api-docs/), authenticated with X-Api-Key.
// Short URLs come page by page (GET /rest/v3/short-urls, shortUrls.data + shortUrls.pagination);
// each one's redirect rules (GET .../{shortCode}/redirect-rules, read only when its hasRedirectRules
// is not false) become routing rules where a condition has an equivalent here; its visits (GET .../{shortCode}/visits, newest first) are read
// between two fixed dates from the last page to the first, so they arrive oldest first and the
// pages do not move while new visits come in.
//
// Orphan visits (GET /rest/v3/visits/orphan: visits to the base URL, to an unknown short code, or
// any other 404; same pages and filters) belong to no short URL. On request they come as one more
// link after the last page, ORPHAN_CODE, whose code is created paused (it never redirects; its
// destination is the Shlink server's address) and holds them as its scans; their total comes from
// GET /rest/v3/visits. The visited URL and the orphan type of each visit are not kept (reported).
import { SourceHttp } from './http.js';
import { emptyLink, hostOf } from './csv.js';
import { inParallel } from '../../parallel.js';
import {
  SOURCE_REQUESTS_IN_FLIGHT,
  type ImportSource,
  type LinkRef,
  type Page,
  type RoutingRuleIn,
  type SourceLink,
  type SourceScan,
  type Unmappable,
} from './types.js';

export const SHLINK_LINKS_PER_PAGE = 100;
export const SHLINK_VISITS_PER_PAGE = 1000;
/** The short code (and slug) of the link that holds Shlink's orphan visits. */
const ORPHAN_CODE = 'shlink-orphan-visits';
const ORPHAN_KEY = '#orphan-visits';

interface Pagination {
  currentPage: number;
  pagesCount: number;
}
interface ShlinkShortUrl {
  shortCode: string;
  longUrl: string;
  dateCreated: string;
  visitsCount?: number;
  visitsSummary?: { total: number };
  tags?: string[];
  meta?: { validSince?: string | null; validUntil?: string | null; maxVisits?: number | null };
  domain?: string | null;
  title?: string | null;
  crawlable?: boolean;
  forwardQuery?: boolean;
  /** Since Shlink 4.3: whether the short URL has redirect rules (absent before: they are read). */
  hasRedirectRules?: boolean;
}
interface ShlinkRule {
  longUrl: string;
  priority: number;
  conditions: { type: string; matchKey: string | null; matchValue: string }[];
}
interface ShlinkVisit {
  referer: string | null;
  date: string;
  userAgent: string | null;
  potentialBot?: boolean;
  visitLocation?: { countryCode?: string | null } | null;
}

/** Shlink device values -> our conditions. */
const DEVICE: Record<string, { device?: string[]; os?: string[] }> = {
  android: { os: ['Android'] },
  ios: { os: ['iOS'] },
  desktop: { device: ['desktop'] },
  mobile: { device: ['mobile'] },
  windows: { os: ['Windows'] },
  macos: { os: ['Mac OS'] },
  linux: { os: ['Linux'] },
  chromeos: { os: ['Chrome OS'] },
};

/** Shlink's redirect rules as our routing rules, and those that have no equivalent. */
function mapShlinkRules(rules: ShlinkRule[]): { routing: RoutingRuleIn[]; unmappable: Unmappable[] } {
  const routing: RoutingRuleIn[] = [];
  const unmappable: Unmappable[] = [];
  for (const rule of [...rules].sort((a, b) => a.priority - b.priority)) {
    const conditions: RoutingRuleIn['conditions'] = {};
    const lost: string[] = [];
    const add = (k: keyof RoutingRuleIn['conditions'], v: string) => {
      const list = (conditions[k] ??= []);
      if (!list.includes(v)) list.push(v);
    };
    for (const c of rule.conditions) {
      if (c.type === 'device' && DEVICE[c.matchValue.toLowerCase()]) {
        const d = DEVICE[c.matchValue.toLowerCase()];
        for (const v of d.device ?? []) add('device', v);
        for (const v of d.os ?? []) add('os', v);
      } else if (c.type === 'language' && /^[a-z]{2,3}([-_].*)?$/i.test(c.matchValue)) {
        add('language', c.matchValue.split(/[-_]/)[0].toLowerCase());
      } else if (c.type === 'geolocation-country-code' && /^[a-z]{2}$/i.test(c.matchValue)) {
        add('country', c.matchValue.toUpperCase());
      } else lost.push(`${c.type}${c.matchKey ? ` ${c.matchKey}` : ''}=${c.matchValue}`);
    }
    // Several conditions of one type in one Shlink rule must all match; ours match any value.
    const conflicting = Object.entries(conditions).filter(([, v]) => v.length > 1);
    if (lost.length || conflicting.length) {
      unmappable.push({
        field: `redirect_rules[${rule.priority}]`,
        message: lost.length
          ? `Rule to ${rule.longUrl} has conditions with no equivalent here (${lost.join(', ')}); it is left out.`
          : `Rule to ${rule.longUrl} requires several values of one condition at once; it is left out.`,
      });
      continue;
    }
    routing.push({ conditions, destination: rule.longUrl });
  }
  return { routing, unmappable };
}

export function shlinkSource(
  baseUrl: URL,
  apiKey: string,
  http: (headers: Record<string, string>) => SourceHttp,
  opts: { orphanVisits?: boolean } = {},
): ImportSource {
  const client = http({ 'X-Api-Key': apiKey });
  const base = baseUrl.href.replace(/\/+$/, '');
  const url = (path: string, query: Record<string, string | number | null | undefined>) => {
    const u = new URL(`${base}${path}`);
    for (const [k, v] of Object.entries(query))
      if (v !== null && v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u;
  };
  const code = (c: string) => encodeURIComponent(c);

  async function toLink(s: ShlinkShortUrl): Promise<SourceLink> {
    const domain = hostOf(s.domain);
    // Shlink 4.3 and later say whether a short URL has rules: only those are read.
    const rules =
      s.hasRedirectRules === false
        ? {}
        : await client.getJson<{ redirectRules?: ShlinkRule[] }>(
            url(`/rest/v3/short-urls/${code(s.shortCode)}/redirect-rules`, { domain }),
          );
    const mapped = mapShlinkRules(rules.redirectRules ?? []);
    const link = emptyLink({
      key: `${domain}/${s.shortCode}`,
      shortCode: s.shortCode,
      domain,
      longUrl: s.longUrl,
      title: s.title ?? null,
      tags: s.tags ?? [],
      createdAt: s.dateCreated ? new Date(s.dateCreated) : null,
      validSince: s.meta?.validSince ? new Date(s.meta.validSince) : null,
      validUntil: s.meta?.validUntil ? new Date(s.meta.validUntil) : null,
      maxVisits: s.meta?.maxVisits ?? null,
      routing: mapped.routing,
      unmappable: mapped.unmappable,
      visits: s.visitsSummary?.total ?? s.visitsCount ?? 0,
    });
    if (s.forwardQuery === false)
      link.unmappable.push({ field: 'forwardQuery', message: 'Query strings are always forwarded here.' });
    return link;
  }

  async function orphanLink(): Promise<SourceLink> {
    const totals = await client.getJson<{ visits: { orphanVisits?: { total?: number }; orphanVisitsCount?: number } }>(
      url('/rest/v3/visits', {}),
    );
    return emptyLink({
      key: ORPHAN_KEY,
      shortCode: ORPHAN_CODE,
      longUrl: base,
      title: 'Shlink orphan visits',
      paused: true,
      visits: totals.visits.orphanVisits?.total ?? totals.visits.orphanVisitsCount ?? 0,
      unmappable: [
        {
          field: 'orphan_visits',
          message:
            'Orphan visits are kept as the scans of this paused code; each visit’s visited URL and type (base_url, invalid_short_url, regular_404) are not.',
        },
      ],
    });
  }

  return {
    async links(cursor) {
      const page = typeof cursor === 'number' ? cursor : 1;
      const res = await client.getJson<{ shortUrls: { data: ShlinkShortUrl[]; pagination: Pagination } }>(
        url('/rest/v3/short-urls', { page, itemsPerPage: SHLINK_LINKS_PER_PAGE, orderBy: 'dateCreated-ASC' }),
      );
      // Each link's redirect rules are one more request: several in flight, in the page's order.
      const items: SourceLink[] = await inParallel(res.shortUrls.data, SOURCE_REQUESTS_IN_FLIGHT, toLink);
      const p = res.shortUrls.pagination;
      if (p.currentPage < p.pagesCount) return { items, next: p.currentPage + 1 };
      if (opts.orphanVisits) items.push(await orphanLink());
      return { items, next: null };
    },

    async scans(link: LinkRef, since: Date | null, until: Date, cursor: unknown): Promise<Page<SourceScan>> {
      const get = (page: number) =>
        client.getJson<{ visits: { data: ShlinkVisit[]; pagination: Pagination } }>(
          url(
            link.key === ORPHAN_KEY ? '/rest/v3/visits/orphan' : `/rest/v3/short-urls/${code(link.shortCode)}/visits`,
            {
              domain: link.key === ORPHAN_KEY ? null : link.domain,
              startDate: since?.toISOString(),
              endDate: until.toISOString(),
              page,
              itemsPerPage: SHLINK_VISITS_PER_PAGE,
            },
          ),
        );
      let page = typeof cursor === 'number' ? cursor : null;
      let res = await get(page ?? 1);
      if (page === null && res.visits.pagination.pagesCount > 1) {
        page = res.visits.pagination.pagesCount;
        res = await get(page);
      }
      page ??= 1;
      const items = res.visits.data
        .map((v): SourceScan => ({
          at: new Date(v.date),
          referrer: v.referer ?? '',
          userAgent: v.userAgent ?? '',
          country: (v.visitLocation?.countryCode ?? '').toUpperCase(),
          isBot: v.potentialBot,
        }))
        .filter((s) => !Number.isNaN(s.at.getTime()) && (!since || s.at > since) && s.at <= until)
        .sort((a, b) => a.at.getTime() - b.at.getTime());
      return { items, next: page > 1 ? page - 1 : null };
    },
  };
}
