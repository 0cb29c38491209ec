// Postgres migrations: each file in its own transaction, one migrator at a time across processes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createLogger } from '../../server/logger.js';
import { migratePostgres } from '../../server/stores/migrate.js';
import { createKnex } from '../../server/stores/postgres.js';
import { emptyDatabase, testLogLevel, testRoot } from '../helpers/stores.js';

const log = createLogger(testLogLevel(), { test: true });

async function migrationDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(testRoot(), name);
  await fs.mkdir(dir, { recursive: true });
  for (const [file, sql] of Object.entries(files)) await fs.writeFile(path.join(dir, file), sql);
  return dir;
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
});
