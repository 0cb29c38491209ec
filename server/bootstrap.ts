// Opens the stores, migrates them and builds the application context. Used by the server, the
// standalone worker, the CLI and the tests, so start-up is written once.
import type { Config } from './config.js';
import { createAppContext, loadSecretKey, type AppContext, type Clock } from './context.js';
import { reconcileFallbackDomains } from './domains/fallback.js';
import type { Logger } from './logger.js';
import { openClickHouse, type ClickHouseHandle } from './stores/clickhouse.js';
import { migrateClickHouse, migratePostgres, migrateWorkerSchema } from './stores/migrate.js';
import { createKnex, startPostgres } from './stores/postgres.js';
import { ApiError } from './errors.js';
import type { GeoDatabase } from './geo/database.js';

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
}

/** A ClickHouse handle for processes that did not open ClickHouse: any use is a clear 503. */
export function unavailableClickHouse(reason: string, database: string): ClickHouseHandle {
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

export async function boot(config: Config, log: Logger, opts: BootOptions = {}): Promise<AppContext> {
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
      geo: opts.geo,
    });
    // Closed last-registered-first: the stores go after everything that uses them.
    app.onClose(() => pg.stop());
    app.onClose(() => db.destroy());
    app.onClose(() => ch!.close());
    app.onClose(() => app.notify.close());
    await app.principals.start();
    return app;
  } catch (err) {
    await ch?.close().catch(() => undefined);
    await db.destroy().catch(() => undefined);
    await pg.stop().catch(() => undefined);
    throw err;
  }
}
