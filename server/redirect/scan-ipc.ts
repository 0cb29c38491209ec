// Scans of redirect processes that do not own the store (REDIRECT_PROCESSES > 1 on embedded chDB,
// server/redirect/cluster.ts): the journal each row is written to before it is answered, the IPC
// channel that carries a sealed batch to the owner, and the owner's side that inserts it.
//
// Exactly once, through the scan buffer's own mechanism: a batch keeps the token it was journaled
// under through the IPC round trip, retries, the spill file and any replay; the owner inserts it with
// that token and acknowledges; the journal is removed only after the acknowledgement (or once the
// batch is in a spill file). A process killed outright leaves its journals, which the process that
// replaces it replays at start like any spill file of a process that is gone.
import fs from 'node:fs';
import path from 'node:path';
import { ulid } from 'ulid';
import {
  GS1_RESOLUTION_COLUMNS,
  ORPHAN_SCAN_COLUMNS,
  REDIRECT_SCAN_COLUMNS,
  SCAN_ACTION_COLUMNS,
  SCAN_EVENT_COLUMNS,
} from '../analytics/scan-event.js';
import type { Logger } from '../logger.js';
import { insertText, type ClickHouseClient } from '../stores/clickhouse.js';
import { batchColumns, type Batch, type BatchJournal } from './scan-buffer.js';
import { clickHouseCode } from '../analytics/scan-spill.js';

/**
 * The tables a redirect process writes or replays, by name, with their rows' columns and the forms
 * an earlier version wrote (scan-buffer.ts, batchColumns): the owner inserts into nothing else.
 * gs1_resolutions is only replayed (journals of a version before clickhouse/0026).
 */
export const REDIRECT_TABLES: Record<string, { columns: readonly string[]; former?: readonly (readonly string[])[] }> =
  {
    scan_events: { columns: REDIRECT_SCAN_COLUMNS, former: [SCAN_EVENT_COLUMNS] },
    orphan_scans: { columns: ORPHAN_SCAN_COLUMNS },
    scan_actions: { columns: SCAN_ACTION_COLUMNS },
    gs1_resolutions: { columns: GS1_RESOLUTION_COLUMNS },
  };

/** A sealed batch on its way to the owner. */
interface BatchMessage {
  type: 'scan-batch';
  id: number;
  table: string;
  batch: Batch;
}

/** The owner's answer: the batch is in ClickHouse (ok), or the insert failed (the sender retries or spills). */
export interface AckMessage {
  type: 'scan-ack';
  id: number;
  ok: boolean;
  error?: string;
  /** ClickHouse's error code, so the sender can tell rows it cannot parse (quarantined) from an outage. */
  code?: number | null;
}

/**
 * Runs answers at the end of the turn, once the rows recorded in it are on file: the handler's answers
 * to scans, and those that record none (404 and 410 pages, a domain's root and not-found redirects),
 * which cost less CPU leaving with the others.
 */
export interface AnswerGate {
  after(answer: () => void): void;
}

/**
 * The journals whose rows are written together once per turn of the event loop, and the answers
 * that wait for them (the handler answers through it). A write per request cost ≈ 7 µs here, a sixth
 * of a redirect's CPU, so the rows pushed in one turn are written at the end of the turn
 * (setImmediate), one write per journal, and only then do the answers of those requests leave: none
 * is answered before every row it recorded is on file.
 * (Corking the sockets instead would not hold them: `res.end()` uncorks its socket fully.)
 */
export class JournalGroup implements AnswerGate {
  private readonly journals: FileJournal[] = [];
  private waiting: (() => void)[] = [];
  private scheduled = false;

  constructor(private readonly log: Logger) {}

  join(journal: FileJournal): void {
    this.journals.push(journal);
  }

  after(answer: () => void): void {
    this.waiting.push(answer);
    this.schedule();
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.writePending();
    });
  }

  /** Writes every journal's rows pushed so far, then lets the answers that waited for them go. */
  writePending(): void {
    for (const journal of this.journals) journal.writePending();
    const waiting = this.waiting;
    this.waiting = [];
    for (const answer of waiting) {
      try {
        answer();
      } catch (err) {
        this.log.error({ err }, 'a redirect answer failed');
      }
    }
  }
}

/**
 * One file per batch, `<table>-<pid>-<token>.tsv` under the spill directory, written with
 * synchronous writes (a kill cannot undo a write the kernel has; only a machine crash can), so a row
 * is on file before the redirect's answer leaves: in a group (the scans' journal), the rows of a
 * turn together before its answers; otherwise (orphan rows, sampled, and
 * landing-page actions) each row as it comes.
 */
export class FileJournal implements BatchJournal {
  private fd: number | null = null;
  private token = '';
  private failed = false;
  private pending = '';
  private readonly prefix: string;

  constructor(
    private readonly dir: string,
    table: string,
    private readonly log: Logger,
    private readonly group: JournalGroup | null = null,
  ) {
    this.prefix = `${table}-${process.pid}-`;
    fs.mkdirSync(dir, { recursive: true });
    group?.join(this);
  }

