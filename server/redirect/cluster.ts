// REDIRECT_PROCESSES > 1: the public redirect served by that many processes (node:cluster) sharing
// its ports, so one machine uses every core. The primary process is the one `make start` runs: it
// keeps the API, the worker and the stores, owns embedded chDB, and serves no redirect itself; it
// forks the redirect processes and starts a new one when one dies.
//
// Scans: on embedded chDB only the primary can write the store, so each redirect process sends its
// sealed batches to the primary over the cluster's IPC channel (scan-ipc.ts) and keeps them (journal,
// retries, spill file) until the primary acknowledges; with CLICKHOUSE_URL each process inserts
// itself. Either way every row is journaled before it is answered, and a process killed outright
// leaves journals that its replacement replays with their tokens (scan-buffer.ts), so nothing served
// is lost or counted twice.
//
// Everything else a redirect process keeps is already shared or bounded per process: redirect
// counts are added in Postgres once per scan batch (scan-counts.ts) and caps reserved there
// (counters.ts), the password throttle counts in Postgres, the code, domain and challenge caches
// are invalidated by Postgres NOTIFY on each process's own LISTEN connection. Per process: the
// orphan sampler (ORPHAN_SCANS_PER_SECOND each) and the password check slots
// (PASSWORD_VERIFY_CONCURRENCY each). docs/redirect.md says so too.
import cluster, { type Worker } from 'node:cluster';
import { boot } from '../bootstrap.js';
import { loadConfig } from '../config.js';
import type { AppContext } from '../context.js';
import { createLogger } from '../logger.js';
import { startRedirectListener } from './listener.js';
import { REDIRECT_PROCESS_ENV } from './process-role.js';
import { replayLeftovers } from './leftovers.js';
import { insertForWorker, OwnerInserts, type OwnerChannel } from './scan-ipc.js';

export interface RedirectCluster {
  /** The redirect processes running now. */
  workers(): Worker[];
  /** Stops the redirect processes (each drains its scans to the primary first) and waits for them. */
  close(): Promise<void>;
}

/** How long a redirect process may drain at shutdown before it is killed. */
const STOP_GRACE_MS = 30_000;

/** In the primary: forks `processes` redirect processes, answers their batches, restarts the dead. */
export async function startRedirectCluster(app: AppContext, processes: number): Promise<RedirectCluster> {
  const { log } = app;
  await replayLeftovers(app);
  const ownsStore = app.config.clickhouseUrl === null;
  const listening = new Set<number>();
  let stopping = false;
  let restarts = 0;

  const fork = (): Worker => {
    const worker = cluster.fork(REDIRECT_PROCESS_ENV);
    worker.on('message', (message: unknown) => {
      if (!ownsStore) return;
      void insertForWorker(app.ch.client, app.ch.database, message, log).then((ack) => {
        // A worker that died meanwhile never hears it; its replacement replays the journal.
        if (ack && worker.isConnected()) worker.send(ack);
      });
    });
    worker.on('listening', () => listening.add(worker.id));
    worker.on('exit', (code, signal) => {
      listening.delete(worker.id);
      if (stopping) return;
      log.warn({ pid: worker.process.pid, code, signal }, 'a redirect process died; starting another');
      // Quick deaths in a row (a start that fails) back off up to 10 s rather than spin.
      const delay = Math.min(10_000, 100 * 2 ** Math.min(restarts++, 7));
      setTimeout(() => {
        if (!stopping) fork();
      }, delay).unref();
    });
    worker.once('listening', () => {
      restarts = 0;
    });
    return worker;
  };

  // 'advanced': V8's serializer, so a scan batch's bytes cross the channel as a Buffer (scan-ipc.ts).
  cluster.setupPrimary({ execArgv: process.execArgv, serialization: 'advanced' });
  for (let i = 0; i < processes; i++) fork();
  app.readiness.listening('redirect', () => listening.size > 0);
  if (app.config.redirectTlsPort !== null) app.readiness.listening('redirect_tls', () => listening.size > 0);
  log.info({ processes, ownsStore }, 'redirect processes started');

  const workers = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      stopping = true;
      await Promise.all(
        workers().map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              const kill = setTimeout(() => w.process.kill('SIGKILL'), STOP_GRACE_MS);
              w.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              w.process.kill('SIGTERM');
            }),
        ),
      );
    })());
  app.onClose(close);
  return { workers, close };
}

/**
 * A redirect process: the redirect listener alone on the service's stores (Postgres shared; on
 * embedded chDB its batches go to the primary), stopped by SIGTERM, SIGINT or the primary going away.
 */
export async function runRedirectProcess(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, {}, config.logFormat).child({ redirectProcess: process.pid });
  const app = await boot(config, log, { clickhouse: config.clickhouseUrl !== null, migrate: false, preloadGeo: true });
  const channel = process as unknown as OwnerChannel;
  const owner = config.clickhouseUrl === null ? new OwnerInserts(channel) : null;
  try {
    await startRedirectListener(app, config.redirectPort, config.redirectHost, {
      journal: true,
      insertVia: owner ? (table) => owner.forTable(table) : undefined,
    });
  } catch (err) {
    await app.close();
    throw err;
  }
  // One drain whatever asks for it (Ctrl-C reaches the whole process group, the primary sends SIGTERM).
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ why }, 'redirect process stopping');
    app.readiness.stop();
    app.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'redirect process shutdown failed');
        process.exit(1);
      },
    );
  };
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('disconnect', () => stop('the primary process is gone'));
}
