// The journal of a redirect process of several (REDIRECT_PROCESSES; server/redirect/scan-ipc.ts)
// against the real chDB: rows are on file as soon as they are pushed, under the token their batch is
// sent with; the file goes once the batch is in; a journal left by a process that is gone is
// replayed at start with that token, so a batch that was already in is not stored twice, and a row
// cut short by the kill (never answered) is left out.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { ScanBuffer } from '../../server/redirect/scan-buffer.js';
import { FileJournal, insertForWorker, JournalGroup } from '../../server/redirect/scan-ipc.js';
import {
  GS1_RESOLUTION_SCHEMA,
  ORPHAN_SCAN_SCHEMA,
  SCAN_ACTION_SCHEMA,
  SCAN_EVENT_SCHEMA,
  SCAN_GS1_SCHEMA,
} from '../../server/analytics/scan-event.js';
import { migrateClickHouse } from '../../server/stores/migrate.js';
import { insertText, type ClickHouseHandle } from '../../server/stores/clickhouse.js';
import { dropClickHouseDatabase, scratchClickHouse } from '../helpers/stores.js';

interface Row {
  id: string;
  n: number;
}
const COLUMNS = ['id', 'n'] as const;
const log = pino({ level: 'silent' });
/** The contents of a journal directory's files, read at once (an answer's view of what is on file). */
const onFileNow = (dir: string) => readdirSync(dir).map((f) => readFileSync(path.join(dir, f), 'utf8'));
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

  it("writes a group's rows of every table pushed in one turn at the end of the turn, before the answers waiting on the group", async () => {
    const [t1, t2] = [await table(), await table()];
    const group = new JournalGroup(log);
    const [b1, b2] = [
      buffer(t1, new FileJournal(t1.dir, t1.prefix, log, group)),
      buffer(t2, new FileJournal(t2.dir, t2.prefix, log, group)),
    ];
    b1.start();
    b2.start();
    await Promise.all([b1.settled(), b2.settled()]);
    // Rows of two journals, twice in one turn: nothing written yet, nothing answered.
    const seen: string[][][] = [];
    b1.push({ id: 'scan1', n: 1 });
    b2.push({ id: 'gs1a', n: 1 });
    group.after(() => seen.push([onFileNow(t1.dir), onFileNow(t2.dir)]));
    b1.push({ id: 'scan2', n: 2 });
    b2.push({ id: 'gs1b', n: 2 });
    group.after(() => seen.push([onFileNow(t1.dir), onFileNow(t2.dir)]));
    expect(onFileNow(t1.dir)).to.deep.equal([]);
    expect(onFileNow(t2.dir)).to.deep.equal([]);
    expect(seen).to.deep.equal([]);
    await new Promise((r) => setImmediate(r));
    // Each answer ran with both tables' rows of the turn on file, one file (one batch) per table.
    const both = [['scan1\t1\nscan2\t2\n'], ['gs1a\t1\ngs1b\t2\n']];
    expect(seen).to.deep.equal([both, both]);
    // Sealing one table's batch (its buffer's flush) writes what the other has pending too, first.
    b2.push({ id: 'gs1c', n: 3 });
    group.after(() => seen.push([[], onFileNow(t2.dir)]));
    await b1.flush();
    expect(seen[2]).to.deep.equal([[], ['gs1a\t1\ngs1b\t2\ngs1c\t3\n']]);
    expect(await ids(t1)).to.deep.equal(['scan1', 'scan2']);
    await b2.flush();
    expect(await ids(t2)).to.deep.equal(['gs1a', 'gs1b', 'gs1c']);
    expect(await fs.readdir(t1.dir)).to.deep.equal([]);
    expect(await fs.readdir(t2.dir)).to.deep.equal([]);
    await Promise.all([b1.close(), b2.close()]);
  });

  it("inserts a redirect process's batch of every table the redirect writes, with the batch's token (the owner's side)", async () => {
    const migrated = `${db}_owner`;
    await migrateClickHouse({ ...ch, database: migrated }, 30, log);
    try {
      // [table, the row's columns, rows in the table after it]: scan_events rows as the redirect writes
      // them (with the GS1 dimensions) and as a version before clickhouse/0026 wrote them, and the
      // gs1_resolutions rows such a version wrote beside them (replayed from its journals).
      const tables: [string, Record<string, string>, number][] = [
        ['scan_events', { ...SCAN_EVENT_SCHEMA, ...SCAN_GS1_SCHEMA }, 1],
        ['scan_events', SCAN_EVENT_SCHEMA, 2],
        ['orphan_scans', ORPHAN_SCAN_SCHEMA, 1],
        ['scan_actions', SCAN_ACTION_SCHEMA, 1],
        ['gs1_resolutions', GS1_RESOLUTION_SCHEMA, 1],
      ];
      let id = 0;
      for (const [name, schema, stored] of tables) {
        const count = async () =>
          Number(
            (
              await (
                await ch.client.query({ query: `SELECT count() AS c FROM ${migrated}.${name}`, format: 'JSONEachRow' })
              ).json<{ c: string }>()
            )[0].c,
          );
        // One row in the columns' order (the order the redirect writes), a value of each column's type.
        const row = Object.values(schema).map((type) =>
          type.startsWith('DateTime') ? '2026-11-27 10:00:00.000' : /Int/.test(type) ? '1' : 'x',
        );
        const batch = { token: ulid(), tsv: row.join('\t') + '\n', rows: 1 };
        // Sent twice: as text (a journal replayed by a redirect process) and as the bytes a sealed batch is; one row stored.
        for (const tsv of [batch.tsv, Buffer.from(batch.tsv)]) {
          const ack = await insertForWorker(
            ch.client,
            migrated,
            { type: 'scan-batch', id: ++id, table: name, batch: { ...batch, tsv } },
            log,
          );
          expect(ack, name).to.deep.equal({ type: 'scan-ack', id, ok: true });
        }
        expect(await count(), name).to.equal(stored);
      }
      // The row of each form went into its own columns: the GS1 dimensions of the older one are ''.
      const gs1 = await (
        await ch.client.query({
          query: `SELECT gtin, link_type_served, matched_rule FROM ${migrated}.scan_events ORDER BY gtin`,
          format: 'JSONEachRow',
        })
      ).json();
      expect(gs1).to.deep.equal([
        { gtin: '', link_type_served: '', matched_rule: 1 },
        { gtin: 'x', link_type_served: 'x', matched_rule: 1 },
      ]);
      const refused = await insertForWorker(
        ch.client,
        migrated,
        { type: 'scan-batch', id: 99, table: 'qr_codes', batch: { token: ulid(), tsv: '', rows: 0 } },
        log,
      );
      expect(refused).to.deep.equal({ type: 'scan-ack', id: 99, ok: false, error: 'not a scan batch' });
      const notRows = await insertForWorker(
        ch.client,
        migrated,
        { type: 'scan-batch', id: 100, table: 'scan_events', batch: { token: ulid(), tsv: 7, rows: 1 } },
        log,
      );
      expect(notRows).to.deep.equal({ type: 'scan-ack', id: 100, ok: false, error: 'not a scan batch' });
    } finally {
      await dropClickHouseDatabase(ch, migrated);
    }
  });
});
