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
export const PATTERN_MESSAGE = 'x-pattern-message';

/** `pattern` with the message a mismatch gets, e.g. patterned(SLUG, 'Must be 1 to 64 of ...'). */
export function patterned(pattern: string, message: string): JsonSchema {
  return { pattern, [PATTERN_MESSAGE]: message };
}

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

function makeAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: false,
    useDefaults: true,
    strict: false,
    // parentSchema on errors, for the pattern message.
    verbose: true,
    // OpenAPI keywords that ajv does not know but our schemas carry for documentation.
    keywords: ['example', 'x-mcp', PATTERN_MESSAGE],
  });
  addFormats(ajv);
  return ajv;
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
      fn = (kind === 'body' ? this.bodyAjv : this.queryAjv).compile(schema);
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
  switch (err.keyword) {
    case 'required':
      return 'This field is required.';
    case 'additionalProperties':
      return 'This field is not allowed.';
    case 'type':
      return p.type === 'integer'
        ? 'Must be an integer written in decimal digits, e.g. 30.'
        : `Must be of type ${String(p.type)}.`;
    case 'enum':
      return `Must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'format':
      return `Must be a valid ${String(p.format)}.`;
    case 'pattern': {
      const own = (err.parentSchema as JsonSchema | undefined)?.[PATTERN_MESSAGE];
      return typeof own === 'string' ? own : `Must match the pattern ${String(p.pattern)}.`;
    }
    case 'minLength':
      return `Must be at least ${String(p.limit)} characters.`;
    case 'maxLength':
      return `Must be at most ${String(p.limit)} characters.`;
    case 'minimum':
      return `Must be at least ${String(p.limit)}.`;
    case 'maximum':
      return `Must be at most ${String(p.limit)}.`;
    case 'minItems':
      return `Must have at least ${String(p.limit)} items.`;
    case 'maxItems':
      return `Must have at most ${String(p.limit)} items.`;
    case 'uniqueItems':
      return 'Must not contain duplicates.';
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
