// Bitly, API v4 (https://dev.bitly.com/api-reference), bearer token. Every group (GET /v4/groups)
// and its Bitlinks page by page (GET /v4/groups/{guid}/bitlinks, `archived` on request; pages follow
// pagination.search_after when given, else page numbers while pagination.next is set). A Bitlink
// `bit.ly/abc` is the short code abc on bit.ly; each custom bitlink (`https://go.example/x`) is one
// more link on its own domain. Clicks come as daily totals (GET /v4/bitlinks/{id}/clicks?unit=day&
// units=-1) and are imported as that many scans on their day; a plan without click history (402 or
// 403) imports the links without it.
//
// Bitly's CSV export of links (the web app's link export and the API's links_list export) is read
// by bitlyCsvSource: its columns carry the Bitlink's fields under their API names or the export's
// labels, matched ignoring case, spaces, `-` and `_` (COLUMNS below). A click total, when the file
// has one, is imported like Dub's and Kutt's: that many scans on the link's creation date.
import { emptyLink, hostOf, pagedLinks, parseCsv, parseDate, splitTags, totalScans } from './csv.js';
import type { SourceHttp } from './http.js';
import { SourceError, type ImportSource, type LinkRef, type Page, type SourceLink, type SourceScan } from './types.js';

const BITLY_API = 'https://api-ssl.bitly.com';
const BITLY_PAGE = 100;

interface Bitlink {
  id: string;
  link?: string;
  long_url: string;
  title?: string | null;
  archived?: boolean;
  created_at?: string;
  tags?: string[];
  custom_bitlinks?: string[];
}

