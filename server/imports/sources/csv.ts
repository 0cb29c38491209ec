// Generic CSV: one link per row with the columns long_url and short_code, and optionally domain,
// title, tags (separated by commas, semicolons or |) and created_at. Headers are matched ignoring
// case, spaces, dashes and underscores ("Long URL" is long_url). Parsed with csv-parse (RFC 4180).
import { parse } from 'csv-parse/sync';
import { SourceError, type ImportSource, type LinkRef, type Page, type SourceLink, type SourceScan } from './types.js';

const CSV_PAGE = 1000;

/** A column name as matched: without BOM, spaces, `-` and `_`, lower case. */
export const headerKey = (h: string) =>
  h
    .replace(/^\uFEFF/, '')
    .replace(/[\s_-]+/g, '')
    .toLowerCase();

/** Rows of a CSV file as records keyed by their normalised header. */
export function parseCsv(text: string, what = 'The CSV file'): Record<string, string>[] {
  try {
    return parse(text, {
      columns: (header: string[]) => header.map(headerKey),
      skip_empty_lines: true,
      relax_column_count: false,
      trim: true,
      bom: true,
    }) as Record<string, string>[];
  } catch (err) {
    const e = err as Error & { lines?: number };
    throw new SourceError(`${what} is malformed${e.lines ? ` at line ${e.lines}` : ''}: ${e.message}`);
  }
}

export function parseDate(value: string | undefined | null): Date | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d{9,10}$/.test(v)) return new Date(Number(v) * 1000);
  // "2024-01-02 03:04:05" without a zone is read as UTC.
  const d = new Date(/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?$/.test(v) ? `${v.replace(' ', 'T')}Z` : v);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function splitTags(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[,;|]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** A short domain as a host: lower case, without a scheme or path. */
export function hostOf(value: string | undefined | null): string {
  const v = (value ?? '').trim().toLowerCase();
  if (!v) return '';
  try {
    return new URL(v.includes('://') ? v : `https://${v}`).hostname;
  } catch {
    return v;
  }
}

export function emptyLink(l: Pick<SourceLink, 'key' | 'shortCode' | 'longUrl'> & Partial<SourceLink>): SourceLink {
  return {
    domain: '',
    title: null,
    tags: [],
    createdAt: null,
    validSince: null,
    validUntil: null,
    maxVisits: null,
    routing: [],
    unmappable: [],
    visits: 0,
    ...l,
  };
}

/** Pages over links made once from a file. */
export function pagedLinks(all: SourceLink[]): ImportSource['links'] {
  return async (cursor) => {
    const from = typeof cursor === 'number' ? cursor : 0;
    const items = all.slice(from, from + CSV_PAGE);
    return { items, next: from + CSV_PAGE < all.length ? from + CSV_PAGE : null } satisfies Page<SourceLink>;
  };
}

export function csvSource(file: string): ImportSource {
  const rows = parseCsv(file);
  if (rows.length && !('longurl' in rows[0] && 'shortcode' in rows[0]))
    throw new SourceError('The CSV file needs the columns long_url and short_code.');
  const links = rows.map((r, i) => {
    const createdAt = parseDate(r.createdat);
    const link = emptyLink({
      key: `${hostOf(r.domain)}/${r.shortcode}`,
      shortCode: r.shortcode ?? '',
      domain: hostOf(r.domain),
      longUrl: r.longurl ?? '',
      title: r.title || null,
      tags: splitTags(r.tags),
      createdAt,
    });
    if (r.createdat && !createdAt)
      link.unmappable.push({ field: 'created_at', message: `Row ${i + 1}: "${r.createdat}" is not a date.` });
    return link;
  });
  return { links: pagedLinks(links) };
}

/**
 * The history of a source that only gives a total per link (Kutt, Dub): that many scans on the
 * link's creation date, imported once (a re-run finds the date at the high-water mark).
 */
export async function totalScans(link: LinkRef, since: Date | null): Promise<Page<SourceScan>> {
  if (!link.visits || !link.createdAt || (since && link.createdAt <= since)) return { items: [], next: null };
  return { items: [{ at: link.createdAt, count: link.visits, referrer: '', userAgent: '', country: '' }], next: null };
}
