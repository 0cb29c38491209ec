// An operation's result as a Koa response, and OpenAPI path templates as router paths: shared by
// the REST adapter (server/http/) and the dashboard's API (server/web/).
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context.js';
import type { OperationResult } from '../operations/operation.js';

/** Routes mounted on the API listener by another adapter (the MCP endpoint, the dashboard). */
export type RouteMounter = (router: Router, app: AppContext) => void;

/** The dashboard's JSON endpoints, under the API listener. */
export const WEB_API = '/app/api';

/** Koa-router path from an OpenAPI template: /v1/tokens/{token_id} -> /v1/tokens/:token_id */
export function routerPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

export function respond(ctx: Koa.Context, result: OperationResult): void {
  ctx.status = result.status;
  if (result.headers) ctx.set(result.headers);
  if (result.body === undefined || result.status === 204) {
    ctx.body = null;
    return;
  }
  if (result.contentType) ctx.type = result.contentType;
  ctx.body = result.body;
}
