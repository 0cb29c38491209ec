import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { toCsv, wantsCsv } from '../../server/operations/csv.js';

describe('CSV writing (pure)', () => {
  it('answers CSV only when the Accept header asks for text/csv', () => {
    expect(wantsCsv('text/csv')).to.equal(true);
    expect(wantsCsv('text/csv; charset=utf-8')).to.equal(true);
    expect(wantsCsv('application/json, text/csv')).to.equal(true);
    expect(wantsCsv('application/json')).to.equal(false);
    expect(wantsCsv('')).to.equal(false);
    expect(wantsCsv('text/csvx')).to.equal(false);
  });

  // OWASP CSV injection: a cell starting with = + - @ tab or carriage return is read as a formula.
  const hostile: [string, string][] = [
    ['=webservice(a1)', "'=webservice(a1)"],
    ['+cmd|/c calc!A0', "'+cmd|/c calc!A0"],
    ['-2+3', "'-2+3"],
    ['@SUM(1+1)', "'@SUM(1+1)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', "'\r=1+1"],
    ['plain.example', 'plain.example'],
    ['a=b', 'a=b'],
    ['', ''],
  ];
  for (const [given, written] of hostile) {
    it(`writes the text cell ${JSON.stringify(given)} as ${JSON.stringify(written)}`, () => {
      const csv = toCsv([{ referrer: given, scans: 3 }], ['referrer', 'scans']);
      expect(parse(csv, { columns: true })).to.deep.equal([{ referrer: written, scans: '3' }]);
    });
  }

  it('writes numbers as they are, negative ones included, and quotes separators and quotes', () => {
    const csv = toCsv([{ n: -2, ok: true, text: 'a,"b"\nc' }], ['n', 'ok', 'text']);
    expect(csv).to.equal('n,ok,text\n-2,true,"a,""b""\nc"\n');
  });
});
