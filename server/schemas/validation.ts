// JSON Schema validation with ajv. Every request schema has an $id and is compiled once at start.
// Bodies are validated as sent (no coercion); query strings and path parameters are coerced
// from strings to the declared types.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, type FieldErrors } from '../errors.js';

export type JsonSchema = Record<string, unknown>;

// ajv-formats is CommonJS; under NodeNext its default export is the module namespace.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    strict: false,
    // OpenAPI keywords that ajv does not know but our schemas carry for documentation.
    keywords: ['example', 'x-mcp'],
  });
  addFormats(ajv);
  return ajv;
}

export class Validators {
  private readonly bodyAjv = makeAjv(false);
  private readonly queryAjv = makeAjv(true);
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

  /** Validates (and for queries coerces, in place) a value; throws 422 with field errors. */
  check<T>(schema: JsonSchema, kind: 'body' | 'query', value: unknown): T {
    const fn = this.compile(schema, kind);
    if (!fn(value)) throw ApiError.validation(toFieldErrors(fn.errors ?? []));
    return value as T;
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
      return `Must be of type ${String(p.type)}.`;
    case 'enum':
      return `Must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'format':
      return `Must be a valid ${String(p.format)}.`;
    case 'pattern':
      return 'Has an invalid format.';
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
