// Forward-only migrations: numbered plain SQL files in sql/ for Postgres, numbered modules in
// clickhouse/ for ClickHouse. Each is applied once and recorded with the SHA-256 of its file; a
// database that records a migration this code does not know is ahead of the code, and one whose
// applied file has changed since is not what the files say: start-up refuses both. Migrations
// recorded before checksums were kept get the checksum of the file as it is on their first run.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import type { ClickHouseHandle } from './clickhouse.js';
import { withConnection } from './postgres.js';
import type { Logger } from '../logger.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SQL_DIR = path.join(ROOT, 'sql');
const CLICKHOUSE_DIR = path.join(ROOT, 'clickhouse');

export class MigrationError extends Error {}

interface MigrationFile {
  version: number;
  name: string;
  file: string;
}

async function listMigrations(dir: string, ext: RegExp): Promise<MigrationFile[]> {
  const files = (await fs.readdir(dir)).filter((f) => ext.test(f)).sort();
  const seen = new Set<number>();
  return files.map((f) => {
    const m = /^(\d{4})_([a-z0-9_]+)\./.exec(f);
    if (!m) throw new MigrationError(`migration file ${f} is not named NNNN_name`);
    const version = Number(m[1]);
    if (seen.has(version)) throw new MigrationError(`two migrations numbered ${m[1]} in ${dir}`);
    seen.add(version);
    return { version, name: m[2], file: path.join(dir, f) };
  });
}

function checkNotAhead(applied: number[], known: MigrationFile[], store: string): void {
  const max = known.length ? known[known.length - 1].version : 0;
  const ahead = applied.filter((v) => v > max);
  if (ahead.length) {
    throw new MigrationError(
      `the ${store} database has migration ${Math.max(...ahead)} applied, but this code knows up to ${max}; ` +
        'refusing to start an older service against a newer database',
    );
  }
}

/** The SHA-256 (hex) of a migration file's bytes. */
async function fileChecksum(file: string): Promise<string> {
  return crypto
    .createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');
}

/**
 * Refuses applied migrations whose file changed since: a released migration is frozen, and a
 * database migrated from other text is not the schema the files describe.
 */
function checkUnchanged(
  recorded: Map<number, string | null>,
  known: MigrationFile[],
  current: Map<number, string>,
  store: string,
): void {
  const changed = known.filter((m) => {
    const was = recorded.get(m.version);
    return was && was !== current.get(m.version);
  });
  if (!changed.length) return;
  const list = changed
    .map(
      (m) =>
        `${m.file.startsWith(ROOT + path.sep) ? path.relative(ROOT, m.file) : m.file} (applied ${recorded.get(m.version)!.slice(0, 12)}, file now ${current.get(m.version)!.slice(0, 12)})`,
    )
    .join(', ');
  throw new MigrationError(
    `the ${store} database applied ${changed.length === 1 ? 'a migration' : 'migrations'} whose file has changed since: ${list}. ` +
      'A released migration is frozen: restore the file as it was applied (git log -p on it) and put the change in a new migration',
  );
}

async function checksums(known: MigrationFile[]): Promise<Map<number, string>> {
  return new Map(await Promise.all(known.map(async (m) => [m.version, await fileChecksum(m.file)] as const)));
}

const MIGRATION_LOCK = 727274;

/**
 * Applies pending Postgres migrations, each file in its own transaction (a failure leaves the
 * earlier ones applied and recorded, and nothing of the failed one). One migrator at a time across
 * processes: a session advisory lock held on a connection of its own for the whole run.
 */
