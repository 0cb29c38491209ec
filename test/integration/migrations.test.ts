// Migrations: each Postgres file in its own transaction, one migrator at a time across processes;
// every applied file's checksum kept (Postgres and ClickHouse), and a changed file refused.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createLogger } from '../../server/logger.js';
import { startProblemLine } from '../../server/start-problems.js';
import { migrateClickHouse, migratePostgres, MigrationError } from '../../server/stores/migrate.js';
import { createKnex } from '../../server/stores/postgres.js';
import { dropClickHouseDatabase, emptyDatabase, scratchClickHouse, testLogLevel, testRoot } from '../helpers/stores.js';

const log = createLogger(testLogLevel(), { test: true });

async function migrationDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(testRoot(), name);
  await fs.mkdir(dir, { recursive: true });
  for (const [file, sql] of Object.entries(files)) await fs.writeFile(path.join(dir, file), sql);
  return dir;
}

/** SHA-256 of a file's bytes, computed here on its own (the migrator's is what is tested). */
const sha256 = async (file: string): Promise<string> =>
  crypto
    .createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');

async function refusal(run: Promise<unknown>): Promise<Error> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the run is refused').to.be.instanceOf(MigrationError);
  return err as Error;
}

async function recorded(db: Knex): Promise<number[]> {
  return (await db('schema_migrations').orderBy('version').select('version')).map(
    (r: { version: number }) => r.version,
  );
}

describe('Postgres migrations', () => {
  const dbs: Knex[] = [];
  const open = async () => {
    const url = await emptyDatabase();
    const db = createKnex(url, 4);
    dbs.push(db);
    return { url, db };
  };
  after(async () => {
    for (const db of dbs) await db.destroy();
  });

  it('applies each file in its own transaction: a failing file keeps the earlier ones applied and recorded, and nothing of itself', async () => {
    const { db } = await open();
    const dir = await migrationDir('mig-failing', {
      '0001_first.sql': 'create table first_table (id int);',
      '0002_second.sql': 'create table second_table (id int);',
      '0003_broken.sql': 'create table third_table (id int);\nselect no_such_function();',
    });
    let failure: unknown;
    await migratePostgres(db, log, dir).catch((err: unknown) => (failure = err));
    expect(failure, 'the broken migration fails the run').to.be.instanceOf(Error);
    expect(await recorded(db)).to.deep.equal([1, 2]);
    const tables = (
      await db.raw<{ rows: { table_name: string }[] }>(
        `select table_name from information_schema.tables where table_name in ('first_table', 'second_table', 'third_table') order by 1`,
      )
    ).rows.map((r) => r.table_name);
    expect(tables).to.deep.equal(['first_table', 'second_table']);

    // Fixed, the next run applies only what is left.
    await fs.writeFile(path.join(dir, '0003_broken.sql'), 'create table third_table (id int);');
    expect(await migratePostgres(db, log, dir)).to.deep.equal([3]);
    expect(await recorded(db)).to.deep.equal([1, 2, 3]);
  });

  it('lets one migrator at a time work: concurrent runs from separate pools apply every file exactly once', async () => {
    const { url, db } = await open();
    const other = createKnex(url, 4);
    dbs.push(other);
    // A file that fails when run twice, so a second application would not go unnoticed.
    const dir = await migrationDir('mig-concurrent', {
      '0001_a.sql': 'create table a_table (id int);',
      '0002_b.sql': 'create table b_table (id int);',
      '0003_c.sql': 'create table c_table (id int);',
    });
    const runs = await Promise.all([migratePostgres(db, log, dir), migratePostgres(other, log, dir)]);
    expect([...runs[0], ...runs[1]].sort()).to.deep.equal([1, 2, 3]);
    expect(await recorded(db)).to.deep.equal([1, 2, 3]);
  });

  it('records each applied file’s checksum and refuses to start, naming the file, once an applied file changed', async () => {
    const { db } = await open();
    const dir = await migrationDir('mig-checksum', {
      '0001_a.sql': 'create table a_table (id int);',
      '0002_b.sql': 'create table b_table (id int);',
    });
    await migratePostgres(db, log, dir);
    const sums = await db('schema_migrations').orderBy('version').select('version', 'checksum');
    expect(sums).to.deep.equal([
      { version: 1, checksum: await sha256(path.join(dir, '0001_a.sql')) },
      { version: 2, checksum: await sha256(path.join(dir, '0002_b.sql')) },
    ]);

    // An applied file edited, even by a space: refused, and the new file 0003 is not applied either.
    await fs.writeFile(path.join(dir, '0002_b.sql'), 'create table b_table (id int); ');
    await fs.writeFile(path.join(dir, '0003_c.sql'), 'create table c_table (id int);');
    const err = await refusal(migratePostgres(db, log, dir));
    expect(err.message).to.include('Postgres').and.include(path.join(dir, '0002_b.sql')).and.include('frozen');
    expect(err.message).to.not.include('0001_a.sql');
    // What `make start` prints: one line, no stack trace.
    expect(startProblemLine(err)).to.match(
      /^qr-service cannot start: the Postgres database applied a migration whose file has changed since: /,
    );
    expect(await recorded(db)).to.deep.equal([1, 2]);

    // Restored as applied, the run goes on.
    await fs.writeFile(path.join(dir, '0002_b.sql'), 'create table b_table (id int);');
    expect(await migratePostgres(db, log, dir)).to.deep.equal([3]);
  });

  it('records the checksums of a database migrated before they were kept, on its first run, and checks them from then on', async () => {
    const { db } = await open();
    const dir = await migrationDir('mig-legacy', {
      '0001_a.sql': 'create table a_table (id int);',
      '0002_b.sql': 'create table b_table (id int);',
    });
    await migratePostgres(db, log, dir);
    // The table as it was before checksums.
    await db.raw('alter table schema_migrations drop column checksum');
    expect(await migratePostgres(db, log, dir)).to.deep.equal([]);
    expect((await db('schema_migrations').where({ version: 2 }).first('checksum')).checksum).to.equal(
      await sha256(path.join(dir, '0002_b.sql')),
    );
    await fs.writeFile(path.join(dir, '0001_a.sql'), 'create table a_table (id bigint);');
    await refusal(migratePostgres(db, log, dir));
  });
});

