// Files served as they are (the dashboard's build, the API reference viewer's assets): read once,
// gzipped once when that pays, and sent with the caching the caller chooses.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type Koa from 'koa';

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

export interface StaticFile {
  type: string;
  raw: Buffer;
  gzip: Buffer | null;
}

/** A file's bytes (or the given text, typed by the name's extension) with its gzip form. */
export function loadStaticFile(file: string, content?: string): StaticFile {
  const raw = content === undefined ? fs.readFileSync(file) : Buffer.from(content);
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  const compressible = /javascript|css|svg|json|html/.test(type) && raw.length > 512;
  return { type, raw, gzip: compressible ? zlib.gzipSync(raw, { level: 9 }) : null };
}

export function sendStaticFile(ctx: Koa.Context, file: StaticFile, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = file.type;
  if (file.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.raw;
  }
}
