// Postgres text and jsonb cannot hold U+0000, jsonb refuses unpaired surrogates (text would silently
// turn them into U+FFFD), and jsonb input has a nesting limit. JSON allows all three, so request
// bodies are checked before any write: such a value is a 422 on its field, not a 500 from the database.
import { ApiError } from '../errors.js';

const MAX_NESTING = 64;

// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const NUL_OR_LONE_SURROGATE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function bad(s: string): boolean {
  return NUL_OR_LONE_SURROGATE.test(s);
}

/** The first value Postgres cannot store: its dotted path and why, or null. Iterative, so depth is safe. */
function findUnstorable(value: unknown): { field: string; message: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (bad(v)) return { field: path || '_', message: 'Must not contain NUL characters or unpaired surrogates.' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_NESTING)
      return { field: path || '_', message: `Must not be nested more than ${MAX_NESTING} levels deep.` };
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    // Pushed in reverse so the first offending field in document order is reported.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i];
      const here = path ? `${path}.${k}` : k;
      if (bad(k)) return { field: here, message: 'Must not contain NUL characters or unpaired surrogates.' };
      stack.push({ value: x, path: here, depth: depth + 1 });
    }
  }
  return null;
}

export function assertStorable(body: unknown): void {
  const hit = findUnstorable(body);
  if (hit) throw ApiError.field(hit.field, hit.message);
}
