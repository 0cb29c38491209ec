// One embedded Postgres and one chDB per test process, started by the root hooks in
// test/setup.ts. A template database is migrated once; every test service gets a fresh copy.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import type { ClickHouseHandle } from '../../server/stores/clickhouse.js';
import { migratePostgres, migrateWorkerSchema } from '../../server/stores/migrate.js';
import {
  createKnex,
  ensureDatabase,
  startEmbeddedPostgres,
  type PostgresHandle,
} from '../../server/stores/postgres.js';

const TEMPLATE_DB = 'qr_template';

interface TestStores {
  root: string;
  pg: PostgresHandle;
  adminUrl: string;
  ch: ClickHouseHandle;
  counter: number;
}

let stores: TestStores | undefined;

export function testLogLevel(): string {
  return process.env.TEST_LOG_LEVEL ?? 'silent';
}

export async function startTestStores(): Promise<void> {
  if (stores) return;
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-test-'));
  await fs.chmod(root, 0o755);
  const log = createLogger(testLogLevel(), { test: true });
  let pg: PostgresHandle;
  let adminUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    // An external server: the URL names a database we may create others next to.
    adminUrl = process.env.TEST_DATABASE_URL;
    pg = { url: adminUrl, stop: async () => undefined };
  } else {
    pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'postgres', log, ephemeral: true });
    adminUrl = pg.url;
  }
  const tplUrl = withDatabase(adminUrl, TEMPLATE_DB);
  await ensureDatabase(adminUrl, TEMPLATE_DB);
  const db = createKnex(tplUrl, 2);
  try {
    await migratePostgres(db, log);
    await migrateWorkerSchema(tplUrl);
  } finally {
    await db.destroy();
  }
  const chConfig = loadConfig({ CLICKHOUSE_URL: process.env.TEST_CLICKHOUSE_URL ?? '' });
  const chPath = path.join(root, 'clickhouse');
  const client = chConfig.clickhouseUrl
    ? createClient({ url: chConfig.clickhouseUrl })
    : createClient({
        connection: (await import('chdb/connection')).createChdbConnection({ path: chPath }),
      } as Parameters<typeof createClient>[0]);
  const ch: ClickHouseHandle = {
    client,
    database: 'default',
    cluster: null,
    embedded: !chConfig.clickhouseUrl,
    close: () => client.close(),
  };
  stores = { root, pg, adminUrl, ch, counter: 0 };
}

export async function stopTestStores(): Promise<void> {
  if (!stores) return;
  const s = stores;
  stores = undefined;
  await s.ch.close().catch(() => undefined);
  await s.pg.stop();
  await fs.rm(s.root, { recursive: true, force: true });
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function current(): TestStores {
  if (!stores) throw new Error('test stores are not started: run tests through mocha (test/setup.ts)');
  return stores;
}

/** A fresh Postgres database copied from the migrated template, and a fresh ClickHouse database name. */
export async function freshDatabases(): Promise<{
  databaseUrl: string;
  chDatabase: string;
  dataDir: string;
  ch: ClickHouseHandle;
}> {
  const s = current();
  const n = ++s.counter;
  const name = `qr_t${process.pid}_${n}`;
  await ensureDatabase(s.adminUrl, name, TEMPLATE_DB);
  const dataDir = path.join(s.root, `svc${n}`);
  await fs.mkdir(dataDir, { recursive: true });
  return { databaseUrl: withDatabase(s.adminUrl, name), chDatabase: name, dataDir, ch: s.ch };
}

/**
 * A ClickHouse database of its own on the shared test store (created empty, nothing migrated), for
 * tests of the store's plumbing that make their own tables; drop it with dropClickHouseDatabase.
 */
export async function scratchClickHouse(): Promise<{ ch: ClickHouseHandle; db: string; dataDir: string }> {
  const fresh = await freshDatabases();
  await fresh.ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${fresh.chDatabase}` });
  return { ch: fresh.ch, db: fresh.chDatabase, dataDir: fresh.dataDir };
}

export async function dropClickHouseDatabase(ch: ClickHouseHandle | undefined, db: string): Promise<void> {
  await ch?.client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
}

/** A fresh, empty Postgres database (nothing migrated), for migration tests. */
export async function emptyDatabase(): Promise<string> {
  const s = current();
  const name = `qr_e${process.pid}_${++s.counter}`;
  await ensureDatabase(s.adminUrl, name);
  return withDatabase(s.adminUrl, name);
}

export function testRoot(): string {
  return current().root;
}
