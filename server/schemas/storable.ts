// Postgres text and jsonb cannot hold U+0000, and jsonb refuses unpaired surrogates (text would
// silently turn them into U+FFFD). JSON allows both, so request bodies are checked before any write:
// such a string is a 422 on its field rather than a 500 from the database.
import { ApiError } from '../errors.js';

const NUL_OR_LONE_SURROGATE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function bad(s: string): boolean {
  return NUL_OR_LONE_SURROGATE.test(s);
}

/** The dotted path of the first string (value or key) Postgres cannot store, or null. */
export function findUnstorable(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return bad(value) ? path || '_' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnstorable(value[i], path ? `${path}.${i}` : String(i));
      if (hit) return hit;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${k}` : k;
      if (bad(k)) return here;
      const hit = findUnstorable(v, here);
      if (hit) return hit;
    }
  }
  return null;
}

export function assertStorable(body: unknown): void {
  const field = findUnstorable(body);
  if (field) throw ApiError.field(field, 'Must not contain NUL characters or unpaired surrogates.');
}
