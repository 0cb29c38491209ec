// The journal of a redirect process of several (REDIRECT_PROCESSES; server/redirect/scan-ipc.ts)
// against the real chDB: rows are on file as soon as they are pushed, under the token their batch is
// sent with; the file goes once the batch is in; a journal left by a process that is gone is
// replayed at start with that token, so a batch that was already in is not stored twice, and a row
// cut short by the kill (never answered) is left out.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { ScanBuffer } from '../../server/redirect/scan-buffer.js';
import { FileJournal } from '../../server/redirect/scan-ipc.js';
import { insertText, type ClickHouseHandle } from '../../server/stores/clickhouse.js';
import { dropClickHouseDatabase, scratchClickHouse } from '../helpers/stores.js';

interface Row {
  id: string;
  n: number;
}
const COLUMNS = ['id', 'n'] as const;
const log = pino({ level: 'silent' });
const tsv = (ids: string[]) => ids.map((id, i) => `${id}\t${i}\n`).join('');

describe('scan journal (redirect processes: rows on file before they are answered)', function () {
  this.timeout(60_000);
  let ch: ClickHouseHandle;
  let db: string;
  let dataDir: string;
  let tables = 0;

  before(async () => ({ ch, db, dataDir } = await scratchClickHouse()));
  after(() => dropClickHouseDatabase(ch, db));

  async function table() {
    const prefix = `journaled_${++tables}`;
    await ch.client.command({
      query: `CREATE TABLE ${db}.${prefix} (id String, n UInt32) ENGINE = MergeTree ORDER BY id
              SETTINGS non_replicated_deduplication_window = 1000`,
    });
    return { name: `${db}.${prefix}`, prefix, dir: path.join(dataDir, `journal-${tables}`) };
  }

  const buffer = (t: { name: string; dir: string }, journal?: FileJournal) =>
    new ScanBuffer<Row>({
      client: ch.client,
      table: t.name,
      columns: COLUMNS,
      spillDir: t.dir,
      log,
      flushMs: 600_000,
      journal,
    });

  const ids = async (t: { name: string }) =>
    (
      await (
        await ch.client.query({ query: `SELECT id FROM ${t.name} ORDER BY id`, format: 'JSONEachRow' })
      ).json<{
        id: string;
      }>()
    ).map((r) => r.id);

  it('has each row on file when push returns, under the token the batch is inserted with, and removes the file once it is in', async () => {
    const t = await table();
    const b = buffer(t, new FileJournal(t.dir, t.prefix, log));
    b.start();
    await b.settled();
    b.push({ id: 'a', n: 1 });
    b.push({ id: 'b', n: 2 });
    const [file] = await fs.readdir(t.dir);
    expect(file).to.match(new RegExp(`^${t.prefix}-${process.pid}-[0-9A-Z]{26}\\.tsv$`));
    expect(await fs.readFile(path.join(t.dir, file), 'utf8')).to.equal('a\t1\nb\t2\n');
    await b.flush();
    expect(await ids(t)).to.deep.equal(['a', 'b']);
    expect(await fs.readdir(t.dir)).to.deep.equal([]);
    // The batch went in under the journal's token: inserting the same rows with it adds nothing.
    const token = file.slice(0, -'.tsv'.length).split('-').pop()!;
    await insertText(ch.client, {
      table: t.name,
      columns: COLUMNS,
      format: 'TabSeparated',
      body: 'a\t1\nb\t2\n',
      dedupToken: token,
    });
    expect(await ids(t)).to.deep.equal(['a', 'b']);
    await b.close();
  });

  it('replays at start the journals of a process that is gone, with their tokens, leaving out a row cut short, but not its own journal', async () => {
    const t = await table();
    await fs.mkdir(t.dir, { recursive: true });
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    // One batch the owner had inserted before its sender died, one it never saw (ending in a cut row).
    const sent = ulid();
    await insertText(ch.client, {
      table: t.name,
      columns: COLUMNS,
      format: 'TabSeparated',
      body: tsv(['s1', 's2']),
      dedupToken: sent,
    });
    await fs.writeFile(path.join(t.dir, `${t.prefix}-${gone}-${sent}.tsv`), tsv(['s1', 's2']));
    await fs.writeFile(path.join(t.dir, `${t.prefix}-${gone}-${ulid()}.tsv`), tsv(['u1', 'u2']) + 'cut\t');
    // This process's own journal is a batch being filled: not replayed.
    const own = path.join(t.dir, `${t.prefix}-${process.pid}-${ulid()}.tsv`);
    await fs.writeFile(own, tsv(['own']));
    const b = buffer(t);
    b.start();
    await b.settled();
    expect(await ids(t)).to.deep.equal(['s1', 's2', 'u1', 'u2']);
    expect(b.stats.replayedRows).to.equal(4);
    expect(await fs.readdir(t.dir)).to.deep.equal([path.basename(own)]);
    await b.close();
  });
});
