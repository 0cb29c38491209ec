import { expect } from 'chai';
import { parseDecimalInteger } from '../../server/schemas/decimal.js';
import { coerceParams } from '../../server/schemas/validation.js';

describe('integers written as text (pure)', () => {
  it('reads decimal digits with an optional minus sign, and nothing else', () => {
    expect(parseDecimalInteger('7')).to.equal(7);
    expect(parseDecimalInteger('007')).to.equal(7);
    expect(parseDecimalInteger('-12')).to.equal(-12);
    for (const text of ['0x7', ' 7', '7 ', '7.0', '7e0', '+7', '', '-', '0b1', '0o7', 'Infinity', '9007199254740993'])
      expect(parseDecimalInteger(text), JSON.stringify(text)).to.equal(null);
  });

  it('coerces only declared integer and boolean properties, leaving other text for the schema to refuse', () => {
    const schema = {
      type: 'object',
      properties: { range: { type: 'integer' }, flag: { type: 'boolean' }, name: { type: 'string' } },
    };
    expect(coerceParams(schema, { range: '30', flag: 'true', name: '7', extra: '1' })).to.deep.equal({
      range: 30,
      flag: true,
      name: '7',
      extra: '1',
    });
    expect(coerceParams(schema, { range: '0x7', flag: '1' })).to.deep.equal({ range: '0x7', flag: '1' });
  });
});
