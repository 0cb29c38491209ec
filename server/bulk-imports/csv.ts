// A bulk import given as a CSV file (`csv` instead of `rows` in POST /v1/qr-codes/bulk): one line
// per code, or for gs1 products one line per link, the lines of one product (same slug, or the
// same GTIN, cpv, lot and serial when the slug is left empty) making one code. Parsed with
// csv-parse (RFC 4180, as the importers' CSV, ../imports/sources/csv.ts); errors name the file's
// line and column (`csv.<line>.<column>`), line 1 being the header.
import { parse } from 'csv-parse/sync';
import { ApiError, type FieldErrors } from '../errors.js';
import { headerKey } from '../imports/sources/csv.js';
import { gs1DefaultSlug } from '../qr-codes/gs1.js';

/** The columns a CSV bulk import knows, as written in its header (matched ignoring case, spaces, - and _). */
const CSV_COLUMNS = {
  code: ['slug', 'name', 'type', 'destination', 'domain_ulid', 'brand_ulid', 'style_ulid', 'status'],
  gs1: ['gtin', 'cpv', 'lot', 'serial', 'data', 'description'],
  link: ['link_type', 'href', 'title', 'hreflang', 'media_type', 'context', 'default'],
} as const;
const ALL = [...CSV_COLUMNS.code, ...CSV_COLUMNS.gs1, ...CSV_COLUMNS.link];
const BY_KEY = new Map<string, string>(ALL.map((c) => [headerKey(c), c]));
/** A link's field in a code's destination → its CSV column. */
const LINK_FIELD_COLUMN: Record<string, string> = { type: 'media_type' };

/** The rows of a CSV import, and for each row the file's lines it came from (a gs1 code's: one per link). */
export interface CsvRows {
  rows: Record<string, unknown>[];
  lines: number[][];
  /** For each row, the line of each of its links (link k: linkLines[row][k]). */
  linkLines: number[][];
  /** What is wrong with lines that the rows cannot say (a default that is not yes/no, …), by csv.<line>.<column>. */
  errors: FieldErrors;
}

type Line = { line: number; cells: Record<string, string> };

const BOOLEAN: Record<string, boolean> = { true: true, yes: true, y: true, '1': true, x: true, false: false, no: false, n: false, '0': false, '': false }; // prettier-ignore
/** hreflang and context cells: values separated by spaces, commas, semicolons or |. */
const list = (v: string) => v.split(/[\s,;|]+/).filter(Boolean);

function readLines(text: string): Line[] {
  let records: { info: { lines: number }; record: string[] }[];
  try {
    records = parse(text, { skip_empty_lines: true, trim: true, bom: true, info: true }) as unknown as typeof records;
  } catch (err) {
    const e = err as Error & { lines?: number };
    throw ApiError.field('csv', `The CSV file is malformed${e.lines ? ` at line ${e.lines}` : ''}: ${e.message}`);
  }
  if (!records.length)
    throw ApiError.field('csv', 'The CSV file is empty: it needs a header line and a line per code.');
  const header = records[0].record.map((h) => BY_KEY.get(headerKey(h)));
  const unknown = records[0].record.filter((_, i) => !header[i]);
  if (unknown.length)
    throw ApiError.field(
      'csv',
      `Unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; the columns are ${ALL.join(', ')}.`,
    );
  if (!header.includes('gtin') && !header.includes('destination'))
    throw ApiError.field('csv', 'The CSV file needs a gtin column (gs1 products) or a destination column (URLs).');
  return records.slice(1).map(({ info, record }) => {
    const cells: Record<string, string> = {};
    header.forEach((column, i) => {
      if (column && record[i] !== undefined && record[i] !== '') cells[column] = record[i];
    });
    return { line: info.lines, cells };
  });
}

/** The code fields of a line (slug, name, domain_ulid, …) that it gives. */
function codeFields(cells: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of CSV_COLUMNS.code) if (cells[c] !== undefined && c !== 'destination') out[c] = cells[c];
  return out;
}

/**
 * The rows of a CSV file, with the errors of lines that cannot become a row (a `default` cell that
 * is not yes/no, a `data` cell that is not `AI=value&…`, a product's lines that disagree); a
 * malformed file, or one with unknown columns, is a 422 at once.
 */
