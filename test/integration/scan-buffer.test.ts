// The scan ingest's batch buffer against the real chDB: batching by size and by flush, the encoding
// buffer growing, retries with the batch's token kept, spill files (torn lines, the format written
// before TabSeparated, files of live and of gone processes) and draining on close. ClickHouse
// failures are real ones: an insert into a table that does not exist yet, or a row it cannot parse.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { monotonicFactory, ulid } from 'ulid';
import { pino } from 'pino';
import { ScanBuffer, type Batch, type ScanBufferOptions } from '../../server/redirect/scan-buffer.js';
import { batchCounts, countsOf } from '../../server/redirect/scan-counts.js';
import {
  batchText,
  findQuarantined,
  listQuarantine,
  requeueQuarantined,
  spillBacklog,
} from '../../server/analytics/scan-spill.js';
import { insertText, type ClickHouseHandle } from '../../server/stores/clickhouse.js';
import { dropClickHouseDatabase, scratchClickHouse } from '../helpers/stores.js';
import { waitFor } from '../helpers/poll.js';

interface Row {
  id: string;
  n: number;
  text: string;
}
const COLUMNS = ['id', 'n', 'text'] as const;

describe('scan buffer (ClickHouse batches, retries and spill files)', function () {
  this.timeout(60_000);
  let ch: ClickHouseHandle;
  let db: string;
  let dataDir: string;
  let tables = 0;
  // What the buffer tells the operator, kept for the assertions (the log is part of the behaviour).
  interface Logged {
    level: number;
    msg: string;
    [key: string]: unknown;
  }
  let logged: Logged[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const said = (msg: string) => logged.filter((l) => l.msg === msg);
  const WARN = 40;
  const ERROR = 50;
  // Every backoff the buffer waits out, in ms. The tests' buffers do not wait: the delay is recorded
  // and ends at once (or when the test has changed the world, see `delay` below).
  let delays: number[] = [];
  const recordDelay = (ms: number) => {
    delays.push(ms);
    return Promise.resolve();
  };
  beforeEach(() => {
    logged = [];
    delays = [];
  });

  before(async () => ({ ch, db, dataDir } = await scratchClickHouse()));
  after(() => dropClickHouseDatabase(ch, db));

  /** A table name not created yet, and how to create it (deduplicating by token like scan_events). */
  function table() {
    const name = `scans_${++tables}`;
    return {
      name: `${db}.${name}`,
      prefix: name,
      create: () =>
        ch.client.command({
          query: `CREATE TABLE ${db}.${name} (id String, n UInt32, text String) ENGINE = MergeTree ORDER BY id
                  SETTINGS non_replicated_deduplication_window = 1000`,
        }),
    };
  }

  async function stored(t: { name: string }): Promise<Row[]> {
    const rs = await ch.client.query({ query: `SELECT id, n, text FROM ${t.name} ORDER BY id`, format: 'JSONEachRow' });
    return rs.json<Row>();
  }

  function buffer(t: { name: string }, over: Partial<ScanBufferOptions<Row>> = {}): ScanBuffer<Row> {
    return new ScanBuffer<Row>({
      client: ch.client,
      table: t.name,
      columns: COLUMNS,
      spillDir: path.join(dataDir, `spill-${tables}`),
      log,
      flushMs: 600_000, // flushes are the test's to make, unless a test says otherwise
      attempts: 2,
      backoffMs: 5,
      delay: recordDelay,
      ...over,
    });
  }

  const rows = (count: number, tag: string, text = 'x'): Row[] =>
    Array.from({ length: count }, (_, i) => ({ id: `${tag}-${String(i).padStart(4, '0')}`, n: i, text }));

  const spillFiles = async (dir: string) => (await fs.readdir(dir).catch(() => [] as string[])).sort();

  it('sends what was pushed as one insert on flush, every column as pushed, text escaped', async () => {
    const t = table();
    await t.create();
    const b = buffer(t);
    const pushed = [
      { id: 'a', n: 1, text: 'plain' },
      { id: 'b', n: 4_000_000_000, text: 'tab\there, newline\nthere, back\\slash, Ünïcödé ✓' },
    ];
    for (const r of pushed) b.push(r);
    expect(b.pending).to.equal(2);
    const t0 = performance.now();
    await b.flush();
    const flushMs = performance.now() - t0;
    expect(b.pending).to.equal(0);
    expect(await stored(t)).to.deep.equal(pushed);
    expect(b.stats).to.include({ pushed: 2, inserted: 2, batches: 1, failures: 0, spilledRows: 0 });
    // The insert's own time: some, and no more than the flush that waited for it.
    expect(b.stats.insertMs).to.be.above(0).and.at.most(flushMs);
    expect(b.stats.insertMsMax).to.equal(b.stats.insertMs); // one insert: the longest is the only one
    expect(logged).to.deep.equal([]);
    await b.close();
  });

  it('stores intact a field holding a tab, newline, carriage return, NUL or backslash, and a missing field as empty', async () => {
    const t = table();
    await t.create();
    const b = buffer(t);
    const specials = ['\t', '\n', '\r', '\0', '\\'];
    const pushed = specials.flatMap((c, i) => [
      { id: `s${i}-1-start`, n: i, text: `${c}at the start` },
      { id: `s${i}-2-mid`, n: i, text: `in the${c}${c}middle` },
      { id: `s${i}-3-end`, n: i, text: `at the end${c}` },
    ]);
    pushed.push({ id: 'z-all', n: 9, text: specials.join('|') });
    for (const r of pushed) b.push(r);
    b.push({ id: 'z-missing', n: 10 } as Row); // an optional field left out
    await b.flush();
    expect(await stored(t)).to.deep.equal([...pushed, { id: 'z-missing', n: 10, text: '' }]);
    expect(b.stats).to.include({ inserted: 17, failures: 0 });
    await b.close();
  });

  it('by default sends a batch at 10,000 rows, tries it four times 100, 200 and 400 ms apart, then spills it', async () => {
    const t = table(); // not created: every insert fails
    const dir = path.join(dataDir, `defaults-${tables}`);
    const b = new ScanBuffer<Row>({
      client: ch.client,
      table: t.name,
      columns: COLUMNS,
      spillDir: dir,
      log,
      delay: recordDelay,
    });
    for (const r of rows(9_999, 'def')) b.push(r);
    expect(b.pending).to.equal(9_999);
    b.push({ id: 'def-last', n: 1, text: 'x' }); // the 10,000th: the batch leaves without a flush
    await waitFor(
      async () => b.stats.spilledRows,
      (n) => n === 10_000,
    );
    expect(delays).to.deep.equal([100, 200, 400]); // no wait after the last attempt
    expect(b.stats).to.include({ failures: 4, spilledBatches: 1, inserted: 0 });
    expect(said('scan insert failed').map((l) => l.attempt)).to.deep.equal([1, 2, 3, 4]);
    await b.close();
    expect(await spillFiles(dir)).to.have.length(1);
  });

  it('sends rows that arrived while an insert was running once that insert is done, without a flush', async () => {
    const t = table();
    await t.create();
    const b = buffer(t, { maxRows: 5 });
    for (const r of rows(5, 'one')) b.push(r); // an insert starts
    for (const r of rows(5, 'two')) b.push(r); // a second batch, while the first is on its way
    b.push({ id: 'three-0000', n: 0, text: 'x' });
    expect(b.pending).to.equal(6); // the second batch waiting, and the row after it
    // The next run after the first insert takes both: the full batch, and the row as a batch of its own.
    await waitFor(
      async () => b.stats.inserted,
      (n) => n === 11,
    );
    expect(b.stats.batches).to.equal(3);
    expect(b.pending).to.equal(0);
    expect(await stored(t)).to.have.length(11);
    await b.close();
  });

  it('sends a batch as soon as maxRows rows are in, without a flush or the timer', async () => {
    const t = table();
    await t.create();
    const b = buffer(t, { maxRows: 5 }); // not started: no timer
    for (const r of rows(4, 'm')) b.push(r);
    expect(b.pending).to.equal(4);
    b.push({ id: 'm-0004', n: 4, text: 'x' });
    await waitFor(
      async () => b.stats.inserted,
      (v) => v === 5,
    );
    expect(b.stats.batches).to.equal(1);
    for (const r of rows(2, 'n')) b.push(r);
    expect(b.pending).to.equal(2); // below maxRows: they wait for the timer, a flush or close
    await b.close();
    expect(await stored(t)).to.have.length(7);
    expect(b.stats.batches).to.equal(2);
  });

  it('sends the buffered rows every flushMs', async () => {
    const t = table();
    await t.create();
    const b = buffer(t, { flushMs: 20 });
    b.start();
    await b.settled(); // no spill directory yet: nothing to replay, and no error
    for (const r of rows(3, 'timer')) b.push(r);
    await waitFor(
      async () => b.stats.inserted,
      (v) => v === 3,
    );
    expect(await stored(t)).to.have.length(3);
    await b.close();
  });

  it('grows its encoding buffer past 1 MiB without losing or cutting a row, multi-byte text included', async () => {
    const t = table();
    await t.create();
    const b = buffer(t);
    // 300,000 three-byte characters: 900 kB a row, 4.5 MB in all, beyond the first 1 MiB buffer.
    const big = rows(5, 'big', '✓'.repeat(300_000));
    big.push({ id: 'big-tail', n: 9, text: 'ü'.repeat(700_000) });
    for (const r of big) b.push(r);
    await b.flush();
    const got = await ch.client
      .query({
        query: `SELECT id, n, length(text) AS len, text = {a:String} OR text = {b:String} AS same FROM ${t.name} ORDER BY id`,
        query_params: { a: big[0].text, b: big[5].text },
        format: 'JSONEachRow',
      })
      .then((rs) => rs.json<{ id: string; n: number; len: string; same: number }>());
    expect(got.map((r) => [r.id, r.n, Number(r.len), r.same])).to.deep.equal([
      ['big-0000', 0, 900_000, 1],
      ['big-0001', 1, 900_000, 1],
      ['big-0002', 2, 900_000, 1],
      ['big-0003', 3, 900_000, 1],
      ['big-0004', 4, 900_000, 1],
      ['big-tail', 9, 1_400_000, 1],
    ]);
    await b.close();
  });

  it('hands each batch its own bytes (a later batch never writes over them before it is stored) and its tallies as countsOf reads its rows', async () => {
    const t = table();
    await t.create();
    const seen: Batch[] = [];
    const b = buffer(t, {
      maxRows: 4,
      tally: [COLUMNS.indexOf('n')],
      count: async (batch) => void seen.push(batch),
    });
    // n: repeated values, and 0 (no positive whole number: never counted); text with escapes and multi-byte characters.
    // Three batches pushed at once: the second and third are encoded while the first is on its way.
    const pushed = [3, 3, 0, 7, 9, 9, 9, 1, 5, 5, 5, 5].map((n, i) => ({
      id: `t-${String(i).padStart(2, '0')}`,
      n,
      text: i % 2 ? 'Ünï\tcødé ✓' : 'a\tb',
    }));
    for (const r of pushed) b.push(r);
    await b.flush();
    expect(seen).to.have.length(3);
    const line = (r: Row) => `${r.id}\t${r.n}\t${r.text.replace('\t', '\\t')}\n`;
    for (const [k, batch] of seen.entries()) {
      expect(Buffer.isBuffer(batch.tsv)).to.equal(true);
      // The first batch's bytes are still its own rows after the second batch was encoded.
      expect(batchText(batch)).to.equal(
        pushed
          .slice(k * 4, k * 4 + 4)
          .map(line)
          .join(''),
      );
      expect([...batch.tallies!.get(1)!]).to.deep.equal(countsOf(batchText(batch), 1));
      expect(batchCounts(batch, 1)).to.deep.equal(countsOf(batch.tsv, 1));
    }
    expect([...seen[0].tallies!.get(1)!]).to.deep.equal([
      [3, 2],
      [7, 1],
    ]);
    expect([...seen[1].tallies!.get(1)!]).to.deep.equal([
      [9, 3],
      [1, 1],
    ]);
    // Without a tally, a batch is counted from its rows.
    const plain = { ...seen[0], tallies: undefined };
    expect(batchCounts(plain, 1)).to.deep.equal([
      [3, 2],
      [7, 1],
    ]);
    expect([...seen[2].tallies!.get(1)!]).to.deep.equal([[5, 4]]);
    expect(await stored(t)).to.deep.equal(pushed);
    // A batch encoded into the buffer of one already stored is stored intact too.
    const later = pushed.map((r) => ({ ...r, id: `u-${r.id}` }));
    for (const r of later) b.push(r);
    await b.flush();
    expect(await stored(t)).to.deep.equal([...pushed, ...later]);
    await b.close();
  });

  it('stores a single row larger than twice the encoding buffer', async () => {
    const t = table();
    await t.create();
    const b = buffer(t);
    const huge = { id: 'huge', n: 1, text: '✓'.repeat(800_000) }; // 2.4 MB against the first 1 MiB
    b.push(huge);
    await b.flush();
    const [got] = await ch.client
      .query({
        query: `SELECT length(text) AS len, text = {t:String} AS same FROM ${t.name}`,
        query_params: { t: huge.text },
        format: 'JSONEachRow',
      })
      .then((rs) => rs.json<{ len: string; same: number }>());
    expect([Number(got.len), got.same]).to.deep.equal([2_400_000, 1]);
    await b.close();
  });

  it('retries a failed insert after the backoff, not before, and stores the batch once when ClickHouse answers again', async () => {
    const t = table(); // not created yet: inserts fail
    const failuresAtDelay: number[] = [];
    const b = buffer(t, {
      attempts: 5,
      backoffMs: 100,
      // ClickHouse comes back during the first backoff; the retry has not happened yet.
      delay: async (ms) => {
        delays.push(ms);
        failuresAtDelay.push(b.stats.failures);
        await t.create();
      },
    });
    for (const r of rows(4, 'retry')) b.push(r);
    await b.flush();
    expect(delays).to.deep.equal([100]);
    expect(failuresAtDelay).to.deep.equal([1]);
    expect(b.stats).to.include({ failures: 1, inserted: 4, batches: 1, spilledRows: 0 });
    const warned = said('scan insert failed');
    expect(warned.map((l) => [l.level, l.attempt, l.table])).to.deep.equal([[WARN, 1, t.name]]);
    expect(said('ClickHouse is back; scan inserts resumed')).to.deep.equal([]); // it never counted as down
    expect(b.isHealthy).to.equal(true);
    expect(await stored(t)).to.have.length(4);
    await b.close();
  });

  it('spills a batch after its attempts, tries later batches once while down, and replays the spill once on recovery', async () => {
    const t = table();
    const b = buffer(t, { attempts: 3 });
    for (const r of rows(3, 'first')) b.push(r);
    await b.flush();
    expect(b.stats).to.include({ failures: 3, spilledBatches: 1, spilledRows: 3, inserted: 0 });
    expect(delays).to.deep.equal([5, 10]); // backoffMs doubling between attempts
    expect(b.isHealthy).to.equal(false);
    const dir = path.join(dataDir, `spill-${tables}`);
    const [file] = await spillFiles(dir);
    expect(file).to.match(new RegExp(`^${t.prefix}-${process.pid}-[0-9A-Z]{26}\\.ndjson$`));
    const lines = (await fs.readFile(path.join(dir, file), 'utf8')).split('\n');
    expect(lines).to.have.length(2); // one batch, one line, and the final newline
    const spilled = JSON.parse(lines[0]);
    expect(spilled).to.have.keys('token', 'tsv', 'rows');
    expect(spilled.rows).to.equal(3);
    expect(spilled.tsv.split('\n')).to.have.length(4);

    for (const r of rows(2, 'second')) b.push(r);
    await b.flush(); // known to be down: one attempt, then the spill file
    expect(b.stats).to.include({ failures: 4, spilledBatches: 2, spilledRows: 5 });
    expect(delays).to.deep.equal([5, 10]);

    // A live process's spill file in the same directory: the catch-up replay leaves it alone.
    const liveFile = `${t.prefix}-1-${ulid()}.ndjson`;
    const liveLine = JSON.stringify({ token: ulid(), tsv: 'live-0000\t1\tx\n', rows: 1 });
    await fs.writeFile(path.join(dir, liveFile), liveLine + '\n');
    await t.create();
    for (const r of rows(1, 'third')) b.push(r);
    await b.flush();
    await b.settled();
    expect(b.isHealthy).to.equal(true);
    expect(b.stats).to.include({ inserted: 1, replayedRows: 5 });
    expect((await stored(t)).map((r) => r.id)).to.deep.equal([
      'first-0000',
      'first-0001',
      'first-0002',
      'second-0000',
      'second-0001',
      'third-0000',
    ]);
    expect(await spillFiles(dir)).to.deep.equal([liveFile]);
    // Warned for each attempt while healthy, not again for every batch while down; told when back.
    expect(said('scan insert failed').map((l) => l.attempt)).to.deep.equal([1, 2, 3]);
    expect(said('ClickHouse is back; scan inserts resumed').map((l) => [l.level, l.table])).to.deep.equal([
      [30, t.name],
    ]);
    expect(said('scan spill file replayed').map((l) => [l.file, l.rows])).to.deep.equal([[path.join(dir, file), 5]]);
    await b.close();
    expect(await stored(t)).to.have.length(6);
  });

  it('on close, spills what ClickHouse refuses and then replays it once ClickHouse answers, before returning', async () => {
    const t = table();
    const b = buffer(t);
    for (const r of rows(2, 'early')) b.push(r);
    await b.flush(); // spilled
    await t.create();
    for (const r of rows(2, 'late')) b.push(r);
    await b.close();
    expect((await stored(t)).map((r) => r.id)).to.deep.equal(['early-0000', 'early-0001', 'late-0000', 'late-0001']);
    expect(await spillFiles(path.join(dataDir, `spill-${tables}`))).to.deep.equal([]);
    expect(b.stats.replayedRows).to.equal(2);
  });

  it('keeps on close what it cannot send in a spill file, replayed by the next start', async () => {
    const t = table();
    const dir = path.join(dataDir, `spill-${tables}`);
    const first = buffer(t);
    for (const r of rows(3, 'kept')) first.push(r);
    await first.close();
    expect(first.stats.spilledRows).to.equal(3);
    expect(await spillFiles(dir)).to.have.length(1);
    expect(said('scan spill replay failed; will retry')).to.deep.equal([]); // not tried while down

    await t.create();
    const second = buffer(t, { spillDir: dir });
    second.start();
    await second.settled();
    expect(second.stats.replayedRows).to.equal(3);
    expect(await stored(t)).to.have.length(3);
    expect(await spillFiles(dir)).to.deep.equal([]);
    await second.close();
  });

  it('keeps the rows in memory while the spill file cannot be written, and writes it once the disk is back', async () => {
    const t = table();
    const blocked = path.join(dataDir, `blocked-${tables}`);
    await fs.writeFile(blocked, 'a file where the spill directory should be');
    const dir = path.join(blocked, 'spill');
    const spilledAtDelay: number[] = [];
    const b = buffer(t, {
      spillDir: dir,
      attempts: 1,
      backoffMs: 5,
      // The disk comes back during the second wait.
      delay: async (ms) => {
        delays.push(ms);
        spilledAtDelay.push(b.stats.spilledRows);
        if (delays.length === 2) await fs.rm(blocked);
      },
    });
    for (const r of rows(3, 'disk')) b.push(r);
    await b.flush();
    expect(delays).to.deep.equal([50, 50]); // ten times backoffMs between tries of the disk
    expect(spilledAtDelay).to.deep.equal([0, 0]); // the rows were in memory meanwhile
    expect(said('cannot write the scan spill file').map((l) => [l.level, l.dir])).to.deep.equal([
      [ERROR, dir],
      [ERROR, dir],
    ]);
    expect(b.stats).to.include({ spilledBatches: 1, spilledRows: 3 });
    const [file] = await spillFiles(dir);
    expect(JSON.parse((await fs.readFile(path.join(dir, file), 'utf8')).trim())).to.include({ rows: 3 });
    await b.close();
  });

  it('on close, tries a batch that arrives during the drain once and spills it, without waiting out retries', async () => {
    const t = table();
    await t.create();
    // The batch of the row `late` goes to a table that does not exist: a real ClickHouse failure that
    // is not about the rows (those are quarantined instead, below).
    const b = buffer(t, {
      attempts: 3,
      insert: (batch) =>
        insertText(ch.client, {
          table: batchText(batch).startsWith('late') ? `${db}.missing_${tables}` : t.name,
          columns: COLUMNS,
          format: 'TabSeparated',
          body: batch.tsv,
          dedupToken: batch.token,
        }),
    });
    for (const r of rows(2, 'good')) b.push(r);
    const closed = b.close(); // the flush of the two good rows is on its way
    b.push({ id: 'late', n: 1, text: 'x' });
    await closed;
    expect((await stored(t)).map((r) => r.id)).to.deep.equal(['good-0000', 'good-0001']);
    expect(b.stats).to.include({ inserted: 2, failures: 1, spilledBatches: 1, spilledRows: 1 });
    expect(delays).to.deep.equal([]);
    const [file] = await spillFiles(path.join(dataDir, `spill-${tables}`));
    const spilled = JSON.parse((await fs.readFile(path.join(dataDir, `spill-${tables}`, file), 'utf8')).trim());
    expect(spilled).to.include({ rows: 1, tsv: 'late\t1\tx\n' });
  });

  it('on close, gives up rows that neither ClickHouse nor the disk takes, and says how many are lost', async () => {
    const t = table(); // not created
    const blocked = path.join(dataDir, `blocked-${tables}`);
    await fs.writeFile(blocked, 'a file where the spill directory should be');
    const b = buffer(t, { spillDir: path.join(blocked, 'spill'), attempts: 2 });
    for (const r of rows(4, 'lost')) b.push(r);
    await b.close(); // returns rather than holding the shutdown
    expect(delays).to.deep.equal([5, 50]); // one backoff between attempts, one wait for the disk
    expect(b.stats).to.include({ failures: 2, spilledRows: 0 });
    expect(
      said('scans lost: neither ClickHouse nor the spill file is writable').map((l) => [l.level, l.rows]),
    ).to.deep.equal([[ERROR, 4]]);
    await fs.rm(blocked);
  });

  describe('spill files found at start', () => {
    const tsv = (rs: Row[]) => rs.map((r) => `${r.id}\t${r.n}\t${r.text}\n`).join('');
    const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

    // Files written in one millisecond must still sort in the order written (the replay's order):
    // plain ulid() is random within a millisecond.
    const fileUlid = monotonicFactory();
    async function writeSpill(dir: string, prefix: string, pid: number, lines: string[]): Promise<string> {
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${prefix}-${pid}-${fileUlid()}.ndjson`);
      await fs.writeFile(file, lines.join('\n') + '\n');
      return file;
    }

    it('replays the files of a process that is gone, skipping a torn line, and deletes them', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const a = rows(2, 'a');
      const c = rows(3, 'c');
      const file = await writeSpill(dir, t.prefix, deadPid(), [
        JSON.stringify({ token: ulid(), tsv: tsv(a), rows: 2 }),
        '{"token":"01J0000000000000000000000","tsv":"torn-0\\t1\\tx', // cut off by a crash mid-write
        JSON.stringify({ tsv: tsv(rows(1, 'no-token')), rows: 1 }),
        JSON.stringify({ token: ulid(), tsv: tsv(rows(1, 'no-count')) }),
        JSON.stringify({ token: ulid(), rows: 1 }),
        '',
        '   ',
        JSON.stringify({ token: ulid(), tsv: tsv(c), rows: 3 }),
      ]);
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect((await stored(t)).map((r) => r.id)).to.deep.equal([...a, ...c].map((r) => r.id));
      expect(b.stats.replayedRows).to.equal(5);
      expect(await spillFiles(dir)).to.deep.equal([]);
      // The torn line and the lines without a token, a row count or rows, not the blank lines.
      expect(said('skipping a torn line in a scan spill file').map((l) => [l.level, l.file])).to.deep.equal([
        [ERROR, file],
        [ERROR, file],
        [ERROR, file],
        [ERROR, file],
      ]);
      await b.close();
    });

    it('replays the format written before TabSeparated: {token, rows: [objects]}', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const old = [
        { id: 'old-1', n: 7, text: 'tab\there' },
        { id: 'old-2', n: 8, text: 'line\nbreak' },
      ];
      await writeSpill(dir, t.prefix, deadPid(), [JSON.stringify({ token: ulid(), rows: old })]);
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect(await stored(t)).to.deep.equal(old);
      expect(b.stats.replayedRows).to.equal(2);
      await b.close();
    });

    it("replays a file with this process's own pid (left by an earlier life of a container)", async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const file = await writeSpill(dir, t.prefix, process.pid, [
        JSON.stringify({ token: ulid(), tsv: tsv(rows(2, 'mine')), rows: 2 }),
      ]);
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect((await stored(t)).map((r) => r.id)).to.deep.equal(['mine-0000', 'mine-0001']);
      expect(said('scan spill file replayed').map((l) => [l.file, l.rows])).to.deep.equal([[file, 2]]);
      await b.close();
    });

    it('adds each batch once when two processes replay the same file at once', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      await writeSpill(dir, t.prefix, deadPid(), [
        JSON.stringify({ token: ulid(), tsv: tsv(rows(3, 'both')), rows: 3 }),
      ]);
      const one = buffer(t, { spillDir: dir });
      const two = buffer(t, { spillDir: dir });
      one.start();
      two.start();
      await Promise.all([one.settled(), two.settled()]);
      expect(await stored(t)).to.have.length(3);
      expect(await spillFiles(dir)).to.deep.equal([]);
      expect(one.isHealthy && two.isHealthy).to.equal(true);
      await Promise.all([one.close(), two.close()]);
    });

    it('replays every file of a process that is gone, oldest first', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const pid = deadPid();
      const files: string[] = [];
      for (const tag of ['f1', 'f2', 'f3']) {
        files.push(
          await writeSpill(dir, t.prefix, pid, [JSON.stringify({ token: ulid(), tsv: tsv(rows(1, tag)), rows: 1 })]),
        );
      }
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect(said('scan spill file replayed').map((l) => l.file)).to.deep.equal(files);
      expect(await stored(t)).to.have.length(3);
      await b.close();
    });

    it("replays this process's own file that failed at start once an insert succeeds", async () => {
      const t = table(); // not created yet
      const dir = path.join(dataDir, `spill-${tables}`);
      await writeSpill(dir, t.prefix, process.pid, [
        JSON.stringify({ token: ulid(), tsv: tsv(rows(2, 'own')), rows: 2 }),
      ]);
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect(await spillFiles(dir)).to.have.length(1);
      await t.create();
      b.push({ id: 'new-0000', n: 0, text: 'x' });
      await b.flush(); // one attempt (ClickHouse was down), which succeeds and starts the catch-up
      await b.settled();
      expect((await stored(t)).map((r) => r.id)).to.deep.equal(['new-0000', 'own-0000', 'own-0001']);
      expect(await spillFiles(dir)).to.deep.equal([]);
      await b.close();
    });

    it('adds each batch once when a file is replayed twice (same token)', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const line = JSON.stringify({ token: ulid(), tsv: tsv(rows(4, 'twice')), rows: 4 });
      for (let life = 0; life < 2; life++) {
        await writeSpill(dir, t.prefix, deadPid(), [line]);
        const b = buffer(t, { spillDir: dir });
        b.start();
        await b.settled();
        await b.close();
      }
      expect(await stored(t)).to.have.length(4);
    });

    it('leaves alone the files of a live process and of other tables', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const line = JSON.stringify({ token: ulid(), tsv: tsv(rows(1, 'other')), rows: 1 });
      const live = await writeSpill(dir, t.prefix, 1, [line]); // pid 1 is always running
      const otherTable = await writeSpill(dir, `${t.prefix}x`, deadPid(), [line]);
      // Another table whose name is as long as this one's: its file's pid sits where ours would.
      const sameLength = await writeSpill(dir, `${t.prefix.slice(0, -1)}z`, deadPid(), [line]);
      const notSpill = path.join(dir, `${t.prefix}-${deadPid()}-${ulid()}.ndjson.tmp`);
      await fs.writeFile(notSpill, line + '\n');
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      expect(await stored(t)).to.deep.equal([]);
      expect(await spillFiles(dir)).to.deep.equal(
        [path.basename(live), path.basename(otherTable), path.basename(sameLength), path.basename(notSpill)].sort(),
      );
      await b.close();
    });

    it('quarantines a batch ClickHouse cannot parse, replays every other batch of the files once, and stores the batch once re-queued after fixing', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const pid = deadPid();
      const poisoned = { token: ulid(), tsv: 'bad-0000\t1\tx\nbad-0001\tnot-a-number\tx\n', rows: 2 };
      const files = [
        await writeSpill(dir, t.prefix, pid, [JSON.stringify({ token: ulid(), tsv: tsv(rows(2, 'f1')), rows: 2 })]),
        await writeSpill(dir, t.prefix, pid, [
          JSON.stringify({ token: ulid(), tsv: tsv(rows(2, 'f2a')), rows: 2 }),
          JSON.stringify(poisoned),
          JSON.stringify({ token: ulid(), tsv: tsv(rows(3, 'f2b')), rows: 3 }),
        ]),
        await writeSpill(dir, t.prefix, pid, [JSON.stringify({ token: ulid(), tsv: tsv(rows(1, 'f3')), rows: 1 })]),
      ];
      const b = buffer(t, { spillDir: dir });
      b.start();
      await b.settled();
      const valid = [...rows(2, 'f1'), ...rows(2, 'f2a'), ...rows(3, 'f2b'), ...rows(1, 'f3')].map((r) => r.id).sort();
      expect((await stored(t)).map((r) => r.id)).to.deep.equal(valid);
      expect(b.isHealthy).to.equal(true);
      expect(b.stats).to.include({ replayedRows: 8, quarantinedBatches: 1, quarantinedRows: 2 });
      // The spill files are gone; the poisoned batch waits in the quarantine, logged with its file.
      expect(await spillFiles(dir)).to.deep.equal(['quarantine']);
      const logs = said('scan batch quarantined: ClickHouse cannot parse it');
      expect(logs.map((l) => [l.level, l.from, l.token, l.rows])).to.deep.equal([[ERROR, files[1], poisoned.token, 2]]);
      expect(spillBacklog(dir)).to.deep.equal({ files: 0, bytes: 0, quarantined: 1 });
      const [entry] = await listQuarantine(dir);
      expect(entry).to.include({ token: poisoned.token, table: t.prefix, rows: 2, from: files[1] });
      expect(entry.error).to.match(/Cannot parse input/);

      // A restart does not bring it back: it is out of the replay's way.
      const again = buffer(t, { spillDir: dir });
      again.start();
      await again.settled();
      await again.close();
      expect(await stored(t)).to.have.length(8);

      // The operator fixes the row in the quarantined file and re-queues it: stored once, with its token.
      const found = (await findQuarantined(dir, poisoned.token))!;
      const fixed = JSON.parse(await fs.readFile(found.file, 'utf8'));
      fixed.tsv = fixed.tsv.replace('not-a-number', '2');
      await fs.writeFile(found.file, JSON.stringify(fixed) + '\n');
      const requeued = (await requeueQuarantined(dir, poisoned.token))!;
      expect(requeued.rows).to.equal(2);
      expect(await listQuarantine(dir)).to.deep.equal([]);
      expect(spillBacklog(dir)).to.include({ files: 1, quarantined: 0 });
      await b.close();
      const later = buffer(t, { spillDir: dir, sweepMs: 20 });
      later.start();
      await waitFor(
        () => stored(t),
        (r) => r.length === 10,
      );
      await later.close();
      expect((await stored(t)).filter((r) => r.id.startsWith('bad-'))).to.deep.equal([
        { id: 'bad-0000', n: 1, text: 'x' },
        { id: 'bad-0001', n: 2, text: 'x' },
      ]);
      expect(await spillFiles(dir)).to.deep.equal(['quarantine']);
      expect(spillBacklog(dir)).to.deep.equal({ files: 0, bytes: 0, quarantined: 0 });
    });

    it('replays the files of a process that died while it runs, within its sweep interval, not only at start', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const b = buffer(t, { spillDir: dir, sweepMs: 50 });
      b.start();
      await b.settled();
      // A redirect process of several dies after start: its spill file and its journal appear now.
      const pid = deadPid();
      await writeSpill(dir, t.prefix, pid, [JSON.stringify({ token: ulid(), tsv: tsv(rows(2, 'late')), rows: 2 })]);
      await fs.writeFile(path.join(dir, `${t.prefix}-${pid}-${ulid()}.tsv`), tsv(rows(1, 'journal')));
      await waitFor(
        () => stored(t),
        (r) => r.length === 3,
      );
      await waitFor(
        () => spillFiles(dir),
        (f) => f.length === 0,
      );
      await b.close();
    });

    it('quarantines a batch ClickHouse cannot parse at its first insert, without retries, and sends the next batch', async () => {
      const t = table();
      await t.create();
      const dir = path.join(dataDir, `spill-${tables}`);
      const b = buffer(t, { spillDir: dir, encode: (r) => `${r.id}\t${r.text}\t${r.text}\n` });
      b.push({ id: 'p-0', n: 0, text: 'nope' });
      await b.flush();
      expect(delays).to.deep.equal([]);
      expect(b.isHealthy).to.equal(true);
      expect(b.stats).to.include({ quarantinedBatches: 1, spilledBatches: 0 });
      expect((await listQuarantine(dir)).map((q) => [q.rows, q.from])).to.deep.equal([[1, '']]);
      await b.close();
    });

    it('keeps a file whose replay fails, and replays it on a later start', async () => {
      const t = table(); // not created: the replay fails
      const dir = path.join(dataDir, `spill-${tables}`);
      const pid = deadPid();
      for (const tag of ['later', 'later2']) {
        await writeSpill(dir, t.prefix, pid, [JSON.stringify({ token: ulid(), tsv: tsv(rows(2, tag)), rows: 2 })]);
      }
      const first = buffer(t, { spillDir: dir });
      first.start();
      await first.settled();
      expect(first.isHealthy).to.equal(false);
      expect(first.stats.replayedRows).to.equal(0);
      // It stops at the first file that fails rather than trying each against a ClickHouse that is down.
      expect(said('scan spill replay failed; will retry').map((l) => [l.level, l.file])).to.deep.equal([
        [WARN, path.join(dir, (await spillFiles(dir))[0])],
      ]);
      await first.close();
      expect(await spillFiles(dir)).to.have.length(2);

      await t.create();
      const second = buffer(t, { spillDir: dir });
      second.start();
      await second.settled();
      expect(second.stats.replayedRows).to.equal(4);
      expect(await stored(t)).to.have.length(4);
      expect(await spillFiles(dir)).to.deep.equal([]);
      await second.close();
    });
  });
});
