// The public redirect listener (REDIRECT_PORT): builds the redirect's parts on an application
// context (cache, counters, scan buffers, enricher, handler), serves them on a port, and drains
// them on close.
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { ORPHAN_SCAN_COLUMNS, SCAN_EVENT_COLUMNS } from '../analytics/scan-event.js';
import type { AppContext } from '../context.js';
import { RedirectCache } from './cache.js';
import { RedirectCounters } from './counters.js';
import { createEnricher } from './enrich.js';
import { RedirectHandler } from './handler.js';
import type { ThrottleOptions } from './password.js';
import { ScanBuffer } from './scan-buffer.js';
import { encodeScanRow, type OrphanRow, type ScanRow } from './scan-rows.js';

export interface RedirectOptions {
  /** Scan buffer flush interval (default 1000 ms) and batch size (default 10,000). */
  flushMs?: number;
  maxRows?: number;
  /** Redirect counter flush interval (default 1000 ms). */
  counterFlushMs?: number;
  /** Insert attempts before a batch is spilled, and the first backoff. */
  insertAttempts?: number;
  backoffMs?: number;
  spillDir?: string;
  throttle?: ThrottleOptions;
}

export interface RedirectListener {
  port: number;
  close(): Promise<void>;
  scans: ScanBuffer<ScanRow>;
  orphans: ScanBuffer<OrphanRow>;
  counters: RedirectCounters;
  cache: RedirectCache;
}

/** Builds the redirect's parts on an application context and serves them on a port. */
export async function startRedirectListener(
  app: AppContext,
  port: number,
  host: string,
  opts: RedirectOptions = {},
): Promise<RedirectListener> {
  const spillDir = opts.spillDir ?? path.join(app.config.dataDir, 'spill');
  const enricher = createEnricher(await app.geo.load(), app.secretKey);
  const cache = new RedirectCache(app.db, app.notify);
  await cache.start();
  const counters = new RedirectCounters(app.db, app.log, { flushMs: opts.counterFlushMs });
  counters.start();
  const buffer = <R extends object>(
    table: string,
    columns: readonly (keyof R & string)[],
    encode?: (row: R) => string,
  ) =>
    new ScanBuffer<R>({
      client: app.ch.client,
      table: `${app.ch.database}.${table}`,
      columns,
      encode,
      spillDir,
      log: app.log,
      flushMs: opts.flushMs,
      maxRows: opts.maxRows,
      attempts: opts.insertAttempts,
      backoffMs: opts.backoffMs,
    });
  const scans = buffer<ScanRow>('scan_events', SCAN_EVENT_COLUMNS, encodeScanRow);
  const orphans = buffer<OrphanRow>('orphan_scans', ORPHAN_SCAN_COLUMNS);
  scans.start();
  orphans.start();
  const handler = new RedirectHandler(app, enricher, cache, counters, scans, orphans, opts);

  const server = http.createServer({ keepAliveTimeout: 5000 }, handler.listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as net.AddressInfo).port;
  app.log.info({ port: bound, host }, 'redirect listener started');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, let requests in flight finish (a grace period, then cut), then drain.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 5000);
      await stopped;
      clearTimeout(grace);
      await Promise.all([scans.close(), orphans.close(), counters.close()]);
      await cache.close();
    })());
  app.onClose(close);
  return { port: bound, close, scans, orphans, counters, cache };
}
