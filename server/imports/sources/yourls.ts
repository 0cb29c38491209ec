// YOURLS, from its database export: the tables yourls_url (keyword, url, title, timestamp, ip,
// clicks) and yourls_log (click_id, click_time, shorturl, referrer, user_agent, ip_address,
// country_code), either as a MySQL dump (INSERT statements; any table prefix) in `file`, or as CSV:
// yourls_url in `file` and yourls_log in `log_file`. Each logged click is one scan; YOURLS writes
// times in the server's zone without one, read here as UTC.
import { emptyLink, headerKey, pagedLinks, parseCsv, parseDate } from './csv.js';
import { SourceError, type ImportSource, type LinkRef, type Page, type SourceScan } from './types.js';

const URL_COLUMNS = ['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks'];
const LOG_COLUMNS = ['click_id', 'click_time', 'shorturl', 'referrer', 'user_agent', 'ip_address', 'country_code'];

type Row = Record<string, string | null>;

/** The values of one `VALUES (...), (...)` list: quoted strings (backslash escapes), numbers, NULL. */
function sqlTuples(text: string, start: number): { tuples: (string | null)[][]; end: number } {
  const tuples: (string | null)[][] = [];
  let i = start;
  const fail = () =>
    new SourceError(`The SQL dump is malformed near character ${i}: ${JSON.stringify(text.slice(i, i + 40))}.`);
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  for (;;) {
    skipSpace();
    if (text[i] !== '(') throw fail();
    i++;
    const tuple: (string | null)[] = [];
    for (;;) {
      skipSpace();
      if (text[i] === "'") {
        let v = '';
        i++;
        for (;;) {
          if (i >= text.length) throw fail();
          const c = text[i];
          if (c === '\\') {
            const n = text[i + 1];
            v += n === 'n' ? '\n' : n === 'r' ? '\r' : n === 't' ? '\t' : n === '0' ? '\0' : n;
            i += 2;
          } else if (c === "'" && text[i + 1] === "'") {
            v += "'";
            i += 2;
          } else if (c === "'") {
            i++;
            break;
          } else {
            v += c;
            i++;
          }
        }
        tuple.push(v);
      } else {
        const m = /^(NULL|-?[0-9.eE+-]+)/i.exec(text.slice(i, i + 64));
        if (!m) throw fail();
        tuple.push(m[1].toUpperCase() === 'NULL' ? null : m[1]);
        i += m[1].length;
      }
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ')') {
        i++;
        break;
      }
      throw fail();
    }
    tuples.push(tuple);
    skipSpace();
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === ';' || i >= text.length) return { tuples, end: i };
    throw fail();
  }
}

/** Rows of the tables whose name ends with `_url` and `_log` in a MySQL dump. */
function dumpTables(text: string): { url: Row[]; log: Row[] } {
  const out = { url: [] as Row[], log: [] as Row[] };
  const re = /INSERT\s+(?:IGNORE\s+)?INTO\s+`?(\w+?)_(url|log)`?\s*(\(([^)]*)\))?\s*VALUES\s*/gi;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const kind = m[2].toLowerCase() as 'url' | 'log';
    const cols = (
      m[4] ? m[4].split(',').map((c) => c.trim().replace(/`/g, '')) : kind === 'url' ? URL_COLUMNS : LOG_COLUMNS
    ).map(headerKey);
    const { tuples, end } = sqlTuples(text, re.lastIndex);
    for (const t of tuples) out[kind].push(Object.fromEntries(cols.map((c, i) => [c, t[i] ?? null])));
    re.lastIndex = end;
  }
  return out;
}

export function yourlsSource(file: string, logFile: string | null): ImportSource {
  let tables: { url: Row[]; log: Row[] };
  if (/INSERT\s+(IGNORE\s+)?INTO/i.test(file)) tables = dumpTables(file);
  else
    tables = {
      url: parseCsv(file, 'The yourls_url CSV file'),
      log: logFile ? parseCsv(logFile, 'The yourls_log CSV file') : [],
    };
  if (!tables.url.length) throw new SourceError('The export holds no yourls_url rows.');
  if (!('keyword' in tables.url[0] && 'url' in tables.url[0]))
    throw new SourceError('The yourls_url rows need the columns keyword and url.');
  const clicks = new Map<string, SourceScan[]>();
  for (const r of tables.log) {
    const at = parseDate(r.clicktime);
    if (!at || !r.shorturl) continue;
    const list = clicks.get(r.shorturl) ?? [];
    list.push({
      at,
      referrer: r.referrer && r.referrer !== 'direct' ? r.referrer : '',
      userAgent: r.useragent ?? '',
      country: (r.countrycode ?? '').toUpperCase(),
    });
    clicks.set(r.shorturl, list);
  }
  for (const list of clicks.values()) list.sort((a, b) => a.at.getTime() - b.at.getTime());
  const links = tables.url.map((r) =>
    emptyLink({
      key: r.keyword ?? '',
      shortCode: r.keyword ?? '',
      longUrl: r.url ?? '',
      title: r.title || null,
      createdAt: parseDate(r.timestamp),
      visits: clicks.get(r.keyword ?? '')?.length ?? 0,
    }),
  );
  return {
    links: pagedLinks(links),
    async scans(link: LinkRef, since: Date | null, until: Date): Promise<Page<SourceScan>> {
      const items = (clicks.get(link.key) ?? []).filter((s) => (!since || s.at > since) && s.at <= until);
      return { items, next: null };
    },
  };
}
