// Every answer the integration suite gets from a documented operation is checked against the
// OpenAPI document the service serves, by a validator that is not ours: Stoplight Prism's HTTP
// validator (@stoplight/prism-http, the one its validation proxy runs). Prism fails an undeclared
// status, a body that breaks its schema, a wrong media type and a missing or malformed declared
// header. It does not look at headers the document leaves out, so one rule completes it: every
// header beyond HTTP's own framing must be declared for that operation and status.
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
// Not in the package's index; the validation proxy calls it on every upstream answer.
import { validateInput, validateOutput } from '@stoplight/prism-http/dist/validator/index.js';
import { operations } from '../../server/all-operations.js';
import { buildOpenApi } from '../../server/operations/openapi.js';

/** Headers HTTP itself (Node's server) puts on every answer; the document need not declare them. */
const HTTP_FRAMING = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

export interface Exchange {
  method: string;
  /** Path with the query string, as requested. */
  path: string;
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text for other media types; undefined without a body. */
  body: unknown;
}

type IHttpOperation = Awaited<ReturnType<typeof getHttpOperationsFromSpec>>[number];

interface Route {
  op: IHttpOperation;
  pattern: RegExp;
  params: number;
}

let routes: Promise<Route[]> | undefined;

/** The served document's operations as Prism reads them, most specific path first. */
function documentRoutes(): Promise<Route[]> {
  routes ??= (async () => {
    const doc = buildOpenApi(operations, 'http://127.0.0.1');
    const ops = await getHttpOperationsFromSpec(doc as Parameters<typeof getHttpOperationsFromSpec>[0]);
    return ops
      .map((op) => ({
        op,
        pattern: new RegExp('^' + op.path.replace(/\{[a-z_]+\}/g, '[^/]+') + '$'),
        params: (op.path.match(/\{/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params);
  })();
  return routes;
}

/** The documented operation a request reached, if any (infrastructure and /mcp are not operations). */
async function routeOf(method: string, path: string): Promise<IHttpOperation | undefined> {
  const pathname = path.split('?')[0];
  const all = await documentRoutes();
  return all.find((r) => r.op.method === method.toLowerCase() && r.pattern.test(pathname))?.op;
}

/** What is wrong with an answer by the document; empty when it conforms or is no operation's. */
export async function conformanceProblems(x: Exchange): Promise<string[]> {
  const op = await routeOf(x.method, x.path);
  if (!op) return [];
  const headers: Record<string, string> = {};
  x.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const problems: string[] = [];
  const verdict = validateOutput({ resource: op, element: { statusCode: x.status, headers, body: x.body } });
  if (verdict._tag === 'Left') {
    for (const d of verdict.left) problems.push(`${d.path?.length ? d.path.join('.') + ': ' : ''}${d.message}`);
  }
  const declared = op.responses.find((r) => r.code === String(x.status));
  if (declared) {
    const known = new Set((declared.headers ?? []).map((h) => h.name.toLowerCase()));
    for (const name of Object.keys(headers)) {
      if (!HTTP_FRAMING.has(name) && !known.has(name)) problems.push(`header ${name} is not declared for ${x.status}`);
    }
  }
  return problems.map((p) => `${x.method} ${x.path} -> ${x.status} (${op.iid}): ${p}`);
}

/** Exchanges checked in this process, per operation id: the coverage of the conformance check. */
export const checkedExchanges = new Map<string, number>();

/** Throws when an answer breaks the document; counts it otherwise. */
export async function assertConforms(x: Exchange): Promise<void> {
  const problems = await conformanceProblems(x);
  if (problems.length) {
    throw new Error(`The answer breaks the OpenAPI document:\n  ${problems.join('\n  ')}`);
  }
  const op = await routeOf(x.method, x.path);
  if (op?.iid) checkedExchanges.set(op.iid, (checkedExchanges.get(op.iid) ?? 0) + 1);
}

/**
 * What is wrong with a JSON request body by the document, as Prism's validation proxy judges it
 * (empty when it conforms). Only the body counts: the path's parameters and the token are the
 * caller's to get right.
 */
export async function requestBodyProblems(method: string, path: string, body: unknown): Promise<string[]> {
  const op = await routeOf(method, path);
  if (!op) throw new Error(`${method} ${path} is no documented operation`);
  const verdict = validateInput({
    resource: op,
    element: {
      method: method.toLowerCase() as 'post',
      url: { path },
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body,
    },
  });
  if (verdict._tag === 'Right') return [];
  return verdict.left.filter((d) => d.path?.[0] === 'body').map((d) => `${d.path!.join('.')}: ${d.message}`);
}
