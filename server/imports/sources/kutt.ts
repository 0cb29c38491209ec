// Kutt, API v2 (https://docs.kutt.it), X-API-KEY header. Links page by page (GET /api/v2/links with
// limit and skip; {data, total}): target, address, domain, description, expire_in. Kutt's API gives
// no visit log, only visit_count: imported as that many scans on the link's creation date.
import { emptyLink, hostOf, totalScans } from './csv.js';
import type { SourceHttp } from './http.js';
import type { ImportSource, SourceLink } from './types.js';

const KUTT_PAGE = 50;

interface KuttLink {
  id: string;
  address: string;
  target: string;
  domain?: string | null;
  description?: string | null;
  visit_count?: number;
  created_at?: string;
  expire_in?: string | null;
  password?: boolean;
  banned?: boolean;
}

export function kuttSource(
  baseUrl: URL,
  apiKey: string,
  http: (headers: Record<string, string>) => SourceHttp,
): ImportSource {
  const client = http({ 'X-API-KEY': apiKey });
  const base = baseUrl.href.replace(/\/+$/, '');
  return {
    async links(cursor) {
      const skip = typeof cursor === 'number' ? cursor : 0;
      const u = new URL(`${base}/api/v2/links`);
      u.searchParams.set('limit', String(KUTT_PAGE));
      u.searchParams.set('skip', String(skip));
      const res = await client.getJson<{ data: KuttLink[]; total: number }>(u);
      const items = res.data.map((k): SourceLink => {
        const createdAt = k.created_at ? new Date(k.created_at) : null;
        const link = emptyLink({
          key: k.id,
          shortCode: k.address,
          domain: hostOf(k.domain),
          longUrl: k.target,
          title: k.description ?? null,
          createdAt,
          validUntil: k.expire_in ? new Date(k.expire_in) : null,
          visits: k.visit_count ?? 0,
        });
        if (k.password)
          link.unmappable.push({ field: 'password', message: 'Kutt does not give the password: the code has none.' });
        return link;
      });
      const next = skip + res.data.length;
      return { items, next: res.data.length && next < res.total ? next : null };
    },
    scans: totalScans,
  };
}
