// The scan ingest's TabSeparated encoding: escapes, the hand-written scan_events encoder
// agreeing with the generic one column for column, and a batch's redirects per code read back from it.
import { expect } from 'chai';
import { GS1_RESOLUTION_COLUMNS, SCAN_EVENT_COLUMNS as SCAN_COLUMNS } from '../../server/analytics/scan-event.js';
import { encodeGs1Row, encodeScanRow, type Gs1Row, type ScanRow } from '../../server/redirect/scan-rows.js';
import { tsvLine, tsvText } from '../../server/redirect/scan-buffer.js';
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

  it('encodes a scan row field for field like the generic encoder over SCAN_COLUMNS', () => {
    expect(SCAN_COLUMNS).to.have.length(17);
    expect(encodeScanRow(row)).to.equal(tsvLine(row, SCAN_COLUMNS));
    expect(encodeScanRow(row).split('\t')).to.have.length(17);
    expect(encodeScanRow(row).split('\n')).to.deep.equal([encodeScanRow(row).slice(0, -1), '']);
  });

  it('encodes a gs1_resolutions row field for field like the generic encoder over GS1_RESOLUTION_COLUMNS', () => {
    const gs1: Gs1Row = {
      scan_id: row.scan_id,
      scanned_at: row.scanned_at,
      org_id: 3,
      brand_id: 5,
      domain_id: 0,
      code_id: 77,
      gtin: '09506000134352',
      cpv: '',
      lot: 'LOT\t1\\',
      serial: 'S\n1',
      link_type_asked: 'gs1:pip\r\0',
      link_type_served: 'gs1:pip',
      visitor_hash: '9007199254740991',
      is_bot: 1,
    };
    expect(GS1_RESOLUTION_COLUMNS).to.have.length(14);
    expect(encodeGs1Row(gs1)).to.equal(tsvLine(gs1, GS1_RESOLUTION_COLUMNS));
    expect(encodeGs1Row(gs1).split('\t')).to.have.length(14);
    expect(encodeGs1Row({ ...gs1, lot: 'x', serial: '' })).to.equal(
      tsvLine({ ...gs1, lot: 'x', serial: '' }, GS1_RESOLUTION_COLUMNS),
    );
  });

  it('sums a batch of encoded rows per code_id (what redirects_count adds for the batch)', () => {
    const tsv = [77, 78, 77, 77].map((code_id) => encodeScanRow({ ...row, code_id })).join('');
    expect(countsOf(tsv, SCAN_COLUMNS.indexOf('code_id'))).to.deep.equal([
      [77, 3],
      [78, 1],
    ]);
    expect(countsOf('', SCAN_COLUMNS.indexOf('code_id'))).to.deep.equal([]);
  });
});
