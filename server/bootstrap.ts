// Opens the stores, migrates them and builds the application context. Used by the server, the
// standalone worker, the CLI and the tests, so start-up is written once.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { spillDirOf } from './analytics/scan-spill.js';
import { PrincipalCache } from './auth/principal-cache.js';
import { rateLimitHelpUrl, type Config } from './config.js';
import type { AppContext, Clock } from './context.js';
import { reconcileFallbackDomains } from './domains/fallback.js';
import { ApiError } from './errors.js';
import { GeoDatabase } from './geo/database.js';
import type { Logger } from './logger.js';
import { Admitter } from './metering/admission.js';
import { createMetrics } from './metrics.js';
import { IdempotencyKeys } from './operations/idempotency.js';
import { PasswordWork } from './qr-codes/password.js';
import { Readiness } from './readiness.js';
import { RenderPool } from './rendering/pool.js';
import { Validators } from './schemas/validation.js';
import { openClickHouse, type ClickHouseHandle } from './stores/clickhouse.js';
import { migrateClickHouse, migratePostgres, migrateWorkerSchema } from './stores/migrate.js';
import { NotifyListener } from './stores/notify.js';
import { createKnex, startPostgres } from './stores/postgres.js';

const systemClock: Clock = { now: () => new Date() };

/** Password checks that may wait for a free slot before the form answers 429 (documented). */
const PASSWORD_CHECKS_WAITING = 100;

export interface BootOptions {
  /** Open ClickHouse (default true). The CLI skips it for commands that do not need it. */
  clickhouse?: boolean;
  /** An already-open ClickHouse handle to share (tests: chDB allows one data path per process). */
  sharedClickHouse?: ClickHouseHandle;
  /** A Postgres URL to use instead of DATABASE_URL / embedded (tests). */
  databaseUrl?: string;
  migrate?: boolean;
  clock?: Clock;
  poolMax?: number;
  collectDefaultMetrics?: boolean;
  /**
   * Make the shared fallback domains match FALLBACK_ORIGINS (default false). Only the service does:
   * qrctl and the standalone worker may run with another environment and leave them alone.
   */
  reconcileFallbacks?: boolean;
  /** IP databases shared between contexts (tests); default: the context loads its own. */
  geo?: GeoDatabase;
  /**
   * Compiled request schemas: shared between contexts (tests), or compiled while the stores start (the
   * service); default: the context compiles its own.
   */
  validators?: Validators;
  /**
   * Start reading the IP databases at once (a process that serves redirects): their second or two of
   * parsing runs while Postgres and ClickHouse start, not after them.
   */
  preloadGeo?: boolean;
}

/** A ClickHouse handle for processes that did not open ClickHouse: any use is a clear 503. */
function unavailableClickHouse(reason: string, database: string): ClickHouseHandle {
  const fail = () => {
    throw ApiError.unavailable(reason);
  };
  const client = new Proxy({}, { get: (_t, prop) => (prop === 'close' ? async () => undefined : fail) });
  return {
    client: client as ClickHouseHandle['client'],
    database,
    cluster: null,
    embedded: false,
    close: async () => undefined,
  };
}

interface ContextParts {
  config: Config;
  log: Logger;
  db: Knex;
  databaseUrl: string;
  ch: ClickHouseHandle;
  clock?: Clock;
  secretKey?: Buffer;
  collectDefaultMetrics?: boolean;
  geo: GeoDatabase;
  validators: Validators;
}

async function loadSecretKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return crypto.createHash('sha256').update(config.secretKey).digest();
  const file = path.join(config.dataDir, 'secret.key');
  try {
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  } catch {
    const key = crypto.randomBytes(32);
    await fs.mkdir(config.dataDir, { recursive: true });
    await fs.writeFile(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  }
}