describe('ClickHouse migrations', () => {
  let ch: Awaited<ReturnType<typeof scratchClickHouse>>['ch'] | undefined;
  let database = '';
  before(async () => {
    const scratch = await scratchClickHouse();
    ({ ch } = scratch);
    database = scratch.db;
  });
  after(async () => dropClickHouseDatabase(ch, database));

  const handle = () => ({ ...ch!, database });
  const table = () => `${database}.schema_migrations`;
  async function checksums(): Promise<Record<number, string>> {
    const rows = await (
      await ch!.client.query({
        query: `SELECT version, max(checksum) AS checksum FROM ${table()} GROUP BY version ORDER BY version`,
        format: 'JSONEachRow',
      })
    ).json<{ version: number; checksum: string }>();
    return Object.fromEntries(rows.map((r) => [Number(r.version), r.checksum]));
  }
  const migration = (name: string, column: string) =>
    `export function statements(ctx: { database: string }): string[] {
  return [\`CREATE TABLE IF NOT EXISTS \${ctx.database}.${name} (${column}) ENGINE = MergeTree ORDER BY tuple()\`];
}
`;

  it('records checksums (after the fact for rows from before them) and refuses to start once an applied file changed', async () => {
    const dir = await migrationDir('ch-checksum', {
      '0001_a.ts': migration('a_table', 'id UInt32'),
      '0002_b.ts': migration('b_table', 'id UInt32'),
    });
    // A database migrated before checksums were kept: its table has no checksum column, and 0001 applied.
    await ch!.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    await ch!.client.command({
      query: `CREATE TABLE ${table()} (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version`,
    });
    await ch!.client.insert({ table: table(), values: [{ version: 1, name: 'a' }], format: 'JSONEachRow' });

    expect(await migrateClickHouse(handle(), 30, log, dir)).to.deep.equal([2]);
    expect(await checksums()).to.deep.equal({
      1: await sha256(path.join(dir, '0001_a.ts')),
      2: await sha256(path.join(dir, '0002_b.ts')),
    });
    expect(await migrateClickHouse(handle(), 30, log, dir)).to.deep.equal([]);

    await fs.writeFile(path.join(dir, '0001_a.ts'), migration('a_table', 'id UInt64'));
    const err = await refusal(migrateClickHouse(handle(), 30, log, dir));
    expect(err.message).to.include('ClickHouse').and.include(path.join(dir, '0001_a.ts'));
  });
});
