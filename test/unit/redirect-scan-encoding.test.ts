// The scan ingest's TabSeparated encoding: escapes, the hand-written scan_events encoder
// agreeing with the generic one column for column, the columns of a batch of an earlier version, and
// a batch's redirects per code read back from it.
import { expect } from 'chai';
import {
  NO_GS1,
  REDIRECT_SCAN_COLUMNS as SCAN_COLUMNS,
  SCAN_EVENT_COLUMNS,
  SCAN_GS1_SCHEMA,
} from '../../server/analytics/scan-event.js';
import { encodeScanRow, type ScanRow } from '../../server/redirect/scan-rows.js';
import { batchColumns, tsvLine, tsvText } from '../../server/redirect/scan-buffer.js';
import { countsOf } from '../../server/redirect/scan-counts.js';

const row: ScanRow = {
  scan_id: '01HZY3J5X2K7Q9R4T6V8W0YB1C',
  scanned_at: '2024-03-01 12:34:56.789',
  org_id: 3,
  brand_id: 0,
  domain_id: 12,
  code_id: 77,
  visitor_hash: '9007199254740991',
  country: 'DE',
  device_type: 'mobile',
  os: 'iOS',
  browser: 'Mobile\tSafari\\x',
  referrer: 'news.example',
  language: 'de',
  provider: 'Line\nbreak\r\0 GmbH',
  asn: 3320,
  is_bot: 0,
  matched_rule: -1,
  ...NO_GS1,
};
/** A GS1 resolution's scan: its dimensions in the same row, the request's text escaped. */
const gs1: ScanRow = {
  ...row,
  gtin: '09506000134352',
  cpv: 'V1',
  lot: 'LOT\t1\\',
  serial: 'S\n1',
  link_type_asked: 'gs1:pip\r\0',
  link_type_served: 'gs1:pip',
};

