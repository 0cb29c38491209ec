// REST adapter: mounts every operation on the router. It authenticates, reads the body only
// after admission, and renders the operation's result; the rules live in executeOperation
// (server/operations/execute.ts).
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context.js';
import { rateHeaders } from '../metering/admission.js';
import { executeOperation } from '../operations/execute.js';
import { idempotencyKeyHeader } from '../operations/idempotency.js';
import { readsBody, VIA_REST, type Operation } from '../operations/operation.js';
import { readJsonBody } from '../http-common/body.js';
import type { RequestState } from '../http-common/middleware.js';
import { respond, routerPath } from '../http-common/respond.js';

export function mountOperations(router: Router, app: AppContext, ops: readonly Operation[]): void {
  for (const op of ops) {
    const method = op.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    router[method](routerPath(op.path), async (ctx: Koa.Context) => {
      const state = ctx.state as RequestState;
      state.route = op.path;
      const principal = await app.principals.authenticate(ctx.get('Authorization'), app.clock.now());
      state.orgUlid = principal.org.ulid;
      const result = await executeOperation(
        app,
        principal,
        op,
        async () => ({
          params: { ...ctx.params },
          query: { ...ctx.query },
          body: readsBody(ctx.method) ? await readJsonBody(ctx, app.config.bodyLimitBytes) : undefined,
        }),
        {
          requestId: state.requestId,
          log: app.log.child({ request_id: state.requestId }),
          accept: ctx.get('Accept'),
          ifNoneMatch: ctx.get('If-None-Match'),
          lastEventId: ctx.get('Last-Event-ID'),
          via: VIA_REST,
          onRate: (info) => ctx.set(rateHeaders(info)),
          idempotencyKey: idempotencyKeyHeader(ctx.headers),
        },
      );
      respond(ctx, result);
    });
  }
}
