// Dub: its API (https://dub.co/docs/api-reference, bearer API key; GET /links?page=&pageSize=, an
// array of links, pages until one is short) or its CSV export of links (columns matched ignoring
// case, spaces, `-` and `_`: id, domain, key, url, title, tags, createdAt, clicks; `shortLink`
// stands for domain + key). The API gives clicks as a total per link, imported as that many scans on
// the link's creation date (like Kutt's).
import { emptyLink, hostOf, pagedLinks, parseCsv, parseDate, splitTags, totalScans } from './csv.js';
import type { SourceHttp } from './http.js';
import { SourceError, type ImportSource, type SourceLink } from './types.js';

const DUB_API = 'https://api.dub.co';
const DUB_PAGE = 100;

interface DubLink {
  id: string;
  domain: string;
  key: string;
  url: string;
  title?: string | null;
  tags?: { name: string }[] | null;
  createdAt?: string;
  expiresAt?: string | null;
  clicks?: number;
  password?: string | null;
}

function toLink(d: DubLink): SourceLink {
  const link = emptyLink({
    key: d.id,
    shortCode: d.key,
    domain: hostOf(d.domain),
    longUrl: d.url,
    title: d.title ?? null,
    tags: (d.tags ?? []).map((t) => t.name),
    createdAt: d.createdAt ? new Date(d.createdAt) : null,
    validUntil: d.expiresAt ? new Date(d.expiresAt) : null,
    visits: d.clicks ?? 0,
  });
  if (d.password)
    link.unmappable.push({ field: 'password', message: 'Passwords are not imported: the code has none.' });
  return link;
}

export function dubApiSource(
  baseUrl: URL | null,
  token: string,
  http: (h: Record<string, string>) => SourceHttp,
): ImportSource {
  const client = http({ Authorization: `Bearer ${token}` });
  const base = (baseUrl?.href ?? DUB_API).replace(/\/+$/, '');
  return {
    async links(cursor) {
      const page = typeof cursor === 'number' ? cursor : 1;
      const u = new URL(`${base}/links`);
      u.searchParams.set('page', String(page));
      u.searchParams.set('pageSize', String(DUB_PAGE));
      const res = await client.getJson<DubLink[]>(u);
      if (!Array.isArray(res)) throw new SourceError('Dub answered /links with something that is not a list of links.');
      return { items: res.map(toLink), next: res.length === DUB_PAGE ? page + 1 : null };
    },
    scans: totalScans,
  };
}

export function dubCsvSource(file: string): ImportSource {
  const rows = parseCsv(file, 'The Dub CSV export');
  const links = rows.map((r, i) => {
    let domain = r.domain ?? '';
    let key = r.key ?? '';
    if ((!domain || !key) && r.shortlink) {
      const u = new URL(r.shortlink.includes('://') ? r.shortlink : `https://${r.shortlink}`);
      domain ||= u.host;
      key ||= u.pathname.replace(/^\/+/, '');
    }
    if (!key || !r.url)
      throw new SourceError(`The Dub CSV export needs key (or shortLink) and url; row ${i + 1} has not.`);
    return toLink({
      id: r.id || r.linkid || `${hostOf(domain)}/${key}`,
      domain,
      key,
      url: r.url,
      title: r.title || null,
      tags: splitTags(r.tags).map((name) => ({ name })),
      createdAt: parseDate(r.createdat)?.toISOString(),
      clicks: Number(r.clicks) || 0,
    });
  });
  return { links: pagedLinks(links), scans: totalScans };
}
