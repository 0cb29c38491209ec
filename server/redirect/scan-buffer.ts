// The scan ingest: a size-and-time batch buffer in front of ClickHouse. push() is synchronous and
// never waits for ClickHouse; batches leave at least every flushMs or every maxRows rows.
//
// Exactly once: every batch gets a ULID as its insert_deduplication_token when it is formed, and
// keeps it through retries, the spill file and any replay, so a batch that reached ClickHouse once
// is ignored when it arrives again (the table's deduplication window, clickhouse/0001).
//
// When ClickHouse fails, a batch is retried with backoff and then appended to a spill file under
// DATA_DIR/spill (`<table>-<pid>-<ulid>.ndjson`, one `{token, tsv, rows}` line per batch). Spill files
// are replayed when an insert succeeds again and at start (files of processes that are gone);
// a file is deleted once every batch in it is in. close() drains: it flushes what is buffered and
// spills what cannot be sent.
//
// A redirect process that does not own the store (REDIRECT_PROCESSES, server/redirect/cluster.ts)
// passes `insert` (the batch goes to the owner over IPC) and `journal`: each row is written to a
// journal file named by its batch's token before the answer leaves, so a process killed outright
// leaves its rows as `<table>-<pid>-<token>.tsv`, replayed like a spill file with that token.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import { insertText, type ClickHouseClient } from '../stores/clickhouse.js';
import type { Logger } from '../logger.js';
import { batchText, isParseError, pidAlive, quarantineBatch, spillFilePid } from '../analytics/scan-spill.js';

export interface ScanBufferOptions<Row extends object> {
  client: ClickHouseClient;
  /** Fully qualified table, `db.table`. */
  table: string;
  /** The columns written, in the order of the TabSeparated body. */
  columns: readonly (keyof Row & string)[];
  /**
   * The columns of the rows an earlier version wrote, when they differ (its journals and spill files,
   * replayed here): a batch whose rows have as many fields as one of these forms is inserted with
   * its columns (batchColumns), the others take their defaults.
   */
  formerColumns?: readonly (readonly string[])[];
  /** A row as a TabSeparated line in that order (default: tsvLine over columns). */
  encode?: (row: Row) => string;
  spillDir: string;
  log: Logger;
  maxRows?: number;
  flushMs?: number;
  /** Attempts per batch before it is spilled (while ClickHouse is healthy). */
  attempts?: number;
  backoffMs?: number;
  /** Waits out a backoff (default: a timer); tests pass their own to see each delay and end it. */
  delay?: (ms: number) => Promise<void>;
  /** Where a batch goes (default: INSERT into `table` through insertText with the batch's token). */
  insert?: (batch: Batch) => Promise<void>;
  /** Rows written through before they are answered (server/redirect/scan-ipc.ts). */
  journal?: BatchJournal;
  /**
   * Whole-number columns (positions in `columns`) whose rows per value a sealed batch carries
   * (Batch.tallies), counted as the rows are pushed, so that the hooks counting a batch per code or
   * organization (scan-counts.ts batchCounts) read none of its text when it leaves.
   */
  tally?: readonly number[];
  /**
   * Called with each batch before it is sent or replayed (scan-counts.ts: redirects_count, once per
   * token); a failure counts as a failed insert (retried, spilled, replayed later). `own`: a batch
   * this buffer formed and is sending (not one read back from a journal or spill file).
   */
  count?: (batch: Batch, own: boolean) => Promise<void>;
  /**
   * Called with each batch once it is stored (sent, or replayed; the live stream's ledger,
   * scan-stream.ts). It is awaited, so batches are published in the order they were stored, and it
   * must not throw.
   */
  stored?: (batch: Batch) => Promise<void>;
  /**
   * Asked at each batch's first row: whether the batch keeps its row objects as pushed for the
   * `stored` hook (Batch.objects), so that the live stream's hub in this process takes them instead
   * of parsing the batch's text (server/analytics/live-handoff.ts). Only while it answers yes: kept
   * objects outlive the young generation (see `open` below).
   */
  keepRows?: () => boolean;
  /**
   * How often spill files and journals of processes that are gone are looked for and replayed
   * while the buffer runs (default 30 s; they are also replayed at start).
   */
  sweepMs?: number;
}

