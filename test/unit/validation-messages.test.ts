// Validation messages name what is accepted, for every keyword the request schemas use.
import { expect } from 'chai';
import { REQUIRED_MESSAGE, Validators, type JsonSchema } from '../../server/schemas/validation.js';
import { ApiError } from '../../server/errors.js';

const schema: JsonSchema = {
  $id: 'test.messages',
  type: 'object',
  additionalProperties: false,
  required: ['needed', 'hinted'],
  properties: {
    needed: { type: 'string' },
    hinted: { type: 'string', [REQUIRED_MESSAGE]: 'This field is required: see GET /v1/things.' },
    range: { type: 'integer', enum: [7, 30, 90] },
    url: { type: 'string', maxLength: 2048 },
    name: { type: ['string', 'null'], minLength: 1, maxLength: 255 },
    count: { type: 'integer', minimum: 1, maximum: 100 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    email: { type: 'string', format: 'email' },
    flag: { type: 'boolean' },
    kind: { type: 'string', const: 'qr_codes' },
    tags: { type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: { type: 'string' } },
    map: { type: 'object', maxProperties: 2 },
  },
};

function errorsOf(value: unknown): Record<string, string[]> {
  try {
    new Validators().check(schema, 'body', value);
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return (err as ApiError).extra.errors as Record<string, string[]>;
  }
  return expect.fail('no validation error');
}

describe('validation messages', () => {
  const base = { needed: 'x', hinted: 'y' };

  it('says a field is required, with the schema’s own hint where it has one', () => {
    expect(errorsOf({})).to.deep.equal({
      needed: ['This field is required.'],
      hinted: ['This field is required: see GET /v1/things.'],
    });
  });

  it('names the fields that are accepted when one is not', () => {
    expect(errorsOf({ ...base, colour: 'red' }).colour).to.deep.equal([
      'This field is not allowed. Accepted: needed, hinted, range, url, name, count, ratio, when, day, email, flag, kind, tags, map.',
    ]);
  });

  for (const [field, value, message] of [
    ['range', 14, 'Must be one of: 7, 30, 90.'],
    ['range', '30', 'Must be an integer written in decimal digits, e.g. 30.'],
    ['url', 'x'.repeat(2049), 'Must be at most 2048 characters.'],
    ['name', '', 'Must not be empty.'],
    ['name', 'x'.repeat(256), 'Must be at most 255 characters.'],
    ['name', 5, 'Must be a string or null.'],
    ['count', 0, 'Must be at least 1.'],
    ['count', 101, 'Must be at most 100.'],
    ['ratio', 1, 'Must be less than 1.'],
    ['ratio', 0, 'Must be greater than 0.'],
    ['when', 'tomorrow', 'Must be an ISO 8601 date-time with a time zone, e.g. 2026-12-31T23:59:59Z.'],
    ['day', '31.12.2026', 'Must be a date YYYY-MM-DD, e.g. 2026-12-31.'],
    ['email', 'nobody', 'Must be an email address, e.g. you@example.com.'],
    ['flag', 'yes', 'Must be true or false.'],
    ['kind', 'brands', 'Must be "qr_codes".'],
    ['tags', [], 'Must have at least 1 item.'],
    ['tags', ['a', 'b', 'c', 'd'], 'Must have at most 3 items.'],
    ['tags', ['a', 'a'], 'Must not contain duplicates.'],
    ['map', { a: 1, b: 2, c: 3 }, 'Must have at most 2 keys.'],
  ] as const) {
    it(`answers ${JSON.stringify(value).slice(0, 30)} for ${field} with "${message}"`, () => {
      expect(errorsOf({ ...base, [field]: value })[field]).to.include(message);
    });
  }
});

describe('uniqueItems over objects', () => {
  const pairs: JsonSchema = {
    $id: 'test.unique-objects',
    type: 'object',
    properties: { list: { type: 'array', uniqueItems: true, items: { type: 'object' } } },
  };
  const errorsOfList = (list: unknown): Record<string, string[]> | undefined => {
    try {
      new Validators().check(pairs, 'body', { list });
      return undefined;
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return (err as ApiError).extra.errors as Record<string, string[]>;
    }
  };

  // Keys named like Object.prototype's methods made ajv's own comparison call them and throw.
  for (const list of [
    [{}, { toString: false }],
    [{ valueOf: 1 }, {}],
    [{ toString: 'a' }, { toString: 'b' }],
    [{ constructor: 1 }, { constructor: 2 }],
    [{ a: 1 }, { a: 1, b: 2 }],
    [{ a: [1, 2] }, { a: [2, 1] }],
  ]) {
    it(`accepts ${JSON.stringify(list)} as distinct items`, () => {
      expect(errorsOfList(list)).to.equal(undefined);
    });
  }

  for (const list of [
    [{ toString: false }, { toString: false }],
    [
      { valueOf: 1, a: 'x' },
      { a: 'x', valueOf: 1 },
    ],
    [{ a: { b: [1, { c: null }] } }, { a: { b: [1, { c: null }] } }],
    [{ n: 0 }, { n: -0 }],
  ]) {
    it(`refuses ${JSON.stringify(list)} as duplicates`, () => {
      expect(errorsOfList(list)).to.deep.equal({ list: ['Must not contain duplicates.'] });
    });
  }
});
