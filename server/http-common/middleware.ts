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

export function requestId(): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const id = INCOMING_ID.test(incoming) ? incoming : fastUlid();
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

export function accessLog(app: AppContext, listener: 'api' | 'redirect'): Koa.Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const state = ctx.state as RequestState;
      const route = state.route ?? 'unmatched';
      app.metrics.httpRequests.inc({ listener, method: ctx.method, route, status: String(ctx.status) });
      app.metrics.httpDuration.observe({ listener, method: ctx.method, route }, seconds);
      app.log.info(
        {
          request_id: state.requestId,
          listener,
          method: ctx.method,
          route,
          path: ctx.path,
          status: ctx.status,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
          org: state.orgUlid,
        },
        'request',
      );
    }
  };
}

/** Renders ApiError as its JSON body; anything else is a plain 500 with the request id. */
export function errorHandler(app: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const state = ctx.state as RequestState;
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = err.body();
        return;
      }
      app.log.error({ err, request_id: state.requestId, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { message: 'Internal server error.', code: 'internal', request_id: state.requestId };
    }
  };
}
