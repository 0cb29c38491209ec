// Authenticated JSON reads answered before Koa. An operation marked jsonRead (a GET without query
// parameters whose answer is one JSON object) is run here, through the same runRestCall as its Koa
// route, when the request is plainly for it: method GET, no body, the path exactly the operation's
// with each parameter a 26-character ULID, no query string. Anything else (HEAD, another case, a
// trailing slash, an encoded character, a query, a body) goes to Koa, which answers it as before;
// both give the same answer.
// Koa's context, its middleware chain and the router's match of every route cost as much again as
// the read itself (docs/performance.md, API).
import type http from 'node:http';
import type { AppContext } from '../context.js';
import type { Operation, OperationResult } from '../operations/operation.js';
import { errorAnswer, recordRequest, requestIdFor, type RequestState } from '../http-common/middleware.js';
import { runRestCall, type RestRequest } from './rest.js';

/** A path parameter the fast path takes: a ULID's length and alphabet; other values go to Koa. */
const PARAM = /^[0-9A-Za-z]{26}$/;

interface FastRoute {
  op: Operation;
  /** The path's segments; a parameter as its name in braces. */
  segments: string[];
}

/** The handler that answers a plain read and returns true, or returns false and leaves the request alone. */
export type FastReads = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export function fastReads(app: AppContext, ops: readonly Operation[]): FastReads {
  const routes: FastRoute[] = ops
    .filter((op) => op.jsonRead && op.method === 'GET' && !op.query)
    .map((op) => ({ op, segments: op.path.split('/') }));
  const table: RouteTable = {
    exact: new Map(routes.filter((r) => !r.op.path.includes('{')).map((r) => [r.op.path, r])),
    withParams: routes.filter((r) => r.op.path.includes('{')),
  };
  return (req, res) => {
    if (req.method !== 'GET' || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'])
      return false;
    // These reads take no query parameters: a request with a query string is left to Koa, which
    // refuses the parameters (422) as it reads them.
    const url = req.url ?? '';
    const match = url.includes('?') ? null : matchRoute(table, url);
    if (!match) return false;
    answer(app, match, req, res).catch((err: unknown) => {
      // Only a failure to write the answer itself comes here.
      app.log.error({ err, path: match.path }, 'error answering a read');
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
    return true;
  };
}

/** The routes without parameters by their path (one lookup), and the others. */
interface RouteTable {
  exact: Map<string, FastRoute>;
  withParams: FastRoute[];
}

function matchRoute(
  table: RouteTable,
  path: string,
): { route: FastRoute; path: string; params: Record<string, string> } | null {
  const exact = table.exact.get(path);
  if (exact) return { route: exact, path, params: {} };
  const parts = path.split('/');
  for (const route of table.withParams) {
    if (route.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; ok && i < parts.length; i++) {
      const want = route.segments[i];
      if (want.startsWith('{')) {
        ok = PARAM.test(parts[i]);
        params[want.slice(1, -1)] = parts[i];
      } else ok = want === parts[i];
    }
    if (ok) return { route, path, params };
  }
  return null;
}

async function answer(
  app: AppContext,
  match: { route: FastRoute; path: string; params: Record<string, string> },
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const start = process.hrtime.bigint();
  const header = req.headers['x-request-id'];
  const state: RequestState = { requestId: requestIdFor(typeof header === 'string' ? header : '') };
  // Written at once with the answer (one writeHead, not a setHeader per header).
  const headers: Record<string, string | number> = {
    'X-Request-Id': state.requestId,
    'X-Content-Type-Options': 'nosniff',
  };
  const request: RestRequest = { headers: req.headers, params: match.params, query: {}, body: noBody };
  let status: number;
  let body: unknown;
  try {
    const result: OperationResult = await runRestCall(app, match.route.op, state, request, (more) =>
      Object.assign(headers, more),
    );
    if (result.contentType !== undefined || !isJsonObject(result.body))
      throw new Error(`${match.route.op.id} is marked jsonRead but answered something other than a JSON object`);
    status = result.status;
    if (result.headers) Object.assign(headers, result.headers);
    body = result.body;
  } catch (err) {
    const failed = errorAnswer(app, err, state, match.path);
    status = failed.status;
    Object.assign(headers, failed.headers);
    body = failed.body;
  }
  const text = JSON.stringify(body);
  headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(status, headers);
  res.end(text);
  recordRequest(app, 'api', { method: 'GET', path: match.path, status, start }, state);
}

/** A GET has no body. */
const noBody = async (): Promise<undefined> => undefined;

function isJsonObject(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Buffer.isBuffer(value) &&
    typeof (value as { pipe?: unknown }).pipe !== 'function'
  );
}
