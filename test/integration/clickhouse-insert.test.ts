// insertText, the one way rows reach ClickHouse, against the real store the tests run on (embedded
// chDB by default: its raw insert path, which hands the bytes over without building a string).
// The deduplication token belongs to one statement: a retry with it is stored once, and the next
// insert without it is stored, not mistaken for a retry.
import { expect } from 'chai';
import { insertText, type ClickHouseHandle } from '../../server/stores/clickhouse.js';
import { dropClickHouseDatabase, scratchClickHouse } from '../helpers/stores.js';

describe('insertText', function () {
  this.timeout(60_000);
  let ch: ClickHouseHandle;
  let db: string;
  let tables = 0;

  before(async () => ({ ch, db } = await scratchClickHouse()));
  after(() => dropClickHouseDatabase(ch, db));

  async function table(): Promise<string> {
    const name = `${db}.inserted_${++tables}`;
    await ch.client.command({
      query: `CREATE TABLE ${name} (id String, n UInt32, note String) ENGINE = MergeTree ORDER BY id
              SETTINGS non_replicated_deduplication_window = 1000`,
    });
    return name;
  }

  async function rows(name: string): Promise<{ id: string; n: number; note: string }[]> {
    const rs = await ch.client.query({
      query: `SELECT id, n, note FROM ${name} ORDER BY id, n`,
      format: 'JSONEachRow',
    });
    return rs.json();
  }

  it('stores TabSeparated rows given as a Buffer or a string, escapes and UTF-8 intact', async () => {
    const name = await table();
    const columns = ['id', 'n', 'note'];
    await insertText(ch.client, {
      table: name,
      columns,
      format: 'TabSeparated',
      body: Buffer.from('a\t1\ttab\\there\nb\t2\tcafé ☕\n'),
    });
    await insertText(ch.client, { table: name, columns, format: 'TabSeparated', body: 'c\t3\tline\\nbreak\n' });
    expect(await rows(name)).to.deep.equal([
      { id: 'a', n: 1, note: 'tab\there' },
      { id: 'b', n: 2, note: 'café ☕' },
      { id: 'c', n: 3, note: 'line\nbreak' },
    ]);
  });

  it('stores a retried batch once under its token, and the next insert without a token as new rows', async () => {
    const name = await table();
    const batch = { table: name, columns: ['id', 'n', 'note'], format: 'TabSeparated' as const };
    await insertText(ch.client, { ...batch, body: 'a\t1\t\n', dedupToken: 'batch-1' });
    await insertText(ch.client, { ...batch, body: 'a\t1\t\n', dedupToken: 'batch-1' });
    // The same rows again without a token: a different insert, stored (the token did not stay set).
    await insertText(ch.client, { ...batch, body: 'a\t1\t\n' });
    await insertText(ch.client, { ...batch, body: 'b\t2\t\n', dedupToken: 'batch-2' });
    expect((await rows(name)).map((r) => r.id)).to.deep.equal(['a', 'a', 'b']);
  });

  it('treats an empty body as nothing to insert', async () => {
    const name = await table();
    await insertText(ch.client, { table: name, format: 'TabSeparated', body: Buffer.alloc(0) });
    await insertText(ch.client, { table: name, format: 'TabSeparated', body: '\n' });
    expect(await rows(name)).to.deep.equal([]);
  });

  it('refuses rows that do not fit the table, storing none of them', async () => {
    const name = await table();
    let error: unknown;
    await insertText(ch.client, {
      table: name,
      columns: ['id', 'n', 'note'],
      format: 'TabSeparated',
      body: 'a\t1\tok\nb\tnot-a-number\tbad\n',
    }).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    expect(await rows(name)).to.deep.equal([]);
  });
});