/** A write-ahead file per batch: rows appended as pushed, removed once the batch is in or spilled. */
export interface BatchJournal {
  append(line: string): void;
  /** Ends the open batch's file; returns its token (the name of the file). */
  seal(): string;
  done(token: string): void;
}

/** A batch as sent and as spilled: its deduplication token, its rows as TabSeparated, the row count. */
export interface Batch {
  token: string;
  /**
   * The rows as TabSeparated: the UTF-8 bytes as the buffer encoded them (a batch sealed here), or
   * text (a batch replayed from a file or received from another redirect process). A sealed batch
   * stays bytes on its way to ClickHouse: turning 10-20 MB of rows into a string and back held the
   * event loop for 25-35 ms each way per flush, which was most of the redirect's p99.
   */
  tsv: string | Buffer;
  rows: number;
  /** The row objects as pushed, when keepRows asked for them; never spilled or sent (the text is the batch). */
  objects?: readonly object[];
  /** Rows per value of the buffer's `tally` columns (by position), when it formed the batch. */
  tallies?: ReadonlyMap<number, ReadonlyMap<number, number>>;
}

// Stryker disable next-line Regex: it only decides whether replace() runs, and replace() with TSV_SPECIALS is right either way
const TSV_SPECIAL = /[\\\t\n\r\0]/;
const TSV_SPECIALS = /[\\\t\n\r\0]/g;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/** A string as a TabSeparated field: backslash, tab, newline, carriage return and NUL escaped. */
export function tsvText(s: string): string {
  // Stryker disable next-line ConditionalExpression: without a special character replace() returns s unchanged; the test only saves that work
  return TSV_SPECIAL.test(s) ? s.replace(TSV_SPECIALS, (c) => TSV_ESCAPES[c]) : s;
}

/** One row as a TabSeparated line: numbers as they are, strings with backslash escapes. */
export function tsvLine(row: object, columns: readonly string[]): string {
  const r = row as Record<string, unknown>;
  let out = '';
  for (let i = 0; i < columns.length; i++) {
    out += (i ? '\t' : '') + tsvText(String(r[columns[i]] ?? ''));
  }
  return out + '\n';
}

/**
 * The columns a batch's rows were written in: `columns`, or the form among `former` with as many
 * fields as its first row (every row of a batch was written by one version).
 */
export function batchColumns(
  tsv: string | Buffer,
  columns: readonly string[],
  former: readonly (readonly string[])[] = [],
): readonly string[] {
  if (!former.length) return columns;
  const nl = tsv.indexOf('\n');
  const end = nl < 0 ? tsv.length : nl;
  // The first line's tabs: a tab or a line break is never part of a UTF-8 sequence, so the bytes
  // read as latin1 have them where the text has them.
  const first = typeof tsv === 'string' ? tsv.slice(0, end) : tsv.toString('latin1', 0, end);
  let fields = 1;
  for (let i = 0; i < first.length; i++) if (first.charCodeAt(i) === 9) fields++;
  if (fields === columns.length) return columns;
  return former.find((f) => f.length === fields) ?? columns;
}

