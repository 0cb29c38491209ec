// JSON Schema validation with ajv. Every request schema has an $id and is compiled once at start.
// Bodies are validated as sent (no coercion); query strings and path parameters are read into the
// declared types by coerceParams first, strictly: an integer is decimal digits only (`0x7`, ` 7`,
// `7.0` and `7e0` stay strings and fail as such).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, type FieldErrors } from '../errors.js';
import { parseDecimalInteger } from './decimal.js';

export type JsonSchema = Record<string, unknown>;

/**
 * A schema may say in words what its `pattern` accepts; a value that does not match gets this
 * message rather than a generic one (an OpenAPI vendor extension, passed through to the document).
 */
const PATTERN_MESSAGE = 'x-pattern-message';

/** `pattern` with the message a mismatch gets, e.g. patterned(SLUG, 'Must be 1 to 64 of ...'). */
export function patterned(pattern: string, message: string): JsonSchema {
  return { pattern, [PATTERN_MESSAGE]: message };
}

/**
 * On a property: what a missing required value gets instead of "This field is required.", e.g. where
 * to find the value (an OpenAPI vendor extension, like PATTERN_MESSAGE).
 */
export const REQUIRED_MESSAGE = 'x-required-message';

/** Property names listed in an "is not allowed" message at most; more are summarised. */
const LISTED_FIELDS = 30;

/** "This field is not allowed." naming what is: the properties a schema accepts. */
export function notAllowedMessage(accepted: string[]): string {
  if (!accepted.length) return 'This field is not allowed: no fields are accepted here.';
  const shown = accepted.slice(0, LISTED_FIELDS).join(', ');
  const more = accepted.length > LISTED_FIELDS ? `, and ${accepted.length - LISTED_FIELDS} more` : '';
  return `This field is not allowed. Accepted: ${shown}${more}.`;
}

/** A value as a message shows it: strings quoted, the rest as JSON. */
function shown(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : JSON.stringify(v);
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'an array',
  null: 'null',
};

/** What a format accepts, in words, with an example. */
const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'Must be an ISO 8601 date-time with a time zone, e.g. 2026-12-31T23:59:59Z.',
  date: 'Must be a date YYYY-MM-DD, e.g. 2026-12-31.',
  time: 'Must be a time HH:MM:SS with a time zone, e.g. 23:59:59Z.',
  email: 'Must be an email address, e.g. you@example.com.',
  hostname: 'Must be a hostname, e.g. qr.example.com.',
  uri: 'Must be an absolute URI, e.g. https://example.com/page.',
  url: 'Must be an absolute URL, e.g. https://example.com/page.',
  uuid: 'Must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000.',
  ipv4: 'Must be an IPv4 address, e.g. 192.0.2.1.',
  ipv6: 'Must be an IPv6 address, e.g. 2001:db8::1.',
};

// ajv-formats is CommonJS; under NodeNext its default export is the module namespace.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function typesOf(schema: unknown): string[] {
  const t = (schema as JsonSchema | undefined)?.type;
  return Array.isArray(t) ? (t as string[]) : typeof t === 'string' ? [t] : [];
}

/**
 * Query and path values arrive as strings: each one whose property is declared integer or boolean
 * becomes one when it is written as such (decimal digits; true or false), and stays a string
 * otherwise, for the schema to refuse. Returns a copy.
 */
export function coerceParams(schema: JsonSchema, value: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = { ...value };
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string' || !Object.hasOwn(properties, key)) continue;
    const types = typesOf(properties[key]);
    const n = types.includes('integer') ? parseDecimalInteger(v) : null;
    if (n !== null) out[key] = n;
    else if (types.includes('boolean') && (v === 'true' || v === 'false')) out[key] = v === 'true';
  }
  return out;
}

/**
 * Schemas the OpenAPI document shows in another form than the one requests are validated with
 * (a code's bodies: one schema per type under a discriminator, where ajv reads if/then for its
 * per-field messages). Kept beside the schema rather than in it: ajv walks a schema whole, and a
 * nested $id may appear in it only once.
 */
const documentForms = new WeakMap<JsonSchema, JsonSchema>();

export function withDocumentForm(schema: JsonSchema, form: JsonSchema): JsonSchema {
  documentForms.set(schema, form);
  return schema;
}

export function documentFormOf(schema: JsonSchema): JsonSchema | undefined {
  return documentForms.get(schema);
}

function makeAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: false,
    useDefaults: true,
    strict: false,
    // parentSchema on errors, for the pattern message.
    verbose: true,
    // OpenAPI keywords that ajv does not know but our schemas carry for documentation.
    keywords: ['example', 'x-mcp', PATTERN_MESSAGE, REQUIRED_MESSAGE],
  });
  addFormats(ajv);
  // ajv compares array items of object type with fast-deep-equal, which calls an item's own
  // valueOf or toString when it has one: the JSON [{}, {"toString": false}] made it throw (a 500
  // found by the fuzz test). jsonEqual reads own keys and values only.
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', validate: itemsUnique });
  return ajv;
}

/** The uniqueItems keyword: false when two items of the array are equal JSON values. */
function itemsUnique(unique: boolean, items: unknown[]): boolean {
  if (!unique) return true;
  for (let i = 1; i < items.length; i++) for (let j = 0; j < i; j++) if (jsonEqual(items[i], items[j])) return false;
  return true;
}