/** Bitly writes offsets as +0000; Date wants +00:00. */
function bitlyDate(v: string | undefined | null): Date | null {
  if (!v) return null;
  const d = new Date(v.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * A Bitlink as links: itself (`bit.ly/abc` is abc on bit.ly) and one more per custom bitlink on its
 * own domain. `visits` is a click total where the export gives one (the API's clicks come per day).
 */
function bitlinkLinks(b: Bitlink, createdAt: Date | null, visits = 0): SourceLink[] {
  const [domain, ...rest] = b.id.split('/');
  const common = { longUrl: b.long_url, title: b.title ?? null, tags: b.tags ?? [], createdAt };
  const out = [emptyLink({ key: b.id, shortCode: rest.join('/'), domain: domain.toLowerCase(), visits, ...common })];
  for (const custom of b.custom_bitlinks ?? []) {
    let u: URL;
    try {
      u = new URL(custom.includes('://') ? custom : `https://${custom}`);
    } catch {
      continue;
    }
    const code = u.pathname.replace(/^\/+/, '');
    const host = hostOf(u.host);
    if (!code || `${host}/${code}` === b.id) continue;
    out.push(emptyLink({ key: `${b.id}#${host}/${code}`, shortCode: code, domain: host, ...common }));
  }
  return out;
}

interface Cursor {
  group: number;
  page: number;
  searchAfter: string | null;
}

export function bitlySource(
  baseUrl: URL | null,
  token: string,
  http: (headers: Record<string, string>) => SourceHttp,
  opts: { archived: boolean },
): ImportSource {
  const client = http({ Authorization: `Bearer ${token}` });
  const base = (baseUrl?.href ?? BITLY_API).replace(/\/+$/, '');
  let groups: string[] | null = null;

  return {
    async links(cursor) {
      groups ??= (await client.getJson<{ groups: { guid: string }[] }>(new URL(`${base}/v4/groups`))).groups.map(
        (g) => g.guid,
      );
      const c: Cursor = (cursor as Cursor | null) ?? { group: 0, page: 1, searchAfter: null };
      if (c.group >= groups.length) return { items: [], next: null };
      const u = new URL(`${base}/v4/groups/${encodeURIComponent(groups[c.group])}/bitlinks`);
      u.searchParams.set('size', String(BITLY_PAGE));
      u.searchParams.set('archived', opts.archived ? 'both' : 'off');
      if (c.searchAfter) u.searchParams.set('search_after', c.searchAfter);
      else u.searchParams.set('page', String(c.page));
      const res = await client.getJson<{ links: Bitlink[]; pagination?: { next?: string; search_after?: string } }>(u);
      const items = res.links.flatMap((b) => bitlinkLinks(b, bitlyDate(b.created_at)));
      const more = !!res.pagination?.next && res.links.length > 0;
      const next: Cursor | null = more
        ? { group: c.group, page: c.page + 1, searchAfter: res.pagination?.search_after || null }
        : c.group + 1 < groups.length
          ? { group: c.group + 1, page: 1, searchAfter: null }
          : null;
      return { items, next };
    },

    async scans(link: LinkRef, since: Date | null, until: Date): Promise<Page<SourceScan>> {
      if (link.key.includes('#')) return { items: [], next: null }; // a custom bitlink: clicks are its Bitlink's
      const u = new URL(`${base}/v4/bitlinks/${link.key.split('/').map(encodeURIComponent).join('/')}/clicks`);
      u.searchParams.set('unit', 'day');
      u.searchParams.set('units', '-1');
      let res: { link_clicks: { date: string; clicks: number }[] };
      try {
        res = await client.getJson(u);
      } catch (err) {
        if (err instanceof SourceError && (err.status === 402 || err.status === 403)) return { items: [], next: null };
        throw err;
      }
      const items = res.link_clicks
        .map((c) => ({ at: bitlyDate(c.date), count: c.clicks }))
        .filter(
          (c): c is { at: Date; count: number } => !!c.at && c.count > 0 && (!since || c.at > since) && c.at <= until,
        )
        .sort((a, b) => a.at.getTime() - b.at.getTime())
        .map((c): SourceScan => ({ at: c.at, count: c.count, referrer: '', userAgent: '', country: '' }));
      return { items, next: null };
    },
  };
}

/** The export's columns (normalised as parseCsv does) for each Bitlink field, first match wins. */
const BITLY_CSV_COLUMNS = {
  bitlink: ['bitlink', 'link', 'shortlink', 'shorturl', 'id'],
  longUrl: ['longurl', 'destination', 'destinationurl', 'originalurl'],
  title: ['title'],
  createdAt: ['createdat', 'datecreated', 'created', 'creationdate'],
  tags: ['tags'],
  custom: ['custombitlinks', 'customlinks', 'custombacklinks', 'custombackhalves'],
  clicks: ['clicks', 'totalclicks', 'engagements', 'totalengagements'],
  archived: ['archived', 'hidden'],
} as const;

export function bitlyCsvSource(file: string, opts: { archived: boolean }): ImportSource {
  const rows = parseCsv(file, 'The Bitly CSV export');
  const pick = (r: Record<string, string>, field: keyof typeof BITLY_CSV_COLUMNS) =>
    BITLY_CSV_COLUMNS[field].map((c) => r[c]).find((v) => v !== undefined && v !== '');
  const links = rows.flatMap((r, i) => {
    const bitlink = pick(r, 'bitlink');
    const longUrl = pick(r, 'longUrl');
    if (!bitlink || !longUrl)
      throw new SourceError(`The Bitly CSV export needs a Bitlink (or link) and a long URL; row ${i + 1} has not.`);
    if (!opts.archived && /^(true|yes|1)$/i.test(pick(r, 'archived') ?? '')) return [];
    const created = pick(r, 'createdAt');
    const createdAt = bitlyDate(created) ?? parseDate(created);
    const id = bitlink.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
    const out = bitlinkLinks(
      {
        id,
        long_url: longUrl,
        title: pick(r, 'title') ?? null,
        tags: splitTags(pick(r, 'tags')),
        custom_bitlinks: (pick(r, 'custom') ?? '').split(/[\s,;|]+/).filter(Boolean),
      },
      createdAt,
      Math.max(0, Math.floor(Number(pick(r, 'clicks')?.replace(/[, ]/g, '')) || 0)),
    );
    if (created && !createdAt)
      out[0].unmappable.push({ field: 'created_at', message: `Row ${i + 1}: "${created}" is not a date.` });
    return out;
  });
  return { links: pagedLinks(links), scans: totalScans };
}
