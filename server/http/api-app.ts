// The API listener: /v1 operations, /v1/openapi.json, /mcp, /healthz, /readyz, /metrics, the
// index at / and the help pages under /docs.
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { spillBacklog, spillDirOf } from '../analytics/scan-spill.js';
import { apiBaseUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { operations as allOperations } from '../all-operations.js';
import { compileOperationSchemas } from '../operations/execute.js';
import { buildOpenApi } from '../operations/openapi.js';
import { API_VERSION, type Operation } from '../operations/operation.js';
import { accessLog, contentHeaders, errorHandler, requestId, type RequestState } from '../http-common/middleware.js';
import type { RouteMounter } from '../http-common/respond.js';
import { mountOperations } from './rest.js';
import { fastReads } from './fast-reads.js';
import { DOCS_CSP, docsPage, rateLimitPage, referenceViewerFiles } from './pages.js';
import { sendStaticFile } from '../http-common/static-files.js';
import { stoppable } from '../http-common/stop-server.js';

export interface ApiAppOptions {
  operations?: readonly Operation[];
  mounts?: RouteMounter[];
}

function isLoopback(address: string | undefined): boolean {
  const a = address?.startsWith('::ffff:') ? address.slice(7) : (address ?? '');
  return a === '::1' || (net.isIPv4(a) && a.startsWith('127.'));
}

const digest = (s: string): Buffer => crypto.createHash('sha256').update(s).digest();

/**
 * Who may read /metrics: with METRICS_TOKEN, a caller presenting it as a bearer token (from
 * anywhere); without one, only a caller on a loopback address.
 */
export function metricsAllowed(token: string | null, authorization: string, peer: string | undefined): boolean {
  if (!token) return isLoopback(peer);
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? '';
  return crypto.timingSafeEqual(digest(given), digest(token));
}

/** The router of the API listener: infrastructure routes, every operation, and the mounts. */
export function createApiRouter(app: AppContext, opts: ApiAppOptions = {}): Router {
  const ops = opts.operations ?? allOperations;
  compileOperationSchemas(app.validators, ops);
  const router = new Router();

  // GET /: where to start, for a person or a client that only knows the host.
  router.get('/', (ctx) => {
    (ctx.state as RequestState).route = '/';
    const base = apiBaseUrl(app.config, app.apiPort());
    ctx.body = {
      name: 'QR code service',
      version: API_VERSION,
      description: 'Organization-scoped dynamic QR codes: REST API under /v1, tool calls (MCP) at /mcp.',
      links: {
        openapi: `${base}/v1/openapi.json`,
        docs: `${base}/docs`,
        status: `${base}/v1/status`,
        mcp: `${base}/mcp`,
        rate_limits: `${base}/docs/rate-limits`,
        health: `${base}/healthz`,
        ready: `${base}/readyz`,
      },
    };
  });
  router.get('/healthz', (ctx) => {
    (ctx.state as RequestState).route = '/healthz';
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    (ctx.state as RequestState).route = '/readyz';
    const checks = await Promise.all([
      app.db.raw('select 1').then(
        () => 'ok',
        (e: Error) => e.message,
      ),
      app.ch.client.ping().then(
        (r) => (r.success ? 'ok' : String(r.error)),
        (e: Error) => e.message,
      ),
    ]);
    const [postgres, clickhouse] = checks;
    const { ready: listening, listeners } = app.readiness.state();
    const ready = postgres === 'ok' && clickhouse === 'ok' && listening;
    ctx.status = ready ? 200 : 503;
    // Scans waiting on disk for ClickHouse do not make the service unready (it answers and keeps
    // them), but an operator probing it should see them (docs/redirect.md).
    const backlog = spillBacklog(spillDirOf(app.config.dataDir));
    const scan_backlog = {
      status: backlog.files || backlog.quarantined ? 'pending' : 'empty',
      spill_files: backlog.files,
      spill_bytes: backlog.bytes,
      quarantined_batches: backlog.quarantined,
    };
    ctx.body = { status: ready ? 'ok' : 'unavailable', postgres, clickhouse, listeners, scan_backlog };
  });
  router.get('/metrics', async (ctx) => {
    (ctx.state as RequestState).route = '/metrics';
    if (!metricsAllowed(app.config.metricsToken, ctx.get('Authorization'), ctx.req.socket.remoteAddress)) {
      throw new ApiError(
        'forbidden',
        app.config.metricsToken
          ? '/metrics needs Authorization: Bearer <METRICS_TOKEN>.'
          : '/metrics answers only loopback addresses; set METRICS_TOKEN to scrape it from elsewhere.',
      );
    }
    ctx.type = app.metrics.registry.contentType;
    ctx.body = await app.metrics.registry.metrics();
  });
  let openapi: string | undefined;
  router.get('/v1/openapi.json', (ctx) => {
    (ctx.state as RequestState).route = '/v1/openapi.json';
    openapi ??= JSON.stringify(buildOpenApi(ops, `${apiBaseUrl(app.config, app.apiPort())}`));
    ctx.type = 'application/json';
    ctx.body = openapi;
  });
  router.get('/docs', (ctx) => {
    (ctx.state as RequestState).route = '/docs';
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = docsPage(app);
  });
  // GET /docs/assets/{file}: the reference viewer's files
  router.get('/docs/assets/:file', (ctx) => {
    (ctx.state as RequestState).route = '/docs/assets/{file}';
    const file = referenceViewerFiles().get(ctx.params.file);
    if (!file) throw ApiError.notFound('file');
    ctx.set('X-Content-Type-Options', 'nosniff');
    sendStaticFile(ctx, file, 'public, max-age=3600');
  });
  router.get('/docs/rate-limits', (ctx) => {
    (ctx.state as RequestState).route = '/docs/rate-limits';
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = rateLimitPage(app);
  });

  mountOperations(router, app, ops);
  for (const mount of opts.mounts ?? []) mount(router, app);
  return router;
}

/**
 * The API listener's request handler: plain JSON reads answered at once (./fast-reads.ts), every
 * other request by the Koa app.
 */
export function createApiHandler(app: AppContext, opts: ApiAppOptions = {}): http.RequestListener {
  const koa = createApiApp(app, opts).callback();
  const fast = fastReads(app, opts.operations ?? allOperations);
  return (req, res) => {
    if (!fast(req, res)) void koa(req, res);
  };
}

function createApiApp(app: AppContext, opts: ApiAppOptions = {}): Koa {
  const router = createApiRouter(app, opts);
  const koa = new Koa({ proxy: false });
  // Errors after the answer began: a streamed body's client going away (an event stream closed by
  // its reader) is the normal end of such an answer, not an error; anything else is logged.
  koa.on('error', (err: Error & { code?: string }) => {
    if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE') app.log.error({ err }, 'error after the response began');
  });
  koa.use(requestId());
  koa.use(contentHeaders());
  koa.use(accessLog(app, 'api'));
  koa.use(errorHandler(app));
  koa.use(router.routes());
  koa.use(async (ctx, next) => {
    // Router matched the path but not the method: 405 with Allow; nothing matched: 404.
    await next();
    if (ctx.status !== 404 || ctx.body) return;
    const allowed = router.stack
      .filter((layer) => layer.match(ctx.path) && layer.methods.length)
      .flatMap((layer) => layer.methods)
      .filter((m) => m !== 'HEAD');
    if (allowed.length) throw ApiError.methodNotAllowed([...new Set(allowed)]);
    throw new ApiError('not_found', `No endpoint ${ctx.method} ${ctx.path}.`);
  });
  return koa;
}

export interface Listener {
  port: number;
  /** Whether it still accepts connections. */
  listening(): boolean;
  close(): Promise<void>;
}

/**
 * How long a stop lets the API's requests in flight finish before it closes their connections (a live
 * scan stream is ended by its hub before that; a bulk create of 10,000 rows takes a few seconds).
 */
const API_STOP_GRACE_MS = 10_000;

/** Listens, and on close stops accepting, lets in-flight requests finish (API_STOP_GRACE_MS), then resolves. */
export function listen(handler: http.RequestListener, port: number, host: string): Promise<Listener> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  const stop = stoppable(server, API_STOP_GRACE_MS);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const bound = (server.address() as { port: number }).port;
      resolve({
        port: bound,
        listening: () => server.listening,
        close: stop,
      });
    });
  });
}
