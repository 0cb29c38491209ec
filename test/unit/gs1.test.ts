import { expect } from 'chai';
import digitalLink from 'digital-link.js';
import {
  attributeQuery,
  checkDigit,
  keyPath,
  normaliseGtin,
  parseKeySegments,
  queryAttributeProblem,
} from '../../server/qr-codes/gs1.js';

const { DigitalLink } = digitalLink;

/**
 * GTINs whose check digits GS1 publishes: the GS1 example products of the Digital Link and resolver
 * documents (Dal Giardino risotto rice 09506000134352, the 2024 retail demo t-shirt 09506000164908),
 * the check digit example of the GS1 General Specifications (629104150021 → 3), and the GTIN-12 /
 * GTIN-8 examples printed on GS1's check digit calculator page.
 */
const PUBLISHED = ['09506000134352', '09506000164908', '6291041500213', '4006381333931', '036000291452', '96385074'];

describe('GS1 syntax: GTINs, key qualifiers and data attributes', () => {
  for (const gtin of PUBLISHED) {
    it(`accepts the published GTIN ${gtin} (GTIN-${gtin.length}) and stores it as GTIN-14`, () => {
      const out = normaliseGtin(gtin);
      expect(out).to.deep.equal({ gtin: gtin.padStart(14, '0') });
      // The independent implementation agrees.
      expect(DigitalLink(`https://id.gs1.org/01/${gtin.padStart(14, '0')}`).isValid()).to.equal(true);
    });
    it(`refuses ${gtin} with its check digit changed, naming the right digit`, () => {
      const wrong = gtin.slice(0, -1) + String((Number(gtin.at(-1)) + 1) % 10);
      const out = normaliseGtin(wrong);
      expect(out)
        .to.have.property('problem')
        .that.includes(`should end in ${gtin.at(-1)}`);
      expect(DigitalLink(`https://id.gs1.org/01/${wrong.padStart(14, '0')}`).isValid()).to.equal(false);
    });
  }

  it('computes the General Specifications example check digit', () => {
    expect(checkDigit('629104150021')).to.equal(3);
  });

  it('refuses GTINs of other lengths and with other characters', () => {
    for (const bad of ['1234567', '123456789', '12345678901', '123456789012345', '0950600013435A', '']) {
      expect(normaliseGtin(bad)).to.have.property('problem');
    }
  });

  it('writes the key path with qualifiers in the order 22, 10, 21 and data attributes in the query', () => {
    expect(keyPath({ gtin: '09506000134352', serial: 'S/1', lot: 'ABC 1', cpv: '2A' })).to.equal(
      '/01/09506000134352/22/2A/10/ABC%201/21/S%2F1',
    );
    expect(attributeQuery({ '3103': '000500', '17': '261231' })).to.equal('?17=261231&3103=000500');
  });

  const agree = (path: string, valid: boolean) =>
    it(`${valid ? 'accepts' : 'refuses'} ${path}, as digital-link.js does`, () => {
      const ours = parseKeySegments(path.slice(1).split('/'));
      expect(ours.kind, JSON.stringify(ours)).to.equal(valid ? 'key' : 'invalid');
      expect(DigitalLink(`https://example.com${path}`).isValid()).to.equal(valid);
    });
  agree('/01/09506000134352', true);
  agree('/01/09506000134352/10/ABC123', true);
  agree('/01/09506000134352/22/2A/10/ABC123/21/12345', true);
  agree('/01/09506000134352/21/12345', true);
  agree('/01/09506000134353', false);
  agree('/01/09506000134352/21/ser/10/lot', false);
  agree('/01/09506000134352/10/ABCDEFGHIJKLMNOPQRSTU', false);

  it('tolerates a trailing slash and tells an unsupported primary key from a syntax error', () => {
    expect(parseKeySegments(['01', '09506000134352', '10', 'A', ''])).to.deep.equal({
      kind: 'key',
      key: { gtin: '09506000134352', lot: 'A' },
    });
    expect(parseKeySegments(['414', '9520123456788']).kind).to.equal('unsupported');
    expect(parseKeySegments(['99', '1']).kind).to.equal('invalid');
    expect(parseKeySegments(['01', '09506000134352', '10']).kind).to.equal('invalid');
  });

  it('checks known data attributes in a query string and passes unknown keys on', () => {
    expect(queryAttributeProblem(new URLSearchParams('17=261231&utm_source=x'))).to.equal(null);
    expect(queryAttributeProblem(new URLSearchParams('17=261341'))).to.include('YYMMDD');
    expect(queryAttributeProblem(new URLSearchParams('10=ABC'))).to.include('path');
    expect(queryAttributeProblem(new URLSearchParams('9999=ABC'))).to.equal(null);
  });
});