describe('scan TabSeparated encoding', () => {
  it('escapes backslash, tab, newline, carriage return and NUL, and leaves other text alone', () => {
    expect(tsvText('a\\b\tc\nd\re\0f')).to.equal('a\\\\b\\tc\\nd\\re\\0f');
    expect(tsvText('Ünïcödé "quoted" \'x\' ✓')).to.equal('Ünïcödé "quoted" \'x\' ✓');
    expect(tsvText('')).to.equal('');
  });

  it('writes a row as one line in column order, numbers as they are', () => {
    expect(tsvLine({ b: 'x\ty', a: -1, c: 0 }, ['a', 'b', 'c'])).to.equal('-1\tx\\ty\t0\n');
  });

  it('encodes a scan row field for field like the generic encoder over the contract columns and the GS1 dimensions', () => {
    expect(SCAN_COLUMNS).to.deep.equal([...SCAN_EVENT_COLUMNS, ...Object.keys(SCAN_GS1_SCHEMA)]);
    expect(SCAN_COLUMNS).to.have.length(23);
    for (const r of [row, gs1, { ...gs1, lot: 'x', serial: '' }]) {
      expect(encodeScanRow(r)).to.equal(tsvLine(r, SCAN_COLUMNS));
      expect(encodeScanRow(r).split('\t')).to.have.length(23);
      expect(encodeScanRow(r).split('\n')).to.deep.equal([encodeScanRow(r).slice(0, -1), '']);
    }
    // A scan that is no GS1 resolution ends in six empty fields.
    expect(encodeScanRow(row).endsWith('\t-1\t\t\t\t\t\t\n')).to.equal(true);
    expect(encodeScanRow(gs1)).to.include('\t09506000134352\tV1\tLOT\\t1\\\\\tS\\n1\tgs1:pip\\r\\0\tgs1:pip\n');
  });

  it("tells a batch of an earlier version's rows (the contract's 17 columns, before clickhouse/0026) by its first row", () => {
    const former = [SCAN_EVENT_COLUMNS];
    const old = [row, row].map((r) => tsvLine(r, SCAN_EVENT_COLUMNS)).join('');
    const now = [row, gs1].map(encodeScanRow).join('');
    expect(batchColumns(old, SCAN_COLUMNS, former)).to.equal(SCAN_EVENT_COLUMNS);
    expect(batchColumns(now, SCAN_COLUMNS, former)).to.equal(SCAN_COLUMNS);
    // A sealed batch is bytes: the same answer, with multi-byte text in its first row and without a line break.
    const unicode = tsvLine({ ...row, os: 'Ünïcødé 日本' }, SCAN_EVENT_COLUMNS);
    expect(batchColumns(Buffer.from(unicode + now), SCAN_COLUMNS, former)).to.equal(SCAN_EVENT_COLUMNS);
    expect(batchColumns(Buffer.from(now), SCAN_COLUMNS, former)).to.equal(SCAN_COLUMNS);
    expect(batchColumns(Buffer.from(unicode.slice(0, -1)), SCAN_COLUMNS, former)).to.equal(SCAN_EVENT_COLUMNS);
    expect(batchColumns(unicode.slice(0, -1), SCAN_COLUMNS, former)).to.equal(SCAN_EVENT_COLUMNS);
    // Escaped tabs in a text are no fields; a form no version wrote is inserted as the current one (and refused).
    expect(batchColumns(tsvLine({ ...row, os: 'a\tb' }, SCAN_EVENT_COLUMNS), SCAN_COLUMNS, former)).to.equal(
      SCAN_EVENT_COLUMNS,
    );
    expect(batchColumns('a\tb\n', SCAN_COLUMNS, former)).to.equal(SCAN_COLUMNS);
    expect(batchColumns(old, SCAN_COLUMNS)).to.equal(SCAN_COLUMNS);
  });

  it('sums a batch of encoded rows per code_id (what redirects_count adds for the batch)', () => {
    const tsv = [77, 78, 77, 77].map((code_id) => encodeScanRow({ ...row, code_id })).join('');
    expect(countsOf(tsv, SCAN_COLUMNS.indexOf('code_id'))).to.deep.equal([
      [77, 3],
      [78, 1],
    ]);
    expect(countsOf('', SCAN_COLUMNS.indexOf('code_id'))).to.deep.equal([]);
  });

  it('counts a column after escaped text as splitting each line would, and skips what is no positive whole number', () => {
    // What countsOf read before it stopped splitting lines: the field by split('\t'), then Number().
    const bySplit = (tsv: string, column: number) => {
      const counts = new Map<number, number>();
      for (const line of tsv.split('\n').filter(Boolean)) {
        const n = Number(line.split('\t')[column]);
        if (Number.isSafeInteger(n) && n > 0) counts.set(n, (counts.get(n) ?? 0) + 1);
      }
      return [...counts];
    };
    const texts = ['a\tb', 'x\ny', 'back\\slash', '', 'Ünïcødé'];
    const tsv = Array.from({ length: 40 }, (_, i) =>
      encodeScanRow({ ...row, code_id: 1 + (i % 7), os: texts[i % texts.length], asn: i % 3 }),
    ).join('');
    for (const column of ['org_id', 'code_id', 'asn', 'is_bot']) {
      const at = SCAN_COLUMNS.indexOf(column as (typeof SCAN_COLUMNS)[number]);
      expect(countsOf(tsv, at), column).to.deep.equal(bySplit(tsv, at));
      // A sealed batch is the bytes as encoded: counted the same (multi-byte text before the column included).
      expect(countsOf(Buffer.from(tsv), at), column).to.deep.equal(bySplit(tsv, at));
    }
    // Not counted: text, a sign, a fraction, an empty field, a missing field, beyond 2^53; a last line without its newline is.
    const odd = '1\tabc\n1\t-5\n1\t2.5\n1\t\n1\n1\t99999999999999999999\n1\t0\n1\t007\n1\t7';
    expect(countsOf(odd, 1)).to.deep.equal([[7, 2]]);
    expect(countsOf(odd, 0)).to.deep.equal([[1, 9]]);
  });
});