export function csvRows(text: string): CsvRows {
  const lines = readLines(text);
  const out: CsvRows = { rows: [], lines: [], linkLines: [], errors: {} };
  const add = (line: number, column: string, message: string) =>
    (out.errors[`csv.${line}.${column}`] ??= []).push(`Line ${line}: ${message}`);
  const products = new Map<string, number>();
  for (const { line, cells } of lines) {
    if (cells.gtin === undefined) {
      if (CSV_COLUMNS.link.some((c) => cells[c] !== undefined) || CSV_COLUMNS.gs1.some((c) => cells[c] !== undefined))
        add(line, 'gtin', 'A line with gs1 or link columns needs its GTIN.');
      else {
        out.rows.push({ ...codeFields(cells), destination: cells.destination ?? '' });
        out.lines.push([line]);
        out.linkLines.push([]);
      }
      continue;
    }
    const qualifiers = { cpv: cells.cpv, lot: cells.lot, serial: cells.serial };
    const group = cells.slug ?? `~${[cells.gtin, qualifiers.cpv, qualifiers.lot, qualifiers.serial].join('|')}`;
    let at = products.get(group);
    if (at === undefined) {
      at = out.rows.length;
      products.set(group, at);
      const destination: Record<string, unknown> = { gtin: cells.gtin, links: [] };
      for (const [k, v] of Object.entries(qualifiers)) if (v !== undefined) destination[k] = v;
      if (cells.description !== undefined) destination.description = cells.description;
      if (cells.data !== undefined) {
        const data: Record<string, string> = {};
        for (const pair of cells.data.split('&')) {
          const eq = pair.indexOf('=');
          if (eq < 1) add(line, 'data', `"${pair}" is not AI=value (e.g. 17=261231&3103=000500).`);
          else data[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
        }
        destination.data = data;
      }
      out.rows.push({
        ...codeFields(cells),
        type: 'gs1',
        slug: cells.slug ?? gs1DefaultSlug({ gtin: cells.gtin, cpv: cells.cpv, lot: cells.lot, serial: cells.serial }),
        destination,
      });
      out.lines.push([]);
      out.linkLines.push([]);
    } else {
      const first = out.rows[at].destination as Record<string, unknown>;
      for (const k of ['gtin', 'cpv', 'lot', 'serial'] as const) {
        if ((cells[k] ?? undefined) !== first[k])
          add(
            line,
            k,
            `The lines of slug ${cells.slug} are one code: its ${k} is "${String(first[k] ?? '')}", not "${cells[k] ?? ''}".`,
          );
      }
    }
    if (CSV_COLUMNS.link.some((c) => cells[c] !== undefined)) {
      const link: Record<string, unknown> = {};
      for (const c of ['link_type', 'href', 'title'] as const) if (cells[c] !== undefined) link[c] = cells[c];
      if (cells.hreflang !== undefined) link.hreflang = list(cells.hreflang);
      if (cells.context !== undefined) link.context = list(cells.context);
      if (cells.media_type !== undefined) link.type = cells.media_type;
      const isDefault = BOOLEAN[(cells.default ?? '').toLowerCase()];
      if (isDefault === undefined)
        add(line, 'default', `default is yes or no (true/false, 1/0); got "${cells.default}".`);
      else if (isDefault) link.default = true;
      (out.rows[at].destination as { links: unknown[] }).links.push(link);
      out.linkLines[at].push(line);
    }
    out.lines[at].push(line);
  }
  if (!lines.length) throw ApiError.field('csv', 'The CSV file has a header but no line.');
  return out;
}

function csvInvalid(errors: FieldErrors): ApiError {
  const lines = new Set(Object.keys(errors).map((k) => k.split('.')[1]));
  return ApiError.validation(
    errors,
    `${lines.size} ${lines.size === 1 ? 'line' : 'lines'} of the CSV file ${lines.size === 1 ? 'is' : 'are'} invalid; nothing was staged.`,
  );
}

/** The column of a line that a code field's error is about. */
function columnOf(field: string): string {
  const f = field.replace(/^destination\./, '');
  if (field === 'destination') return 'gtin';
  if (f.startsWith('data')) return 'data';
  const m = /^links\.\d+\.(\w+)/.exec(f);
  if (m) return LINK_FIELD_COLUMN[m[1]] ?? m[1];
  return f.split('.')[0];
}

/**
 * The errors of the rows made from a CSV file, as a 422 by line and column: a link's error on the
 * link's line, a product's (GTIN, check digit, qualifiers) on its first line, and two default links
 * on each line that sets one. Null when every row is valid.
 */
export function csvRowErrors(csv: CsvRows, errors: (FieldErrors | null)[]): ApiError | null {
  const out: FieldErrors = { ...csv.errors };
  const failed = new Set(Object.keys(csv.errors).map((k) => Number(k.split('.')[1])));
  errors.forEach((fieldErrors, i) => {
    if (!fieldErrors) return;
    const lines = csv.lines[i];
    const linkLines = csv.linkLines[i];
    const links = (csv.rows[i].destination as { links?: { default?: boolean }[] } | undefined)?.links ?? [];
    for (const [field, messages] of Object.entries(fieldErrors)) {
      const link = /^destination\.links\.(\d+)/.exec(field);
      let at: number[] = [lines[0]];
      if (link) at = [linkLines[Number(link[1])] ?? lines[0]];
      else if (field === 'destination.links') {
        const defaults = links.map((l, k) => (l.default ? linkLines[k] : -1)).filter((l) => l >= 0);
        if (defaults.length > 1 && messages.some((m) => /default/.test(m))) at = defaults;
      }
      const column = field === 'destination.links' ? 'default' : columnOf(field);
      // A line already refused for what it says (a default that is not yes/no) is not refused again for what follows.
      for (const line of at.filter((l) => !failed.has(l)))
        for (const m of messages) (out[`csv.${line}.${column}`] ??= []).push(`Line ${line}: ${m}`);
    }
  });
  if (!Object.keys(out).length) return null;
  const byLine = Object.keys(out).sort((x, y) => Number(x.split('.')[1]) - Number(y.split('.')[1]));
  return csvInvalid(Object.fromEntries(byLine.map((k) => [k, out[k]])));
}
