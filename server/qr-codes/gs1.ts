// GS1 Digital Link URI syntax (GS1 Digital Link URI Syntax 1.4) for the `gs1` code type: the GTIN
// (AI 01) as primary key, its key qualifiers in the standard's order (22 consumer product variant,
// 10 batch/lot, 21 serial), and the data attributes that travel in the query string.
//
// Why a parser of our own beside digital-link.js (which the tests use as the independent check,
// and which decompresses compressed URIs, ./gs1-compression.ts): that library validates a URI with
// a generated ABNF parser that costs ~10 ms per URI, far too slow for the redirect's hot path,
// while this covers exactly the keys the resolver serves in microseconds. test/unit/gs1.test.ts
// checks the two agree on valid and invalid URIs.

/** The Application Identifiers a gs1 code's path can carry, in the order the standard requires. */
const KEY_QUALIFIERS = [
  { ai: '22', field: 'cpv', name: 'consumer product variant' },
  { ai: '10', field: 'lot', name: 'batch/lot' },
  { ai: '21', field: 'serial', name: 'serial number' },
] as const;

/**
 * GS1 AI encodable character set 82 (GS1 General Specifications 7.11, figure 7.11-1): what a
 * batch/lot, serial or variant may hold, once percent-decoded.
 */
export const CSET82_PATTERN = '^[!"%&\'()*+,\\-./0-9:;<=>?A-Z_a-z]{1,20}$';
const CSET82 = new RegExp(CSET82_PATTERN);

/**
 * Data attributes accepted in the query string (and in a code's `data`): the AI, its name, and
 * its format from the GS1 General Specifications. Dates are YYMMDD (DD may be 00: end of month).
 */
const DATE = /^[0-9]{2}(0[1-9]|1[0-2])([0-2][0-9]|3[01])$/;
const N6 = /^[0-9]{6}$/;
const UPTO8 = /^[0-9]{1,8}$/;
export const DATA_ATTRIBUTES: Record<string, { name: string; format: RegExp; rule: string }> = {
  '11': { name: 'production date', format: DATE, rule: 'a date YYMMDD' },
  '12': { name: 'due date', format: DATE, rule: 'a date YYMMDD' },
  '13': { name: 'packaging date', format: DATE, rule: 'a date YYMMDD' },
  '15': { name: 'best before date', format: DATE, rule: 'a date YYMMDD' },
  '16': { name: 'sell by date', format: DATE, rule: 'a date YYMMDD' },
  '17': { name: 'expiration date', format: DATE, rule: 'a date YYMMDD' },
  '30': { name: 'variable count', format: UPTO8, rule: '1 to 8 digits' },
  '37': { name: 'count of trade items', format: UPTO8, rule: '1 to 8 digits' },
  '7003': { name: 'expiration date and time', format: /^[0-9]{10}$/, rule: '10 digits YYMMDDHHMM' },
  '7006': { name: 'first freeze date', format: DATE, rule: 'a date YYMMDD' },
};
// Trade measures: 310n net weight (kg), 320n net weight (lb), 330n gross weight (kg), n = decimals 0-5.
for (const [prefix, name] of [
  ['310', 'net weight (kg)'],
  ['320', 'net weight (lb)'],
  ['330', 'gross weight (kg)'],
] as const) {
  for (let n = 0; n <= 5; n++) DATA_ATTRIBUTES[`${prefix}${n}`] = { name, format: N6, rule: '6 digits' };
}

/** The GS1 mod-10 check digit of the digits before it (GS1 General Specifications 7.9.1). */
export function checkDigit(body: string): number {
  let sum = 0;
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += (body.charCodeAt(i) - 48) * w;
  return (10 - (sum % 10)) % 10;
}

/** A GTIN of 8, 12, 13 or 14 digits as GTIN-14, or the problem with it. */
export function normaliseGtin(value: string): { gtin: string } | { problem: string } {
  if (!/^[0-9]+$/.test(value)) return { problem: 'A GTIN has digits only.' };
  if (![8, 12, 13, 14].includes(value.length))
    return { problem: `A GTIN has 8, 12, 13 or 14 digits; this one has ${value.length}.` };
  const gtin = value.padStart(14, '0');
  const expected = checkDigit(gtin.slice(0, 13));
  if (expected !== gtin.charCodeAt(13) - 48)
    return { problem: `Wrong check digit: ${value} should end in ${expected}, not ${value[value.length - 1]}.` };
  return { gtin };
}

/** A product's slug when none is given: its GTIN and qualifiers (`09506000134352-ABC123`). */
export function gs1DefaultSlug(key: { gtin: string; cpv?: string; lot?: string; serial?: string }): string {
  const g = normaliseGtin(key.gtin);
  return ['gtin' in g ? g.gtin : key.gtin, key.cpv, key.lot, key.serial]
    .filter((v) => v !== undefined)
    .join('-')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .slice(0, 64);
}

/** Why a key qualifier's value (decoded) is not valid, or null. */
function qualifierProblem(ai: string, value: string): string | null {
  if (CSET82.test(value)) return null;
  const name = KEY_QUALIFIERS.find((q) => q.ai === ai)?.name ?? `AI ${ai}`;
  return `The ${name} (AI ${ai}) must be 1 to 20 characters of GS1 character set 82 (A-Z a-z 0-9 and !"%&'()*+,-./:;<=>?_).`;
}

