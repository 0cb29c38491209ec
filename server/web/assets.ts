// The dashboard's built front end (dashboard/dist, made by `make dashboard`): hashed assets under
// /app/assets with a year of immutable caching, gzip when the browser takes it, and index.html
// (never cached) for every other /app page, where the front end routes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import { ApiError } from '../errors.js';
import type { RequestState } from '../http-common/middleware.js';
import { loadStaticFile, sendStaticFile, type StaticFile } from '../http-common/static-files.js';

const DASHBOARD_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dashboard', 'dist');

type Asset = StaticFile;

/** Headers of every dashboard page: nothing but our own scripts, no framing, no sniffing. */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; object-src 'none'; base-uri 'none'; " +
    "frame-ancestors 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** Every file of the build, read once at start; null when the front end has not been built. */
export function loadDashboard(dist = DASHBOARD_DIST): { index: Asset; assets: Map<string, Asset> } | null {
  const indexFile = path.join(dist, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Asset>();
  const dir = path.join(dist, 'assets');
  if (fs.existsSync(dir)) {
    for (const name of fs.readdirSync(dir)) assets.set(name, loadStaticFile(path.join(dir, name)));
  }
  return { index: loadStaticFile(indexFile), assets };
}

/** The front end's routes (dashboard/src/app.tsx); anything else under /app is a 404. */
const PAGES = ['/app', '/app/sign-in', '/app/link/:secret', '/app/account', '/app/staff', '/app/o/{*page}'];

export function mountDashboardAssets(router: Router, dist = DASHBOARD_DIST): void {
  const built = loadDashboard(dist);

  // GET /app/assets/{file}
  router.get('/app/assets/:file', (ctx) => {
    (ctx.state as RequestState).route = '/app/assets/{file}';
    const asset = built?.assets.get(ctx.params.file);
    if (!asset) throw ApiError.notFound('file');
    sendStaticFile(ctx, asset, 'public, max-age=31536000, immutable');
  });

  // GET /app and the front end's pages (it routes them itself)
  router.get(PAGES, (ctx) => {
    (ctx.state as RequestState).route = '/app';
    ctx.set(PAGE_HEADERS);
    if (!built) {
      ctx.status = 503;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body =
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>' +
        '<body><main><h1>The dashboard is not built</h1><p>Run <code>make dashboard</code> (part of ' +
        '<code>make start</code>) and restart the service.</p></main></body></html>';
      return;
    }
    sendStaticFile(ctx, built.index, 'no-cache');
  });
}