/** The largest encoding buffer made ahead of need (64 MiB); beyond it a batch's buffer doubles as it fills. */
const MAX_PRESIZE = 64 << 20;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class ScanBuffer<Row extends object> {
  // Rows are encoded as they are pushed (a microsecond or two each, spread over the requests)
  // rather than all at once when a batch leaves, which would hold the event loop for milliseconds,
  // into a buffer outside the JS heap: a second of rows kept as objects or strings survives the
  // young generation and makes the garbage collector copy and mark it. A sealed batch takes the
  // buffer as it is, and the next batch starts in the buffer of a batch already stored (`spare`):
  // a new buffer of 10-20 MB at every flush made V8 run a full collection several times as often
  // (it counts memory outside its heap towards the next one).
  private open: Buffer = Buffer.allocUnsafe(1 << 20);
  private spare: Buffer | null = null;
  /** The buffer each batch sealed here was encoded into, to take back once the batch is stored. */
  private readonly buffers = new WeakMap<Batch, Buffer>();
  private openBytes = 0;
  private openRows = 0;
  /** The open batch's row objects, when keepRows asked for them at its first row. */
  private openObjects: Row[] | null = null;
  /** The open batch's rows per value of each `tally` column. */
  private openTallies: Map<number, Map<number, number>> | null = null;
  private readonly tallied: readonly (readonly [position: number, name: string])[];
  private sealed: Batch[] = [];
  private sealedRows = 0;
  private readonly maxRows: number;
  private readonly flushMs: number;
  /** The flush timer's interval now: flushMs, or shorter while live streams are open (setFlushInterval). */
  private interval: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly prefix: string;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private healthy = true;
  private closed = false;
  /** Set when close() begins: a spill that cannot be written is then given up rather than retried. */
  private closing = false;
  private spillFile: string | null = null;
  private spillHandle: fs.FileHandle | null = null;
  private ownSpills = false;
  private replaying: Promise<void> | null = null;

  /** Counters for tests, the bench and logs. */
  readonly stats = {
    pushed: 0,
    inserted: 0,
    batches: 0,
    insertMs: 0,
    insertMsMax: 0,
    spilledBatches: 0,
    spilledRows: 0,
    replayedRows: 0,
    failures: 0,
    quarantinedBatches: 0,
    quarantinedRows: 0,
  };

  private readonly encode: (row: Row) => string;
  private readonly delay: (ms: number) => Promise<void>;

  constructor(private readonly opts: ScanBufferOptions<Row>) {
    this.encode = opts.encode ?? ((row) => tsvLine(row, opts.columns));
    this.delay = opts.delay ?? sleep;
    this.maxRows = opts.maxRows ?? 10_000;
    this.flushMs = opts.flushMs ?? 1000;
    this.interval = this.flushMs;
    this.attempts = opts.attempts ?? 4;
    this.backoffMs = opts.backoffMs ?? 100;
    this.prefix = opts.table.split('.').pop()!;
    this.tallied = (opts.tally ?? []).map((i) => [i, opts.columns[i]] as const);
  }

  /** Starts the flush timer and replays spill files left by processes that are gone. */
  start(): void {
    this.startTimer();
    this.sweep();
    this.sweeper = setInterval(() => {
      if (this.healthy) this.sweep();
    }, this.opts.sweepMs ?? 30_000);
    this.sweeper.unref();
  }

  private startTimer(): void {
    this.timer = setInterval(() => this.kick(), this.interval);
    this.timer.unref();
  }

  /**
   * Flushes every `ms` from now on when that is sooner than flushMs (null: every flushMs again); the
   * live stream asks for it while streams are open (scan-stream.ts).
   */
  setFlushInterval(ms: number | null): void {
    const next = ms === null ? this.flushMs : Math.min(ms, this.flushMs);
    if (next === this.interval) return;
    this.interval = next;
    if (!this.timer) return;
    clearInterval(this.timer);
    this.startTimer();
  }

  /**
   * Replays the spill files and journals of processes that are gone (at start, and every sweepMs:
   * a redirect process that died leaves its journals to whichever process looks next).
   */
  private sweep(): void {
    if (this.replaying || this.closed) return;
    this.replaying = this.replaySpills(true).finally(() => {
      this.replaying = null;
    });
  }

  /** How often the open batch leaves now (flushMs, or the live stream's shorter interval). */
  get flushInterval(): number {
    return this.interval;
  }

  get pending(): number {
    return this.openRows + this.sealedRows;
  }

  get isHealthy(): boolean {
    return this.healthy;
  }

  push(row: Row): void {
    const line = this.encode(row);
    const needed = this.openBytes + line.length * 3;
    if (needed > this.open.length) {
      // Growing copies the rows so far (11-14 ms at 8-16 MB): at least to what maxRows rows of the
      // size seen so far take, so a batch grows once rather than at every doubling. Pages of the
      // buffer that are never written are never touched.
      const forMaxRows = Math.ceil((needed / (this.openRows + 1)) * this.maxRows);
      const bigger = Buffer.allocUnsafe(Math.max(this.open.length * 2, needed, Math.min(forMaxRows, MAX_PRESIZE)));
      this.open.copy(bigger, 0, 0, this.openBytes);
      this.open = bigger;
    }
    this.opts.journal?.append(line);
    this.openBytes += this.open.write(line, this.openBytes);
    if (!this.openRows) {
      this.openObjects = this.opts.keepRows?.() ? [] : null;
      this.openTallies = this.tallied.length ? new Map(this.tallied.map(([i]) => [i, new Map()])) : null;
    }
    this.openObjects?.push(row);
    if (this.openTallies) this.tallyRow(row);
    this.stats.pushed++;
    if (++this.openRows >= this.maxRows) {
      this.seal();
      this.kick();
    }
  }

  /** Counts the row in the open batch's tallies (a value that is not a positive whole number is not counted, as countsOf). */
  private tallyRow(row: Row): void {
    for (const [i, name] of this.tallied) {
      const v = (row as Record<string, unknown>)[name];
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) continue;
      const counts = this.openTallies!.get(i)!;
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
  }

  /** Closes the batch being filled: it gets its token now, and keeps it through retries and spills. */
  private seal(): void {
    if (!this.openRows) return;
    const token = this.opts.journal ? this.opts.journal.seal() : ulid();
    // The batch takes the bytes as they are; the next batch a stored batch's buffer, or a new one,
    // as large as this one grew (growing copies the rows so far).
    const batch: Batch = { token, tsv: this.open.subarray(0, this.openBytes), rows: this.openRows };
    this.buffers.set(batch, this.open);
    this.open = this.spare && this.spare.length >= this.open.length ? this.spare : Buffer.allocUnsafe(this.open.length);
    this.spare = null;
    if (this.openObjects) batch.objects = this.openObjects;
    if (this.openTallies) batch.tallies = this.openTallies;
    this.sealed.push(batch);
    this.openObjects = null;
    this.openTallies = null;
    this.sealedRows += this.openRows;
    this.openBytes = 0;
    this.openRows = 0;
  }

  private takeSealed(): Batch {
    const batch = this.sealed.shift()!;
    this.sealedRows -= batch.rows;
    return batch;
  }

  /** Sends everything buffered now (and waits for batches already on their way). */
  async flush(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
  }

  /** Waits for a start-up or catch-up replay in progress. */
  async settled(): Promise<void> {
    await this.flush();
    while (this.replaying) await this.replaying;
  }

  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    if (!this.pending && !(this.ownSpills && this.healthy)) return;
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.again && !this.closed) {
        this.again = false;
        this.kick();
      }
    });
  }

  /**
   * Sends the rows buffered when it starts (in batches of at most maxRows). Rows that arrive while
   * an insert is running wait for the next tick or for maxRows: draining them at once would turn
   * one insert a second into a stream of small ones, and each insert has a fixed cost in ClickHouse
   * (a part per table, the materialized view, merges).
   */
  private async loop(): Promise<void> {
    this.seal();
    for (let due = this.sealed.length; due > 0; due--) await this.send(this.takeSealed());
    this.catchUp();
  }

  /** Replays our spill files in the background once inserts succeed again (even under steady load). */
  private catchUp(): void {
    if (this.ownSpills && this.healthy && !this.replaying && !this.closed) {
      this.replaying = this.replaySpills(false).finally(() => {
        this.replaying = null;
      });
    }
  }

  /**
   * One INSERT per batch, TabSeparated (cheaper to make than JSON, and cheaper for ClickHouse to
   * parse), through insertText: the token and async_insert = 0 ride in the statement (chDB keeps
   * session SETs for later queries), and the batch is already one insert a second, so ClickHouse's
   * own insert queue would only add latency.
   */
  private async insert(batch: Batch): Promise<void> {
    if (this.opts.insert) return this.opts.insert(batch);
    await insertText(this.opts.client, {
      table: this.opts.table,
      columns: batchColumns(batch.tsv, this.opts.columns, this.opts.formerColumns),
      format: 'TabSeparated',
      body: batch.tsv,
      dedupToken: batch.token,
    });
  }

  private async send(batch: Batch): Promise<void> {
    // While ClickHouse is known to be down, one attempt per batch: retrying each batch with backoff
    // would only hold rows in memory that the spill file keeps safer.
    const attempts = this.healthy && !this.closed ? this.attempts : 1;
    for (let i = 0; i < attempts; i++) {
      try {
        await this.opts.count?.(batch, true);
        const t0 = performance.now();
        await this.insert(batch);
        const ms = performance.now() - t0;
        this.stats.batches++;
        this.stats.insertMs += ms;
        if (ms > this.stats.insertMsMax) this.stats.insertMsMax = ms;
        this.stats.inserted += batch.rows;
        this.opts.journal?.done(batch.token);
        await this.opts.stored?.(batch);
        this.reuse(batch);
        if (!this.healthy) this.opts.log.info({ table: this.opts.table }, 'ClickHouse is back; scan inserts resumed');
        this.healthy = true;
        this.catchUp();
        return;
      } catch (err) {
        this.stats.failures++;
        // Rows ClickHouse cannot parse fail the same way every time: aside at once, not retried.
        if (isParseError(err) && (await this.quarantine(batch, '', err))) {
          this.opts.journal?.done(batch.token);
          return;
        }
        if (this.healthy) this.opts.log.warn({ err, table: this.opts.table, attempt: i + 1 }, 'scan insert failed');
        if (i + 1 < attempts) await this.delay(this.backoffMs * 2 ** i);
      }
    }
    this.healthy = false;
    await this.spill(batch);
  }

  /**
   * Keeps a stored batch's buffer for the next batch to be encoded into. Nothing reads a batch's
   * bytes once it is stored: the hooks have returned, and a spill or another process's channel takes
   * a copy as text.
   */
  private reuse(batch: Batch): void {
    const buffer = this.buffers.get(batch);
    if (buffer && !(this.spare && this.spare.length >= buffer.length)) this.spare = buffer;
  }

  /** Moves a batch ClickHouse cannot parse to the quarantine folder (spill-files.ts); false if it cannot be written. */
  private async quarantine(batch: Batch, from: string, err: unknown): Promise<boolean> {
    try {
      const file = await quarantineBatch(this.opts.spillDir, this.prefix, batch, from, (err as Error).message);
      this.stats.quarantinedBatches++;
      this.stats.quarantinedRows += batch.rows;
      this.opts.log.error(
        { err, table: this.opts.table, token: batch.token, rows: batch.rows, from: from || undefined, file },
        'scan batch quarantined: ClickHouse cannot parse it',
      );
      return true;
    } catch (qerr) {
      this.opts.log.error({ err: qerr, dir: this.opts.spillDir }, 'cannot write the scan quarantine');
      return false;
    }
  }

  private async spill(batch: Batch): Promise<void> {
    for (;;) {
      try {
        if (!this.spillHandle) {
          await fs.mkdir(this.opts.spillDir, { recursive: true });
          this.spillFile = path.join(this.opts.spillDir, `${this.prefix}-${process.pid}-${ulid()}.ndjson`);
          this.spillHandle = await fs.open(this.spillFile, 'a');
        }
        await this.spillHandle.write(
          JSON.stringify({ token: batch.token, tsv: batchText(batch), rows: batch.rows }) + '\n',
        );
        await this.spillHandle.datasync();
        this.ownSpills = true;
        this.stats.spilledBatches++;
        this.stats.spilledRows += batch.rows;
        this.opts.journal?.done(batch.token);
        return;
      } catch (err) {
        // The disk failing too: keep the rows in memory and try again shortly.
        this.opts.log.error({ err, dir: this.opts.spillDir, file: this.spillFile }, 'cannot write the scan spill file');
        await this.delay(this.backoffMs * 10);
        if (this.closing) {
          this.opts.log.error({ rows: batch.rows }, 'scans lost: neither ClickHouse nor the spill file is writable');
          return;
        }
      }
    }
  }

  /** Closes the active spill file so that it can be replayed; later spills start a new one. */
  private async rotateSpill(): Promise<void> {
    const handle = this.spillHandle;
    this.spillHandle = null;
    this.spillFile = null;
    await handle?.close();
  }

  /**
   * Replays spill files of this table: at start, those of processes that are gone (and our own
   * pid's, from an earlier life of a container); later, our own. Every batch goes in with its
   * original token, so a file replayed twice (a crash between insert and delete, or two processes
   * at once) still adds each batch once.
   */
  private async replaySpills(atStart: boolean): Promise<void> {
    if (!atStart) {
      this.ownSpills = false;
      await this.rotateSpill();
    }
    let files: string[];
    try {
      files = (await fs.readdir(this.opts.spillDir))
        .filter((f) => f.startsWith(`${this.prefix}-`) && (f.endsWith('.ndjson') || (atStart && f.endsWith('.tsv'))))
        .sort();
    } catch {
      return;
    }
    for (const f of files) {
      const pid = spillFilePid(f, this.prefix); // NaN for a batch re-queued from the quarantine
      if (atStart && pid !== process.pid && pidAlive(pid)) continue; // another live process owns it
      if (pid === process.pid && f.endsWith('.tsv')) continue; // our own journal, being written
      if (!atStart && pid !== process.pid) continue;
      const file = path.join(this.opts.spillDir, f);
      if (file === this.spillFile) continue;
      if (!(await this.replayFile(file))) {
        this.ownSpills = true; // try again on the next successful insert
        return;
      }
    }
  }

  private async replayFile(file: string): Promise<boolean> {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch {
      return true; // replayed and removed by someone else
    }
    let rows = 0;
    for (const line of file.endsWith('.tsv') ? [this.journalLine(file, text)] : text.split('\n')) {
      if (!line.trim()) continue;
      let batch: Batch;
      try {
        batch = this.readSpilled(JSON.parse(line));
      } catch {
        this.opts.log.error({ file }, 'skipping a torn line in a scan spill file');
        continue;
      }
      try {
        await this.opts.count?.(batch, false);
        await this.insert(batch);
        await this.opts.stored?.(batch);
        rows += batch.rows;
      } catch (err) {
        // A batch ClickHouse cannot parse does not hold up the batches after it.
        if (isParseError(err) && (await this.quarantine(batch, file, err))) continue;
        this.opts.log.warn({ err, file }, 'scan spill replay failed; will retry');
        this.healthy = false;
        return false;
      }
    }
    await fs.rm(file, { force: true });
    this.stats.replayedRows += rows;
    this.opts.log.info({ file, rows }, 'scan spill file replayed');
    return true;
  }

  /**
   * A journal as one spill line: the token from its name, the complete rows (a line cut short by a
   * kill was never answered, since the answer leaves after the row is written).
   */
  private journalLine(file: string, text: string): string {
    const tsv = text.slice(0, text.lastIndexOf('\n') + 1);
    const token = path.basename(file, '.tsv').split('-').pop();
    return tsv ? JSON.stringify({ token, tsv, rows: tsv.split('\n').length - 1 }) : '';
  }

  /** A spill line: `{token, tsv, rows}`, or `{token, rows: [objects]}` as written before TabSeparated. */
  private readSpilled(v: { token?: unknown; tsv?: unknown; rows?: unknown }): Batch {
    // Stryker disable next-line StringLiteral: the message is never read (replayFile logs every throw as a torn line)
    if (typeof v.token !== 'string') throw new Error('no token');
    if (typeof v.tsv === 'string' && typeof v.rows === 'number') return { token: v.token, tsv: v.tsv, rows: v.rows };
    // Stryker disable next-line ConditionalExpression,StringLiteral: rows.map throws on any other JSON value too, and replayFile treats every throw alike
    if (!Array.isArray(v.rows)) throw new Error('no rows');
    const rows = v.rows as object[];
    return { token: v.token, tsv: rows.map((r) => tsvLine(r, this.opts.columns)).join(''), rows: rows.length };
  }

  /**
   * Drains: sends what is buffered, spills what cannot be sent, closes the spill file. Rows that
   * neither ClickHouse nor the disk takes are logged as lost rather than holding the shutdown.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    this.timer = null;
    this.sweeper = null;
    while (this.replaying) await this.replaying;
    await this.flush();
    this.closed = true;
    this.seal();
    while (this.sealed.length) await this.send(this.takeSealed());
    // A successful insert during the flush may have started a catch-up replay: it finishes here,
    // before the caller closes the ClickHouse client under it.
    while (this.replaying) await this.replaying;
    if (this.ownSpills && this.healthy) await this.replaySpills(false);
    await this.rotateSpill();
  }
}