/** Why a data attribute is not valid, or null. */
export function attributeProblem(ai: string, value: string): string | null {
  const spec = DATA_ATTRIBUTES[ai];
  if (!spec)
    return `AI ${ai} is not a data attribute this service accepts (${Object.keys(DATA_ATTRIBUTES).join(', ')}).`;
  return spec.format.test(value) ? null : `AI ${ai} (${spec.name}) must be ${spec.rule}; got "${value}".`;
}

/** The identity a Digital Link URI names: the GTIN-14 and its key qualifiers. */
export interface Gs1Key {
  gtin: string;
  cpv?: string;
  lot?: string;
  serial?: string;
}

/** Characters a value keeps as they are when percent-encoded (encodeURIComponent's, less !'()*). */
const UNRESERVED = /^[A-Za-z0-9._~-]*$/;
const enc = (v: string) =>
  UNRESERVED.test(v)
    ? v
    : encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The path of a key: `/01/<gtin-14>[/22/<cpv>][/10/<lot>][/21/<serial>]`, values percent-encoded. */
export function keyPath(key: Gs1Key): string {
  let path = `/01/${key.gtin}`;
  for (const q of KEY_QUALIFIERS) {
    const v = key[q.field];
    if (v !== undefined) path += `/${q.ai}/${enc(v)}`;
  }
  return path;
}

/** The query string of data attributes (`?17=261231&3103=000500`, by AI), or ''. */
export function attributeQuery(data: Record<string, string> | undefined): string {
  const keys = Object.keys(data ?? {}).sort();
  return keys.length ? `?${keys.map((k) => `${k}=${enc(data![k])}`).join('&')}` : '';
}

/** Parsing a path after its stem: a key, a syntax error (400), or a primary key we do not serve (404). */
export type ParsedPath =
  { kind: 'key'; key: Gs1Key } | { kind: 'invalid'; problem: string } | { kind: 'unsupported'; problem: string };

const PRIMARY_KEYS = new Set([
  '00', '01', '253', '255', '401', '402', '414', '417', '8003', '8004', '8006', '8010', '8013', '8017', '8018',
]); // prettier-ignore

/** Whether a path segment looks like the start of a Digital Link: a numeric AI of 2 to 4 digits. */
export function looksLikeAi(segment: string | undefined): boolean {
  return segment !== undefined && segment.length >= 2 && segment.length <= 4 && /^[0-9]+$/.test(segment);
}

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * The segments of a Digital Link path after its stem (raw, still percent-encoded), e.g.
 * ['01', '09506000134352', '10', 'ABC']. An empty last segment (a trailing slash) is tolerated.
 */
export function parseKeySegments(segments: string[]): ParsedPath {
  const parts = segments.length > 0 && segments[segments.length - 1] === '' ? segments.slice(0, -1) : segments;
  const [ai, raw] = parts;
  if (ai !== '01') {
    if (ai !== undefined && PRIMARY_KEYS.has(ai))
      return { kind: 'unsupported', problem: `This resolver resolves GTINs (AI 01) only, not AI ${ai}.` };
    return {
      kind: 'invalid',
      problem: `"${ai ?? ''}" is not a GS1 primary key this resolver knows; a product is /01/<GTIN>.`,
    };
  }
  if (raw === undefined || raw === '') return { kind: 'invalid', problem: 'AI 01 needs a GTIN after it.' };
  const g = normaliseGtin(raw);
  if ('problem' in g) return { kind: 'invalid', problem: g.problem };
  const key: Gs1Key = { gtin: g.gtin };
  let next = 0;
  for (let i = 2; i < parts.length; i += 2) {
    const qai = parts[i];
    const at = KEY_QUALIFIERS.findIndex((q) => q.ai === qai);
    if (at === -1)
      return { kind: 'invalid', problem: `AI ${qai} is not a key qualifier of a GTIN (22, 10 and 21, in that order).` };
    if (at < next)
      return {
        kind: 'invalid',
        problem: `Key qualifiers of a GTIN come in the order 22, 10, 21; AI ${qai} is out of order.`,
      };
    const rawValue = parts[i + 1];
    if (rawValue === undefined || rawValue === '')
      return { kind: 'invalid', problem: `AI ${qai} needs a value after it.` };
    // A plain value (most are) is its own decoding: decodeURIComponent only when it holds an escape.
    const value = rawValue.includes('%') ? decode(rawValue) : rawValue;
    if (value === null) return { kind: 'invalid', problem: `The value of AI ${qai} is not valid percent-encoding.` };
    const problem = qualifierProblem(qai, value);
    if (problem) return { kind: 'invalid', problem };
    key[KEY_QUALIFIERS[at].field] = value;
    next = at + 1;
  }
  return { kind: 'key', key };
}

/** Problems of the GS1 data attributes in a query string (numeric keys); other keys are left alone. */
export function queryAttributeProblem(query: URLSearchParams): string | null {
  for (const [k, v] of query) {
    if (/^[0-9]{2,4}$/.test(k)) {
      if (KEY_QUALIFIERS.some((q) => q.ai === k) || k === '01')
        return `AI ${k} is part of the path of a Digital Link URI, not of its query string.`;
      // An AI this service does not know is passed on untouched (the target may know it).
      const p = DATA_ATTRIBUTES[k] ? attributeProblem(k, v) : null;
      if (p) return p;
    }
  }
  return null;
}
