// The dashboard's built front end (dashboard/dist, made by `make dashboard`): hashed assets under
// /app/assets with a year of immutable caching, gzip when the browser takes it, and index.html
// (never cached) for every other /app page, where the front end routes.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type Koa from 'koa';
import { ApiError } from '../errors.js';
import type { RequestState } from '../http-common/middleware.js';

export const DASHBOARD_DIST = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'dashboard',
  'dist',
);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

interface Asset {
  type: string;
  raw: Buffer;
  gzip: Buffer | null;
}

/** Headers of every dashboard page: nothing but our own scripts, no framing, no sniffing. */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; object-src 'none'; base-uri 'none'; " +
    "frame-ancestors 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

function load(file: string): Asset {
  const raw = fs.readFileSync(file);
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  const compressible = /javascript|css|svg|json|html/.test(type) && raw.length > 512;
  return { type, raw, gzip: compressible ? zlib.gzipSync(raw, { level: 9 }) : null };
}

/** Every file of the build, read once at start; null when the front end has not been built. */
export function loadDashboard(dist = DASHBOARD_DIST): { index: Asset; assets: Map<string, Asset> } | null {
  const indexFile = path.join(dist, 'index.html');
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, Asset>();
  const dir = path.join(dist, 'assets');
  if (fs.existsSync(dir)) {
    for (const name of fs.readdirSync(dir)) assets.set(name, load(path.join(dir, name)));
  }
  return { index: load(indexFile), assets };
}

function send(ctx: Koa.Context, asset: Asset, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = asset.type;
  if (asset.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.raw;
  }
}

/** The front end's routes (dashboard/src/routes.ts); anything else under /app is a 404. */
const PAGES = ['/app', '/app/sign-in', '/app/link/:secret', '/app/account', '/app/staff', '/app/o/{*page}'];

export function mountDashboardAssets(router: Router, dist = DASHBOARD_DIST): void {
  const built = loadDashboard(dist);

  // GET /app/assets/{file}
  router.get('/app/assets/:file', (ctx) => {
    (ctx.state as RequestState).route = '/app/assets/{file}';
    const asset = built?.assets.get(ctx.params.file);
    if (!asset) throw ApiError.notFound('file');
    send(ctx, asset, 'public, max-age=31536000, immutable');
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
    send(ctx, built.index, 'no-cache');
  });
}
