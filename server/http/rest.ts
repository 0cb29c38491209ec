// REST adapter: mounts every operation on the router. It authenticates, reads the body only
// after admission, and renders the operation's result; the rules live in executeOperation
// (server/operations/execute.ts). Plain JSON reads are also answered before Koa, through the same
// runRestCall (./fast-reads.ts).
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppContext } from '../context.js';
import { rateHeaders, type RateInfo } from '../metering/admission.js';
import { executeOperation } from '../operations/execute.js';
import { idempotencyKeyHeader } from '../operations/idempotency.js';
import { readsBody, VIA_REST, type Operation, type OperationResult } from '../operations/operation.js';
import { readJsonBody } from '../http-common/body.js';
import type { RequestState } from '../http-common/middleware.js';
import { respond, routerPath } from '../http-common/respond.js';

/** What a REST call reads of its request, whoever parsed it (Koa, or the fast reads). */
export interface RestRequest {
  headers: Record<string, string | string[] | undefined>;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** The body, read once the call is admitted; undefined for a method without one. */
  body(): Promise<unknown>;
}

/**
 * A header's value as Koa's ctx.get gives it: '' when absent, a repeated one joined. (Callers read
 * each header by its own name, `headers.accept`, rather than through one `headers[name]`: a read by
 * a changing key is a slow, megamorphic lookup on every request.)
 */
function joined(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** Authenticates and runs one REST call; `setHeaders` receives the rate-limit headers once admitted. */
export async function runRestCall(
  app: AppContext,
  op: Operation,
  state: RequestState,
  req: RestRequest,
  setHeaders: (headers: Record<string, string>) => void,
): Promise<OperationResult> {
  state.route = op.path;
  const { headers } = req;
  const principal = await app.principals.authenticate(joined(headers.authorization), app.clock.now());
  state.orgUlid = principal.org.ulid;
  return executeOperation(
    app,
    principal,
    op,
    async () => ({ params: req.params, query: req.query, body: await req.body() }),
    {
      requestId: state.requestId,
      log: app.log.child({ request_id: state.requestId }),
      accept: joined(headers.accept),
      ifNoneMatch: joined(headers['if-none-match']),
      lastEventId: joined(headers['last-event-id']),
      via: VIA_REST,
      onRate: rateSink(setHeaders),
      idempotencyKey: idempotencyKeyHeader(headers),
    },
  );
}

/** The rate headers to `setHeaders`. (A closure made here is not given a name per call.) */
function rateSink(setHeaders: (headers: Record<string, string>) => void): (info: RateInfo) => void {
  return (info) => setHeaders(rateHeaders(info));
}

export function mountOperations(router: Router, app: AppContext, ops: readonly Operation[]): void {
  for (const op of ops) {
    const method = op.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    router[method](routerPath(op.path), async (ctx: Koa.Context) => {
      const request: RestRequest = {
        headers: ctx.headers,
        params: { ...ctx.params },
        query: { ...ctx.query },
        body: async () => (readsBody(ctx.method) ? readJsonBody(ctx, app.config.bodyLimitBytes) : undefined),
      };
      respond(ctx, await runRestCall(app, op, ctx.state as RequestState, request, (h) => ctx.set(h)));
    });
  }
}
