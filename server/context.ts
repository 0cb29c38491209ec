// The application context: built once at start and passed explicitly to every entry point
// (REST, MCP, redirect, CLI, workers). Nothing here is a module-level singleton.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { PrincipalCache } from './auth/principal-cache.js';
import { rateLimitHelpUrl, type Config } from './config.js';
import { GeoDatabase } from './geo/database.js';
import type { Logger } from './logger.js';
import { Admitter } from './metering/admission.js';
import { createMetrics, type Metrics } from './metrics.js';
import { IdempotencyKeys } from './operations/idempotency.js';
import { PasswordWork } from './qr-codes/password.js';
import { Readiness } from './readiness.js';
import { RenderPool } from './rendering/pool.js';
import { Validators } from './schemas/validation.js';
import type { ClickHouseHandle } from './stores/clickhouse.js';
import { NotifyListener } from './stores/notify.js';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Password checks that may wait for a free slot before the form answers 429 (documented). */
export const PASSWORD_CHECKS_WAITING = 100;

export interface AppContext {
  config: Config;
  log: Logger;
  db: Knex;
  /** Connection string of `db`, for clients that need their own connections (LISTEN, worker). */
  databaseUrl: string;
  ch: ClickHouseHandle;
  clock: Clock;
  metrics: Metrics;
  validators: Validators;
  /** Admission (rate limit + metering) with per-organization group commit. */
  admitter: Admitter;
  /** Idempotency keys of POST and PATCH calls (server/operations/idempotency.ts). */
  idempotency: IdempotencyKeys;
  /** The process's LISTEN connection for cache invalidation. */
  notify: NotifyListener;
  /** Bearer-token authentication with an invalidated in-memory cache. */
  principals: PrincipalCache;
  /** The IP databases scans are enriched with, loaded on first use. */
  geo: GeoDatabase;
  /** Key for signed cookies and salted visitor hashes. */
  secretKey: Buffer;
  /** Password hashing and checking (scrypt), bounded per process. */
  passwords: PasswordWork;
  /** Render threads with a bounded queue and an image cache (server/rendering/pool.ts). */
  renders: RenderPool;
  /** Which listeners this process runs and whether they accept (/readyz). */
  readiness: Readiness;
  /** The API listener's bound port (for links); the configured port until it listens. */
  apiPort(): number;
  setApiPort(port: number): void;
  /** Run at shutdown, last registered first (listeners, buffers, workers). */
  onClose(fn: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface ContextParts {
  config: Config;
  log: Logger;
  db: Knex;
  databaseUrl: string;
  ch: ClickHouseHandle;
  clock?: Clock;
  secretKey?: Buffer;
  collectDefaultMetrics?: boolean;
  /** Shared IP databases (tests run many contexts in one process and load them once). */
  geo?: GeoDatabase;
}

export async function loadSecretKey(config: Config): Promise<Buffer> {
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

export function createAppContext(parts: ContextParts): AppContext {
  const closers: (() => Promise<void>)[] = [];
  let port = parts.config.apiPort;
  const notify = new NotifyListener(parts.databaseUrl, parts.log);
  const metrics = createMetrics(parts.collectDefaultMetrics ?? false);
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
    validators: new Validators(),
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
    geo: parts.geo ?? new GeoDatabase(),
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