function createAppContext(parts: ContextParts): AppContext {
  const closers: (() => Promise<void>)[] = [];
  let port = parts.config.apiPort;
  const notify = new NotifyListener(parts.databaseUrl, parts.log);
  const metrics = createMetrics(parts.collectDefaultMetrics ?? false, spillDirOf(parts.config.dataDir));
  const clock = parts.clock ?? systemClock;
  const apiPort = () => port;
  const app: AppContext = {
    config: parts.config,
    log: parts.log,
    db: parts.db,
    databaseUrl: parts.databaseUrl,
    ch: parts.ch,
    clock,
    metrics,
    validators: parts.validators,
    admitter: new Admitter({
      db: parts.db,
      config: parts.config,
      clock,
      batchSizes: metrics.admissionBatch,
      helpUrl: () => rateLimitHelpUrl(parts.config, apiPort()),
    }),
    idempotency: new IdempotencyKeys({ db: parts.db, clock, waitMs: parts.config.idempotencyWaitMs }),
    notify,
    principals: new PrincipalCache(parts.db, notify, metrics.principalCache),
    geo: parts.geo,
    secretKey: parts.secretKey ?? crypto.randomBytes(32),
    passwords: new PasswordWork({
      hashConcurrency: parts.config.passwordHashConcurrency,
      verifyConcurrency: parts.config.passwordVerifyConcurrency,
      verifyQueue: PASSWORD_CHECKS_WAITING,
      onVerify: () => metrics.passwordChecks.inc(),
      onHash: () => metrics.passwordHashes.inc(),
    }),
    renders: new RenderPool({
      threads: parts.config.renderThreads,
      queue: parts.config.renderQueue,
      timeoutMs: parts.config.renderTimeoutMs,
      scannabilityTimeoutMs: parts.config.scannabilityTimeoutMs,
      cacheBytes: parts.config.renderCacheMb * 1024 * 1024,
      onThreadLost: (reason) => parts.log.warn({ reason }, 'render thread replaced'),
    }),
    readiness: new Readiness(),
    apiPort,
    setApiPort: (p) => {
      port = p;
    },
    onClose: (fn) => {
      closers.push(fn);
    },
    close: async () => {
      while (closers.length) {
        const fn = closers.pop()!;
        try {
          await fn();
        } catch (err) {
          parts.log.error({ err }, 'error during shutdown');
        }
      }
    },
  };
  app.onClose(() => app.renders.close());
  return app;
}

export async function boot(config: Config, log: Logger, opts: BootOptions = {}): Promise<AppContext> {
  const geo = opts.geo ?? new GeoDatabase();
  // A failed read is tried again where the redirect first needs the databases, and reported there.
  if (opts.preloadGeo) void geo.load().catch(() => undefined);
  const pg = opts.databaseUrl
    ? { url: opts.databaseUrl, stop: async () => undefined }
    : await startPostgres(config, log);
  const db = createKnex(pg.url, opts.poolMax ?? config.dbPoolMax);
  let ch: ClickHouseHandle | undefined;
  try {
    if (opts.migrate !== false) {
      await migratePostgres(db, log);
      await migrateWorkerSchema(pg.url);
    }
    if (opts.reconcileFallbacks) await reconcileFallbackDomains(db, config.fallbackOrigins, log);
    if (opts.sharedClickHouse) {
      ch = { ...opts.sharedClickHouse, close: async () => undefined };
    } else if (opts.clickhouse === false) {
      ch = unavailableClickHouse('ClickHouse is not open in this process.', config.clickhouseDatabase);
    } else {
      ch = await openClickHouse(config);
    }
    if (opts.migrate !== false && opts.clickhouse !== false) await migrateClickHouse(ch, config.scanRetentionDays, log);
    const app = createAppContext({
      config,
      log,
      db,
      databaseUrl: pg.url,
      ch,
      clock: opts.clock,
      secretKey: await loadSecretKey(config),
      collectDefaultMetrics: opts.collectDefaultMetrics,
      geo,
      validators: opts.validators ?? new Validators(),
    });
    // Closed last-registered-first: the stores go after everything that uses them.
    app.onClose(() => pg.stop());
    app.onClose(() => db.destroy());
    app.onClose(() => ch!.close());
    app.onClose(() => app.notify.close());
    // Before the stores close: the leases' unspent calls are given back.
    app.onClose(() => app.admitter.close());
    await app.principals.start();
    return app;
  } catch (err) {
    await ch?.close().catch(() => undefined);
    await db.destroy().catch(() => undefined);
    await pg.stop().catch(() => undefined);
    throw err;
  }
}
