// The application context: a type. It is built once at start by server/bootstrap.ts and passed
// explicitly to every entry point (REST, MCP, redirect, CLI, workers); nothing here is a
// module-level singleton. It names the shared modules only: what a resource or the runner puts on
// it (idempotency keys, password hashing) is described here by the little the context promises,
// and the implementation (server/operations/idempotency.ts, server/qr-codes/password.ts) is
// chosen by bootstrap.
import type { Knex } from 'knex';
import type { PrincipalCache } from './auth/principal-cache.js';
import type { Config } from './config.js';
import type { GeoDatabase } from './geo/database.js';
import type { Logger } from './logger.js';
import type { Admitter } from './metering/admission.js';
import type { Metrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import type { RenderPool } from './rendering/pool.js';
import type { Validators } from './schemas/validation.js';
import type { ClickHouseHandle } from './stores/clickhouse.js';
import type { NotifyListener } from './stores/notify.js';

export interface Clock {
  now(): Date;
}

/** The answer a call gives: what an operation returns (server/operations/operation.ts). */
export interface IdempotentResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  contentType?: string;
}

/** A call sent with an idempotency key. */
export interface IdempotentCall {
  orgId: number;
  key: string;
  /** The operation's id; part of the fingerprint, so one key cannot serve two operations. */
  operation: string;
  /** The request as sent (params, query, body); its canonical hash is the fingerprint. */
  input: unknown;
  /**
   * Admits and runs the call. It calls `handlerStarted` just before the handler runs: from then on
   * an error is the call's answer and is kept.
   */
  execute(handlerStarted: () => void): Promise<IdempotentResponse>;
  /** Admits a replay (rate window, not metered) before the stored answer is given. */
  admitReplay(): Promise<void>;
}

/** The idempotency keys of POST and PATCH calls (IdempotencyKeys, server/operations/idempotency.ts). */
export interface IdempotencyStore {
  /** Runs the call once per key, or gives the kept answer again. */
  run(call: IdempotentCall): Promise<IdempotentResponse>;
  /** Deletes keys past their 24 hours; returns how many. */
  prune(now?: Date): Promise<number>;
}

/** The process's bounded password hashing and checking (PasswordWork, server/qr-codes/password.ts). */
export interface PasswordHashing {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
  /** Whether a check would be refused right now. */
  readonly verifyBusy: boolean;
}

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
  idempotency: IdempotencyStore;
  /** The process's LISTEN connection for cache invalidation. */
  notify: NotifyListener;
  /** Bearer-token authentication with an invalidated in-memory cache. */
  principals: PrincipalCache;
  /** The IP databases scans are enriched with, loaded on first use. */
  geo: GeoDatabase;
  /** Key for signed cookies and salted visitor hashes. */
  secretKey: Buffer;
  /** Password hashing and checking (scrypt), bounded per process. */
  passwords: PasswordHashing;
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
