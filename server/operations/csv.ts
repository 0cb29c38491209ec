// Every CSV the service writes goes through toCsv: RFC 4180 quoting (csv-stringify) and OWASP's
// CSV-injection rule, so a cell a visitor or a user could have written (a referrer, a name, an
// unknown field) never reaches a spreadsheet as a formula. A text cell starting with =, +, -, @,
// a tab or a carriage return is prefixed with a single quote; numbers are written as they are.
// JSON answers carry the same values verbatim.
import { stringify } from 'csv-stringify/sync';
import type { OperationResult } from './operation.js';

/** Whether the caller asked for CSV (Accept: text/csv) rather than JSON. */
export function wantsCsv(accept: string): boolean {
  return /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept);
}

/** Rows as CSV with a header line, in the given column order, formula-like text neutralised. */
export function toCsv<R extends object>(rows: readonly R[], columns: readonly (keyof R & string)[]): string {
  return stringify(rows as unknown as Record<string, unknown>[], {
    header: true,
    columns: [...columns],
    escape_formulas: true,
    cast: { boolean: (b) => String(b) },
  });
}

/** A CSV answer, offered as a download. */
export function csvResult(filename: string, body: string, headers: Record<string, string> = {}): OperationResult {
  return {
    status: 200,
    body,
    contentType: 'text/csv; charset=utf-8',
    headers: { 'Content-Disposition': `attachment; filename="${filename}"`, ...headers },
  };
}
