// The public redirect listener (REDIRECT_PORT, and REDIRECT_TLS_PORT when set): builds the
// redirect's parts on an application context (cache, counters, scan buffers, enricher, handler),
// serves them on a port (and over TLS, certificates by SNI), and drains them on close.
import fs from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { storedRowsWanted } from '../analytics/live-handoff.js';
import { Sealer } from '../at-rest.js';
import type { AppContext } from '../context.js';
import { findServingCertificate } from '../domains/certificate-store.js';
import { ChallengeCache } from './acme-challenge.js';
import { RedirectCache, type CacheOptions } from './cache.js';
import { RedirectCounters } from './counters.js';
import { createEnricher } from './enrich.js';
import { RedirectHandler } from './handler.js';
import type { ThrottleOptions } from './password-throttle.js';
import { ScanBuffer, type Batch } from './scan-buffer.js';
import { scanBatchCounter } from './scan-counts.js';
import { flushSoonerWhileStreamed, scanBatchPublisher } from './scan-stream.js';
import { FileJournal, JournalGroup, REDIRECT_TABLES } from './scan-ipc.js';
import { encodeScanRow, type ActionRow, type OrphanRow, type ScanRow } from './scan-rows.js';
import { CertificateCache, createTlsServer, type CertificatePair } from './tls.js';
import { stoppable } from '../http-common/stop-server.js';

export interface RedirectOptions {
  /** Scan buffer flush interval and batch size (default: SCAN_FLUSH_MS and SCAN_BATCH_MAX_ROWS). */
  flushMs?: number;
  maxRows?: number;
  /** Redirect counter flush interval (default 1000 ms). */
  counterFlushMs?: number;
  /** Insert attempts before a batch is spilled, and the first backoff. */
  insertAttempts?: number;
  backoffMs?: number;
  spillDir?: string;
  throttle?: ThrottleOptions;
  /** Orphan rows recorded per domain per second (default 100); more are counted, not written. */
  orphansPerSecond?: number;
  /** The code and domain cache: sizes, TTL, lookups of filtered keys per second. */
  cache?: CacheOptions;
  /** HTTPS port (0: any free one); default REDIRECT_TLS_PORT, null: no HTTPS listener. */
  tlsPort?: number | null;
  /** The default certificate; default the files REDIRECT_TLS_CERT_FILE and REDIRECT_TLS_KEY_FILE. */
  defaultCertificate?: CertificatePair;
  /**
   * Each scan is journaled before it is answered (scan-ipc.ts), so a process killed outright loses
   * nothing it answered: on by default in every mode; false only for the benchmark's baseline
   * (BENCH_JOURNAL=off). `insertVia`, when given, carries sealed batches to the process owning the
   * store (REDIRECT_PROCESSES on embedded chDB).
   */
  journal?: boolean;
  insertVia?: (table: string) => (batch: Batch) => Promise<void>;
}

export interface RedirectListener {
  port: number;
  close(): Promise<void>;
  scans: ScanBuffer<ScanRow>;
  orphans: ScanBuffer<OrphanRow>;
  /** Actions on landing pages (downloads, links, store badges). */
  actions: ScanBuffer<ActionRow>;
  /**
   * Replays the gs1_resolutions journals and spill files of a version before clickhouse/0026 (a GS1
   * resolution's dimensions are in its scan's row now); nothing is pushed into it.
   */
  gs1Replay: ScanBuffer<object>;
  counters: RedirectCounters;
  cache: RedirectCache;
  challenges: ChallengeCache;
  /** The HTTPS port, or null when there is no HTTPS listener. */
  tlsPort: number | null;
  certificates: CertificateCache | null;
}