/**
 * Equality of two parsed JSON values as JSON Schema defines it: numbers by value (0 equals -0),
 * arrays item by item, objects by their own keys in any order. Calls no method of either value.
 */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  return keys.every((k) => Object.hasOwn(y, k) && jsonEqual(x[k], y[k]));
}

export class Validators {
  private readonly bodyAjv = makeAjv();
  private readonly queryAjv = makeAjv();
  private readonly cache = new Map<string, ValidateFunction>();

  compile(schema: JsonSchema, kind: 'body' | 'query'): ValidateFunction {
    const id = schema.$id;
    if (typeof id !== 'string') throw new Error('request schemas need an $id');
    const key = `${kind}:${id}`;
    let fn = this.cache.get(key);
    if (!fn) {
      const ajv = kind === 'body' ? this.bodyAjv : this.queryAjv;
      // A schema nested in one compiled before (a code type's destination) is known by its $id.
      fn = (ajv.getSchema(id) as ValidateFunction | undefined) ?? ajv.compile(schema);
      this.cache.set(key, fn);
    }
    return fn;
  }

  /**
   * Validates a value (a query or path object is first read into its declared types, strictly);
   * returns it with defaults filled in, or throws 422 with field errors.
   */
  check<T>(schema: JsonSchema, kind: 'body' | 'query', value: unknown): T {
    const fn = this.compile(schema, kind);
    const input = kind === 'query' ? coerceParams(schema, value as Record<string, unknown>) : value;
    if (!fn(input)) throw ApiError.validation(toFieldErrors(fn.errors ?? []));
    return input as T;
  }
}

function fieldOf(err: ErrorObject): string {
  const base = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = err.params as Record<string, unknown>;
  const child =
    err.keyword === 'required'
      ? String(params.missingProperty)
      : err.keyword === 'additionalProperties'
        ? String(params.additionalProperty)
        : '';
  if (child) return base ? `${base}.${child}` : child;
  return base || '_';
}

function messageOf(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  const parent = (err.parentSchema ?? {}) as JsonSchema;
  const limit = String(p.limit);
  switch (err.keyword) {
    case 'required': {
      const property = (parent.properties as Record<string, JsonSchema> | undefined)?.[String(p.missingProperty)];
      const own = property?.[REQUIRED_MESSAGE];
      return typeof own === 'string' ? own : 'This field is required.';
    }
    case 'additionalProperties':
      return notAllowedMessage(Object.keys((parent.properties ?? {}) as JsonSchema));
    case 'type': {
      if (p.type === 'integer') return 'Must be an integer written in decimal digits, e.g. 30.';
      const names = String(p.type)
        .split(',')
        .map((t) => TYPE_NAMES[t] ?? t);
      return `Must be ${names.join(' or ')}.`;
    }
    case 'enum':
      return `Must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}.`;
    case 'const':
      return `Must be ${shown(p.allowedValue)}.`;
    case 'format':
      return FORMAT_MESSAGES[String(p.format)] ?? `Must be a valid ${String(p.format)}.`;
    case 'pattern': {
      const own = parent[PATTERN_MESSAGE];
      return typeof own === 'string' ? own : `Must match the pattern ${String(p.pattern)}.`;
    }
    case 'minLength':
      return p.limit === 1 ? 'Must not be empty.' : `Must be at least ${limit} characters.`;
    case 'maxLength':
      return `Must be at most ${limit} characters.`;
    case 'minimum':
      return `Must be at least ${limit}.`;
    case 'maximum':
      return `Must be at most ${limit}.`;
    case 'exclusiveMinimum':
      return `Must be greater than ${limit}.`;
    case 'exclusiveMaximum':
      return `Must be less than ${limit}.`;
    case 'multipleOf':
      return `Must be a multiple of ${String(p.multipleOf)}.`;
    case 'minItems':
      return `Must have at least ${limit} ${p.limit === 1 ? 'item' : 'items'}.`;
    case 'maxItems':
      return `Must have at most ${limit} items.`;
    case 'minProperties':
      return `Must have at least ${limit} ${p.limit === 1 ? 'key' : 'keys'}.`;
    case 'maxProperties':
      return `Must have at most ${limit} keys.`;
    case 'uniqueItems':
      return 'Must not contain duplicates.';
    case 'propertyNames':
      return `Property name ${JSON.stringify(String(p.propertyName))} is not accepted.`;
    case 'dependentRequired':
      return `${String(p.missingProperty)} is required when ${String(p.property)} is given.`;
    default:
      return err.message ? err.message.charAt(0).toUpperCase() + err.message.slice(1) + '.' : 'Is invalid.';
  }
}

export function toFieldErrors(errors: ErrorObject[]): FieldErrors {
  // No prototype: a field named __proto__ (an unknown key in a JSON body) is a plain key here.
  const out: FieldErrors = Object.create(null) as FieldErrors;
  for (const err of errors) {
    // oneOf/anyOf summaries repeat what their branches said.
    if (err.keyword === 'oneOf' || err.keyword === 'anyOf' || err.keyword === 'if') continue;
    const field = fieldOf(err);
    const msg = messageOf(err);
    const list = (out[field] ??= []);
    if (!list.includes(msg)) list.push(msg);
  }
  if (!Object.keys(out).length) out._ = ['The given data was invalid.'];
  return out;
}
