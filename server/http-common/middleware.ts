// Middleware shared by the listeners: request id, access log + metrics, and the one place where
// errors become responses.
import type Koa from 'koa';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { fastUlid } from '../ids.js';

export interface RequestState {
  requestId: string;
  /** Route template for logs and metrics, set by the router (unmatched requests: "unmatched"). */
  route?: string;
  orgUlid?: string;
}

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The caller's X-Request-Id when it is a plausible id, else a new one. */
export function requestIdFor(incoming: string): string {
  return INCOMING_ID.test(incoming) ? incoming : fastUlid();
}

export function requestId(): Koa.Middleware {
  return async (ctx, next) => {
    const id = requestIdFor(ctx.get('X-Request-Id'));
    (ctx.state as RequestState).requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/**
 * A script inside an SVG runs when the SVG is opened as a document on our origin: an image of
 * ours (a logo is the client's SVG, sanitised) is given no right to run or fetch anything.
 */
const SVG_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; sandbox";

/**
 * Headers of every answer of the API listener (/v1, /mcp, the dashboard): no content sniffing, and
 * the SVG policy on every SVG whoever produced it.
 */
export function contentHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
    if (ctx.response.is('image/svg+xml')) ctx.set('Content-Security-Policy', SVG_CSP);
  };
}

/** One answered request in the metrics and the access log; `start` from process.hrtime.bigint(). */
export function recordRequest(
  app: AppContext,
  listener: 'api' | 'redirect',
  request: { method: string; path: string; status: number; start: bigint },
  state: RequestState,
): void {
  const seconds = Number(process.hrtime.bigint() - request.start) / 1e9;
  const { method, path, status } = request;
  const route = state.route ?? 'unmatched';
  app.metrics.httpRequests.inc({ listener, method, route, status: String(status) });
  app.metrics.httpDuration.observe({ listener, method, route }, seconds);
  app.log.info(
    {
      request_id: state.requestId,
      listener,
      method,
      route,
      path,
      status,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
      org: state.orgUlid,
    },
    'request',
  );
}

export function accessLog(app: AppContext, listener: 'api' | 'redirect'): Koa.Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      recordRequest(app, listener, { method: ctx.method, path: ctx.path, status: ctx.status, start }, ctx.state);
    }
  };
}

/** What an error thrown while answering becomes: an ApiError its own answer, anything else a logged 500. */
export function errorAnswer(
  app: AppContext,
  err: unknown,
  state: RequestState,
  path: string,
): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  if (err instanceof ApiError) return { status: err.status, headers: err.headers, body: err.body() };
  app.log.error({ err, request_id: state.requestId, path }, 'unhandled error');
  return {
    status: 500,
    headers: {},
    body: { message: 'Internal server error.', code: 'internal', request_id: state.requestId },
  };
}

/** Renders ApiError as its JSON body; anything else is a plain 500 with the request id. */
export function errorHandler(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const answer = errorAnswer(app, err, ctx.state as RequestState, ctx.path);
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}