export async function migratePostgres(db: Knex, log: Logger, dir = SQL_DIR): Promise<number[]> {
  const known = await listMigrations(dir, /\.sql$/);
  const applied: number[] = [];
  await withConnection(db, async (lock) => {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await db.raw(`create table if not exists schema_migrations (
        version integer primary key, name text not null, applied_at timestamptz not null default now())`);
      // Databases migrated before checksums were kept have no column for them.
      await db.raw('alter table schema_migrations add column if not exists checksum text');
      const rows: { version: number; checksum: string | null }[] = await db('schema_migrations').select(
        'version',
        'checksum',
      );
      const recorded = new Map(rows.map((r) => [r.version, r.checksum]));
      const done = [...recorded.keys()];
      checkNotAhead(done, known, 'Postgres');
      const current = await checksums(known);
      checkUnchanged(recorded, known, current, 'Postgres');
      for (const m of known) {
        if (recorded.has(m.version) && recorded.get(m.version) === null) {
          await db('schema_migrations')
            .where({ version: m.version })
            .update({ checksum: current.get(m.version) });
        }
      }
      for (const m of known) {
        if (recorded.has(m.version)) continue;
        const sql = await fs.readFile(m.file, 'utf8');
        await db.transaction(async (trx) => {
          await trx.raw(sql);
          await trx('schema_migrations').insert({ version: m.version, name: m.name, checksum: current.get(m.version) });
        });
        applied.push(m.version);
        log.info({ version: m.version, name: m.name }, 'postgres migration applied');
      }
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
  return applied;
}

/** graphile-worker keeps its own schema; it is migrated with ours. */
/** When each of these Postgres migrations was applied to this database (epoch ms); absent: not applied. */
export async function postgresAppliedAt(db: Knex, versions: number[]): Promise<Map<number, number>> {
  const rows: { version: number; at: string }[] = (
    await db.raw(
      `select version, (extract(epoch from applied_at) * 1000)::bigint as at from schema_migrations where version = any(?)`,
      [versions],
    )
  ).rows;
  return new Map(rows.map((r) => [Number(r.version), Number(r.at)]));
}

export async function migrateWorkerSchema(url: string): Promise<void> {
  await runWorkerMigrations({ connectionString: url });
}

export interface ClickHouseMigrationContext {
  database: string;
  cluster: string | null;
  retentionDays: number;
}

/** A ClickHouse migration module exports `statements(ctx)`: the DDL to run, in order. */
interface ClickHouseMigration {
  statements(ctx: ClickHouseMigrationContext): string[];
}

async function loadClickHouseMigrations(
  dir = CLICKHOUSE_DIR,
): Promise<(MigrationFile & { module: ClickHouseMigration })[]> {
  const known = await listMigrations(dir, /^\d{4}_.*\.ts$/);
  return Promise.all(
    known.map(async (m) => ({ ...m, module: (await import(pathToFileURL(m.file).href)) as ClickHouseMigration })),
  );
}

export async function migrateClickHouse(
  ch: ClickHouseHandle,
  retentionDays: number,
  log: Logger,
  dir = CLICKHOUSE_DIR,
): Promise<number[]> {
  const known = await loadClickHouseMigrations(dir);
  const ctx: ClickHouseMigrationContext = { database: ch.database, cluster: ch.cluster, retentionDays };
  const onCluster = ch.cluster ? ` ON CLUSTER ${ch.cluster}` : '';
  await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${ch.database}${onCluster}` });
  const table = `${ch.database}.schema_migrations`;
  await ch.client.command({
    query: `CREATE TABLE IF NOT EXISTS ${table}${onCluster} (version UInt32, name String, applied_at DateTime DEFAULT now())
      ENGINE = ${ch.cluster ? "ReplicatedMergeTree('/clickhouse/tables/{database}/schema_migrations', '{replica}')" : 'MergeTree'} ORDER BY version`,
  });
  // Databases migrated before checksums were kept have no column for them ('' in their rows).
  await ch.client.command({
    query: `ALTER TABLE ${table}${onCluster} ADD COLUMN IF NOT EXISTS checksum String DEFAULT ''`,
  });
  // A version's checksum is recorded by a row of its own (no mutation): the non-empty one counts.
  const rows = await (
    await ch.client.query({
      query: `SELECT version, any(name) AS name, max(checksum) AS checksum FROM ${table} GROUP BY version`,
      format: 'JSONEachRow',
    })
  ).json<{ version: number; name: string; checksum: string }>();
  const recorded = new Map(rows.map((r) => [Number(r.version), r.checksum || null]));
  checkNotAhead([...recorded.keys()], known, 'ClickHouse');
  const current = await checksums(known);
  checkUnchanged(recorded, known, current, 'ClickHouse');
  const unrecorded = known.filter((m) => recorded.has(m.version) && recorded.get(m.version) === null);
  if (unrecorded.length) {
    await ch.client.insert({
      table,
      values: unrecorded.map((m) => ({ version: m.version, name: m.name, checksum: current.get(m.version) })),
      format: 'JSONEachRow',
    });
  }
  const applied: number[] = [];
  for (const m of known) {
    if (recorded.has(m.version)) continue;
    // ClickHouse DDL is not transactional; statements are written to be re-runnable (IF NOT EXISTS).
    for (const query of m.module.statements(ctx)) await ch.client.command({ query });
    await ch.client.insert({
      table,
      values: [{ version: m.version, name: m.name, checksum: current.get(m.version) }],
      format: 'JSONEachRow',
    });
    applied.push(m.version);
    log.info({ version: m.version, name: m.name }, 'clickhouse migration applied');
  }
  return applied;
}