function listenOn(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/** How long a stop lets the redirect's requests in flight finish before it closes their connections. */
const STOP_GRACE_MS = 5000;

/** Builds the redirect's parts on an application context and serves them on a port. */
export async function startRedirectListener(
  app: AppContext,
  port: number,
  host: string,
  opts: RedirectOptions = {},
): Promise<RedirectListener> {
  const spillDir = opts.spillDir ?? path.join(app.config.dataDir, 'spill');
  const enricher = createEnricher(await app.geo.load(), app.secretKey);
  const cache = new RedirectCache(app.db, app.notify, {
    ...opts.cache,
    onError: (err) => app.log.warn({ err }, 'redirect: building the known-keys filter failed; lookups read Postgres'),
  });
  await cache.start();
  const counters = new RedirectCounters(app.db, app.log, { flushMs: opts.counterFlushMs, spillDir });
  counters.start();
  // The scans' journal is a group: a turn's rows are written together at its end, and their answers
  // held until then; orphan rows (404s, sampled) and landing-page actions are written one by one
  // and hold nothing. All three are journaled in every mode (a crash loses none of them) unless
  // journal: false.
  const journaled = opts.journal ?? true;
  const answerGate = journaled ? new JournalGroup(app.log) : undefined;
  const scanJournal = answerGate ? new FileJournal(spillDir, 'scan_events', app.log, answerGate) : undefined;
  const buffer = <R extends object>(
    table: string,
    encode?: (row: R) => string,
    journal?: FileJournal,
    count?: (batch: Batch, own: boolean) => Promise<void>,
    stored?: (batch: Batch) => Promise<void>,
  ) =>
    new ScanBuffer<R>({
      client: app.ch.client,
      table: `${app.ch.database}.${table}`,
      columns: REDIRECT_TABLES[table].columns as readonly (keyof R & string)[],
      formerColumns: REDIRECT_TABLES[table].former,
      encode,
      spillDir,
      log: app.log,
      flushMs: opts.flushMs ?? app.config.scanFlushMs,
      maxRows: opts.maxRows ?? app.config.scanBatchMaxRows,
      attempts: opts.insertAttempts,
      backoffMs: opts.backoffMs,
      insert: opts.insertVia?.(table),
      journal,
      count,
      stored,
      keepRows: stored ? () => storedRowsWanted(app) : undefined,
      // What the count and stored hooks count per batch (redirects_count, the stream's ledger).
      tally:
        count || stored
          ? ['code_id', 'org_id'].map((c) => REDIRECT_TABLES[table].columns.indexOf(c)).filter((i) => i >= 0)
          : undefined,
    });
  // redirects_count is added per batch (scan-counts.ts); a capped code's batch settles the
  // reservation it was served from (counters.ts).
  const scans = buffer<ScanRow>(
    'scan_events',
    encodeScanRow,
    scanJournal,
    scanBatchCounter(app.db, app.log, REDIRECT_TABLES.scan_events.columns, counters.holder.id),
    scanBatchPublisher(app, REDIRECT_TABLES.scan_events.columns),
  );
  const orphans = buffer<OrphanRow>(
    'orphan_scans',
    undefined,
    journaled ? new FileJournal(spillDir, 'orphan_scans', app.log) : undefined,
  );
  const actions = buffer<ActionRow>(
    'scan_actions',
    undefined,
    journaled ? new FileJournal(spillDir, 'scan_actions', app.log) : undefined,
    undefined,
    scanBatchPublisher(app, REDIRECT_TABLES.scan_actions.columns, 'action'),
  );
  const gs1Replay = buffer<object>('gs1_resolutions');
  scans.start();
  orphans.start();
  actions.start();
  gs1Replay.start();
  const stopWatching = flushSoonerWhileStreamed(app, [scans, actions]);
  const challenges = new ChallengeCache(app.db, app.notify, (h) => cache.hostMayExist(h));
  await challenges.start();
  const handler = new RedirectHandler(app, enricher, cache, counters, scans, orphans, actions, challenges, {
    ...opts,
    answerGate,
  });

  const server = http.createServer({ keepAliveTimeout: 5000 }, handler.listener);
  const stopServer = stoppable(server, STOP_GRACE_MS);
  server.on('checkContinue', handler.checkContinue);
  const bound = await listenOn(server, port, host);
  app.readiness.listening('redirect', () => server.listening);
  app.log.info({ port: bound, host }, 'redirect listener started');

  const tlsPort = opts.tlsPort === undefined ? app.config.redirectTlsPort : opts.tlsPort;
  let tls: { stop: () => Promise<void>; port: number; certificates: CertificateCache } | null = null;
  if (tlsPort !== null) {
    const sealer = new Sealer(app.secretKey);
    const certificates = new CertificateCache(
      (name) => findServingCertificate(app.db, sealer, name, app.clock.now()),
      app.notify,
      app.secretKey,
      { hostMayExist: (h) => cache.hostMayExist(h) },
    );
    await certificates.start();
    const defaultCertificate = opts.defaultCertificate ?? {
      certificatePem: await fs.readFile(app.config.redirectTlsCertFile, 'utf8'),
      privateKeyPem: await fs.readFile(app.config.redirectTlsKeyFile, 'utf8'),
    };
    const tlsServer = createTlsServer({ defaultCertificate, certificates }, handler.listener);
    tlsServer.on('checkContinue', handler.checkContinue);
    const stopTls = stoppable(tlsServer, STOP_GRACE_MS);
    const boundTls = await listenOn(tlsServer, tlsPort, host);
    tls = { stop: stopTls, port: boundTls, certificates };
    app.readiness.listening('redirect_tls', () => tlsServer.listening);
    app.log.info({ port: boundTls, host }, 'redirect TLS listener started');
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, let requests in flight finish, then drain.
      await Promise.all([stopServer(), tls?.stop()]);
      stopWatching();
      await Promise.all([scans.close(), orphans.close(), actions.close(), gs1Replay.close(), counters.close()]);
      await cache.close();
    })());
  app.onClose(close);
  return {
    port: bound,
    close,
    scans,
    orphans,
    actions,
    gs1Replay,
    counters,
    cache,
    challenges,
    tlsPort: tls?.port ?? null,
    certificates: tls?.certificates ?? null,
  };
}