  private file(token: string): string {
    return path.join(this.dir, `${this.prefix}${token}.tsv`);
  }

  append(line: string): void {
    if (this.group) {
      this.pending += line;
      this.group.schedule();
    } else this.write(line);
  }

  /** Writes the rows pushed since the last write (the group calls it before it answers). */
  writePending(): void {
    if (!this.pending) return;
    const rows = this.pending;
    this.pending = '';
    this.write(rows);
  }

  private write(line: string): void {
    try {
      if (this.fd === null) {
        this.token = ulid();
        this.fd = fs.openSync(this.file(this.token), 'a');
      }
      fs.writeSync(this.fd, line);
    } catch (err) {
      // The disk failing: the row is still in the buffer and goes to the owner with its batch; only
      // a kill before then would lose it. Said once per batch.
      if (!this.failed) this.log.error({ err, dir: this.dir }, 'cannot write the scan journal');
      this.failed = true;
    }
  }

  seal(): string {
    // The group's answers may wait for these rows, and for other journals' rows of the same turn.
    if (this.group) this.group.writePending();
    this.failed = false;
    if (this.fd === null) return this.token || ulid();
    const fd = this.fd;
    this.fd = null;
    const token = this.token;
    this.token = '';
    try {
      fs.closeSync(fd);
    } catch {
      // Closing never loses what was written.
    }
    return token;
  }

  done(token: string): void {
    try {
      fs.rmSync(this.file(token), { force: true });
    } catch (err) {
      // Left behind, it is replayed later with the same token: a no-op in ClickHouse.
      this.log.warn({ err, token }, 'cannot remove a scan journal');
    }
  }
}

/** The channel to the owner (a cluster worker's process.send), as much of it as is used. */
export interface OwnerChannel {
  send(message: BatchMessage): boolean;
  on(event: 'message', fn: (message: unknown) => void): unknown;
  on(event: 'disconnect', fn: () => void): unknown;
  connected: boolean;
}

/** The worker's side: `insert` for a ScanBuffer, resolved when the owner acknowledges the batch. */
export class OwnerInserts {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly channel: OwnerChannel) {
    channel.on('message', (m) => {
      const ack = m as Partial<AckMessage>;
      if (ack?.type !== 'scan-ack' || typeof ack.id !== 'number') return;
      const w = this.waiting.get(ack.id);
      if (!w) return;
      this.waiting.delete(ack.id);
      if (ack.ok) w.resolve();
      else {
        const err = new Error(`the owner could not insert the batch: ${ack.error ?? 'unknown error'}`);
        w.reject(Object.assign(err, { clickhouseCode: typeof ack.code === 'number' ? ack.code : undefined }));
      }
    });
    channel.on('disconnect', () => {
      for (const w of this.waiting.values()) w.reject(new Error('the owner process is gone'));
      this.waiting.clear();
    });
  }

  /** An insert function for the buffer of `table` (e.g. `scan_events`). */
  forTable(table: string): (batch: Batch) => Promise<void> {
    return (batch) =>
      new Promise<void>((resolve, reject) => {
        if (!this.channel.connected) return reject(new Error('the owner process is gone'));
        const id = this.next++;
        this.waiting.set(id, { resolve, reject });
        // The channel serializes with V8's serializer (cluster.ts): a batch's bytes go as they are,
        // copied once, where JSON made them a string, escaped it and parsed it again on both sides.
        this.channel.send({
          type: 'scan-batch',
          id,
          table,
          batch: { token: batch.token, tsv: batch.tsv, rows: batch.rows },
        });
      });
  }
}

/**
 * The owner's side: inserts a batch a redirect process sent, with the batch's own token, and
 * answers. It neither buffers nor retries: the sender keeps the batch (journal, retries, spill)
 * until it hears ok.
 */
export async function insertForWorker(
  client: ClickHouseClient,
  database: string,
  message: unknown,
  log: Logger,
): Promise<AckMessage | null> {
  const m = message as Partial<BatchMessage>;
  if (m?.type !== 'scan-batch' || typeof m.id !== 'number') return null;
  const table =
    typeof m.table === 'string' && Object.hasOwn(REDIRECT_TABLES, m.table) ? REDIRECT_TABLES[m.table] : null;
  const batch = m.batch;
  if (!table || typeof batch?.token !== 'string' || !(typeof batch.tsv === 'string' || Buffer.isBuffer(batch.tsv))) {
    return { type: 'scan-ack', id: m.id, ok: false, error: 'not a scan batch' };
  }
  try {
    await insertText(client, {
      table: `${database}.${m.table}`,
      columns: batchColumns(batch.tsv, table.columns, table.former),
      format: 'TabSeparated',
      body: batch.tsv,
      dedupToken: batch.token,
    });
    return { type: 'scan-ack', id: m.id, ok: true };
  } catch (err) {
    log.warn({ err, table: m.table }, 'inserting a redirect process’s scan batch failed');
    return { type: 'scan-ack', id: m.id, ok: false, error: (err as Error).message, code: clickHouseCode(err) };
  }
}
