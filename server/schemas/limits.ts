// The limits request schemas set, read from the schemas themselves: docs/limits.md's table of
// field limits is generated from them (`make docs-limits`), and a test checks that every string a
// request can carry has a maxLength (or is one of a fixed set), every integer a minimum and a
// maximum, and every array a maxItems (OWASP API4, unrestricted resource consumption).
import type { JsonSchema } from './validation.js';

export interface FieldLimit {
  /** Dotted path in the request: `rows[].slug`, `utm_params.*`. */
  field: string;
  /** The limit in words, e.g. "1 to 255 characters"; '' when the field has no size to state (an enum). */
  limit: string;
  /** False when a string, integer or array has no upper bound. */
  bounded: boolean;
}

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

function typesOf(s: JsonSchema): string[] {
  const t = s.type;
  return Array.isArray(t) ? (t as string[]) : typeof t === 'string' ? [t] : [];
}

const n = (v: unknown): string => (typeof v === 'number' ? v.toLocaleString('en-US') : String(v));

function range(min: unknown, max: unknown, unit: string): string {
  const text = (t: string) => (unit ? `${t} ${unit}` : t);
  if (min !== undefined && max !== undefined) return text(min === max ? n(max) : `${n(min)} to ${n(max)}`);
  if (max !== undefined) return text(`at most ${n(max)}`);
  if (min !== undefined) return text(`at least ${n(min)}`);
  return '';
}

/** The limits of one schema node (not its children), one entry per JSON type it allows. */
function own(s: JsonSchema, field: string): FieldLimit[] {
  const out: FieldLimit[] = [];
  const fixed = Array.isArray(s.enum) || 'const' in s;
  for (const t of typesOf(s)) {
    if (t === 'string') {
      const bounded = fixed || typeof s.maxLength === 'number';
      const limit = fixed ? '' : range(s.minLength, s.maxLength, 'characters');
      out.push({ field, limit, bounded });
    } else if (t === 'integer' || t === 'number') {
      const bounded = fixed || (typeof s.minimum === 'number' && typeof s.maximum === 'number');
      const limit = fixed
        ? ''
        : s.minimum !== undefined || s.maximum !== undefined
          ? range(s.minimum, s.maximum, '').trim()
          : '';
      out.push({ field, limit, bounded });
    } else if (t === 'array') {
      out.push({ field, limit: range(s.minItems, s.maxItems, 'items'), bounded: typeof s.maxItems === 'number' });
    } else if (t === 'object' && typeof s.maxProperties === 'number') {
      out.push({ field, limit: range(s.minProperties, s.maxProperties, 'keys'), bounded: true });
    }
  }
  return out;
}

/** Every field of a request schema (params, query or body) with its limits, depth first. */
export function fieldLimits(schema: JsonSchema | undefined, prefix = ''): FieldLimit[] {
  if (!isObject(schema)) return [];
  const out = own(schema, prefix || '(body)');
  const join = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties))
      out.push(...fieldLimits(sub as JsonSchema, join(name)));
  }
  if (isObject(schema.additionalProperties)) out.push(...fieldLimits(schema.additionalProperties, join('*')));
  if (isObject(schema.propertyNames)) {
    out.push(...fieldLimits({ type: 'string', ...schema.propertyNames }, `${join('*')} (key)`));
  }
  if (isObject(schema.items)) out.push(...fieldLimits(schema.items, `${prefix}[]`));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) for (const b of branches) out.push(...fieldLimits(b as JsonSchema, prefix));
  }
  return out.filter((f) => f.field !== '(body)' || f.limit);
}
