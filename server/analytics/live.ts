// The live scan stream of an organization (GET /v1/scans/stream, docs/stream.md).
//
// Fan-out: the process that stores a scan batch in ClickHouse records it in the batch ledger and
// NOTIFYs (live-batches.ts, server/redirect/scan-stream.ts). Every API process runs one hub per
// application context: on a notification (and once a second while it has subscribers, in case one
// was missed) it reads the ledger's new batches in order, reads their rows of the organizations it
// has subscribers for from ClickHouse by batch token, and offers each row to those subscribers.
// So nothing runs on the redirect's path but one ledger row per batch, and any number of API
// processes on any number of machines serve streams from one Postgres and one ClickHouse.
//
// Event ids are `<ledger seq>-<scan_id>`; the ledger's order is commit order, so a Last-Event-ID
// names an exact place, and a resume replays the batches after it from ClickHouse before the live
// ones. Each subscriber holds at most LIVE_STREAM_BUFFER events for a client that reads slowly;
// past that it drops events, counts them, and once the client has read what was held it receives
// a `gap` event saying how many it missed and where the raw export has them.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { decodeTime } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import { brandNames, getBrand } from '../brands/service.js';
import { rateLimitHelpUrl } from '../config.js';
import type { AppContext } from '../context.js';
import { getDomain } from '../domains/service.js';
import { ApiError } from '../errors.js';
import { codeNames, getCodeRow } from '../qr-codes/service.js';
import {
  batchAt,
  batchesAfter,
  lastBatchSeq,
  RESUME_WINDOW_MS,
  SCAN_STREAM_CHANNEL,
  STALE_STREAM_SECONDS,
  type StoredBatch,
} from './live-batches.js';
import { receiveStoredBatches, rowsOfHandedBatch, type HandedBatch } from './live-handoff.js';
import { actionEventLabel } from './labels.js';
import { actionsOfBatches, scansOfBatches, type LiveAction, type LiveScan } from './queries.js';
import {
  encodeCursor,
  rawExportActionRow,
  rawExportRow,
  type RawExportActionRow,
  type RawExportRow,
} from './service.js';

export interface ScanStreamQuery {
  code_ulid?: string;
  brand_ulid?: string;
  domain_ulid?: string;
  /** Default false (ajv fills it in). */
  include_bots?: boolean;
}

/** One scan as the stream sends it: the raw export's fields, the code, its brand, bot. */
type LiveScanOut = RawExportRow & {
  code_ulid: string;
  slug: string;
  brand_ulid: string | null;
  brand_name: string | null;
  bot: boolean;
};

/** A landing-page action as the stream sends it (an `action` event): the raw export's action row, its label, the code, its brand. */
type LiveActionOut = RawExportActionRow & {
  label: string;
  code_ulid: string;
  slug: string;
  brand_ulid: string | null;
  brand_name: string | null;
};

/** The code's facts of an event. */
type About = Pick<LiveScanOut, 'code_ulid' | 'slug' | 'brand_ulid' | 'brand_name'>;

/**
 * The raw export's row with the code's facts added in place, in this order. Not spread into a new
 * object: a spread's copy is serialised about five times slower (every event, thousands a second).
 */
function withAbout<T extends object>(row: T, about: About): T & About {
  const o = row as T & About;
  o.code_ulid = about.code_ulid;
  o.slug = about.slug;
  o.brand_ulid = about.brand_ulid;
  o.brand_name = about.brand_name;
  return o;
}

function scanOut(r: LiveScan, about: About): LiveScanOut {
  const o = withAbout(rawExportRow(r), about) as LiveScanOut;
  o.bot = r.is_bot === 1;
  return o;
}

function actionOut(r: LiveAction, about: About): LiveActionOut {
  const row = rawExportActionRow(r) as LiveActionOut;
  row.label = actionEventLabel(row.action, row.target);
  return withAbout(row, about);
}

/** A row of the stream: a scan (scan_events) or an action on a landing page (scan_actions). */
type LiveRow = (LiveScan & { kind: 'scan' }) | (LiveAction & { kind: 'action' });

/** A row's own id, the second half of its event id: scan_id or action_id. */
const rowId = (r: LiveRow): string => (r.kind === 'scan' ? r.scan_id : r.action_id);

/** What a subscriber wants: ids resolved in its organization (domain 0: the shared fallback origins). */
interface Scope {
  codeId?: number;
  brandId?: number;
  domainId?: number;
  includeBots: boolean;
}

/** The ledger is read this many batches at a time. */
const BATCHES_PER_READ = 100;
/** Batches handed over in this process and not yet read from the ledger, at most (older ones are read back). */
const HANDED_MAX = 2 * BATCHES_PER_READ;
/** Frames are joined into pushes of about this many characters (one socket write each, not one per event). */
const CHUNK_CHARS = 64 * 1024;
/** A row of the ledger whose scans ClickHouse does not show yet (a replica behind) is read again. */
const PARTIAL_READ_RETRIES = 5;
/** A batch's rows were scanned from a minute before its token's time to an hour after (docs/stream.md). */
const BEFORE_TOKEN_MS = 60_000;
const AFTER_TOKEN_MS = 3_600_000;
/** The reconnection delay the stream asks of clients (the SSE `retry` field). */
const RETRY_MS = 3000;
const EVENT_ID = /^(\d{1,15})-([0-9A-Za-z]{1,64})$/;

/** An SSE event: one `data` line (JSON has no raw line breaks), an id when it can be resumed from. */
function sseEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The largest string below `id` that a raw export cursor may carry, so the cursor's rows start at `id`. */
function justBefore(id: string): string {
  const allowed = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
  const last = allowed.indexOf(id[id.length - 1]);
  return last > 0 ? id.slice(0, -1) + allowed[last - 1] : id.slice(0, -1) || '-';
}

function tokenTime(b: StoredBatch): number {
  try {
    return decodeTime(b.token);
  } catch {
    return b.stored_at.getTime();
  }
}

/** A live scan or action ready to send: its frame (built once for every subscriber) and what filters read. */
interface Offered {
  seq: number;
  row: LiveRow;
  codeUlid: string;
  frame: string;
}

/** Whether a subscriber with this scope wants the row. */
function inScope(scope: Scope, r: LiveRow): boolean {
  if (!scope.includeBots && r.is_bot) return false;
  if (scope.codeId !== undefined && r.code_id !== scope.codeId) return false;
  if (scope.brandId !== undefined && r.brand_id !== scope.brandId) return false;
  if (scope.domainId !== undefined && r.domain_id !== scope.domainId) return false;
  return true;
}

/** Frames joined and encoded to UTF-8 once, ready for any number of sockets, and how many events they hold. */
interface Chunk {
  bytes: Buffer;
  events: number;
}

/** Frames as chunks of about CHUNK_CHARS each (one socket write each, not one per event). */
function chunksOf(frames: string[]): Chunk[] {
  const chunks: Chunk[] = [];
  for (let i = 0; i < frames.length;) {
    let j = i;
    for (let chars = 0; j < frames.length && chars < CHUNK_CHARS; j++) chars += frames[j].length;
    chunks.push({ bytes: Buffer.from(j - i === 1 ? frames[i] : frames.slice(i, j).join('')), events: j - i });
    i = j;
  }
  return chunks;
}

/**
 * The events of one organization in one read of stored batches, in stream order. Subscribers with
 * the same filters (and the same start within the read) share one encoding of their events: the
 * frames are joined and turned into bytes once, and every such subscriber's socket is given the
 * same Buffers, so the cost of a read grows with the distinct filters, not with the subscribers.
 */
class Read {
  private readonly shared = new Map<string, Chunk[]>();

  constructor(readonly events: Offered[]) {}

  /** The chunks of the events from index `from` on that `scope` wants. */
  chunksFor(scope: Scope, from: number): Chunk[] {
    const key = `${scope.codeId}/${scope.brandId}/${scope.domainId}/${scope.includeBots}@${from}`;
    let chunks = this.shared.get(key);
    if (!chunks) {
      const frames: string[] = [];
      for (let i = from; i < this.events.length; i++) {
        if (inScope(scope, this.events[i].row)) frames.push(this.events[i].frame);
      }
      this.shared.set(key, (chunks = chunksOf(frames)));
    }
    return chunks;
  }
}

/**
 * One open stream: a bounded queue of chunks in front of a Readable that Koa pipes to the response.
 * Chunks are Buffers (shared between subscribers, see Read), which the Readable and the pipe hand to
 * the socket as they are: no conversion or copy per subscriber.
 */
class Subscriber {
  readonly id = crypto.randomUUID();
  readonly stream: Readable;
  /** Batches with a greater seq reach it live; those up to it come from the replay (if any). */
  after = 0;
  closed = false;
  private queue: Chunk[] = [];
  /** Events in the queue. */
  private queued = 0;
  /** Live events held while a replay runs (null: not replaying). */
  private held: Offered[] | null = null;
  private wants = false;
  private missed = 0;
  private missedSince = 0;
  private missedUntil = 0;
  /** Per code and kind (`<kind>:<code ulid>`): how many were missed, and the raw export cursor of the first. */
  private missedCodes = new Map<string, { codeUlid: string; kind: LiveRow['kind']; missed: number; cursor: string }>();
  private roomWaiters: (() => void)[] = [];

  constructor(
    readonly org: OrgRecord,
    readonly scope: Scope,
    private readonly limit: number,
    onClose: (s: Subscriber) => void,
  ) {
    this.stream = new Readable({
      highWaterMark: 16 * 1024,
      read: () => {
        this.wants = true;
        this.drain();
      },
      destroy: (err, cb) => {
        this.closed = true;
        this.wakeRoom();
        onClose(this);
        cb(err);
      },
    });
  }

  matches(o: Offered): boolean {
    return inScope(this.scope, o.row);
  }

  /**
   * The events of one read of stored batches. They are taken whole when the client is less than the
   * buffer behind, otherwise counted missed whole. So a burst larger than the buffer (one flush of a
   * busy redirect) never costs a client that keeps up, and a client that does not keep up is at most
   * the buffer plus one read behind (the read's chunks are shared between subscribers). Once events
   * are missed, later ones are too until the gap is sent, so the gap comes in order.
   */
  take(read: Read): void {
    if (this.closed) return;
    const events = read.events;
    let from = 0;
    while (from < events.length && events[from].seq <= this.after) from++;
    if (from === events.length) return;
    if (this.held) {
      for (let i = from; i < events.length; i++) {
        const o = events[i];
        if (!this.matches(o)) continue;
        if (this.held.length < this.limit) this.held.push(o);
        else this.miss(o);
      }
      return;
    }
    if (this.missed || this.queued >= this.limit) {
      for (let i = from; i < events.length; i++) if (this.matches(events[i])) this.miss(events[i]);
    } else {
      for (const c of read.chunksFor(this.scope, from)) this.enqueue(c);
    }
    this.drain();
  }

  private enqueue(c: Chunk): void {
    this.queue.push(c);
    this.queued += c.events;
  }

  private miss(o: Offered): void {
    const at = o.row.scanned_at_ms;
    if (!this.missed) this.missedSince = at;
    this.missed++;
    this.missedUntil = at;
    const key = `${o.row.kind}:${o.codeUlid}`;
    let entry = this.missedCodes.get(key);
    if (!entry) {
      entry = { codeUlid: o.codeUlid, kind: o.row.kind, missed: 0, cursor: encodeCursor(at, justBefore(rowId(o.row))) };
      this.missedCodes.set(key, entry);
    }
    entry.missed++;
  }

  /** Frames of the replay or of the stream itself (each counted as an event); the replay waits for room() between reads. */
  send(frames: string | string[]): void {
    if (this.closed) return;
    for (const c of chunksOf(typeof frames === 'string' ? [frames] : frames)) this.enqueue(c);
    this.drain();
  }

  startReplay(): void {
    this.held = [];
  }

  /** The replay is done: the live events held meanwhile follow it. */
  endReplay(): void {
    const held = this.held ?? [];
    this.held = null;
    this.send(held.filter((o) => o.seq > this.after).map((o) => o.frame));
  }

  /** Resolves when the queue is at most half full (or the stream closed). */
  room(): Promise<void> {
    if (this.closed || this.queued <= this.limit / 2) return Promise.resolve();
    return new Promise((r) => this.roomWaiters.push(r));
  }

  private wakeRoom(): void {
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const r of w) r();
  }

  heartbeat(now: Date): void {
    if (this.wants && !this.queue.length && !this.closed)
      this.wants = this.stream.push(`: heartbeat ${now.toISOString()}\n\n`);
  }

  /** Ends the stream after the events queued (at most the buffer's worth, pushed regardless of the reader). */
  end(): void {
    if (!this.closed) {
      for (const c of this.queue) this.stream.push(c.bytes);
      this.queue = [];
      this.queued = 0;
      this.stream.push(null);
    }
    this.closed = true;
    this.wakeRoom();
  }

  /** Pushes the queued chunks while the reader wants them, then the gap when events were missed. */
  private drain(): void {
    while (this.wants && this.queue.length) {
      const c = this.queue.shift()!;
      this.queued -= c.events;
      this.wants = this.stream.push(c.bytes);
    }
    if (this.wants && !this.queue.length && this.missed && !this.held) {
      this.wants = this.stream.push(sseEvent('gap', this.gap()));
      this.missed = 0;
      this.missedCodes = new Map();
    }
    if (this.queued <= this.limit / 2) this.wakeRoom();
  }

  private gap(): unknown {
    const include = this.scope.includeBots ? '&include_bots=true' : '';
    return {
      missed: this.missed,
      since: new Date(this.missedSince).toISOString(),
      until: new Date(this.missedUntil).toISOString(),
      codes: [...this.missedCodes.values()].map((c) => ({
        code_ulid: c.codeUlid,
        kind: c.kind === 'scan' ? 'scans' : 'actions',
        missed: c.missed,
        raw_export:
          `/v1/analytics/qr-codes/${c.codeUlid}/raw-export?range=7&cursor=${c.cursor}${include}` +
          (c.kind === 'action' ? '&kind=actions' : ''),
      })),
    };
  }
}

/** Code and brand facts of the events, cached for a minute. */
class Labels {
  private codes = new Map<number, { ulid: string; slug: string }>();
  private brands = new Map<number, { ulid: string; name: string }>();
  private at = 0;

  constructor(private readonly app: AppContext) {}

  async load(org: OrgRecord, scans: LiveRow[]): Promise<void> {
    const now = Date.now();
    if (now - this.at > 60_000) {
      this.codes.clear();
      this.brands.clear();
      this.at = now;
    }
    const codes = [...new Set(scans.map((s) => s.code_id))].filter((id) => !this.codes.has(id));
    for (const c of await codeNames(this.app.db, org, codes)) this.codes.set(c.id, { ulid: c.ulid, slug: c.slug });
    const brands = [...new Set(scans.map((s) => s.brand_id))].filter((id) => id > 0 && !this.brands.has(id));
    for (const b of await brandNames(this.app.db, org, brands)) this.brands.set(b.id, { ulid: b.ulid, name: b.name });
  }

  offered(seq: number, r: LiveRow): Offered {
    const code = this.codes.get(r.code_id) ?? { ulid: '', slug: '' };
    const brand = this.brands.get(r.brand_id);
    const about: About = {
      code_ulid: code.ulid,
      slug: code.slug,
      brand_ulid: brand?.ulid ?? null,
      brand_name: brand?.name ?? null,
    };
    const id = `${seq}-${rowId(r)}`;
    const frame =
      r.kind === 'scan' ? sseEvent('scan', scanOut(r, about), id) : sseEvent('action', actionOut(r, about), id);
    return { seq, row: r, codeUlid: code.ulid, frame };
  }
}

/** The rows of stored batches of one kind from ClickHouse (scan_events or scan_actions, by token). */
async function readKind(
  app: AppContext,
  kind: LiveRow['kind'],
  batches: StoredBatch[],
  orgIds: number[],
): Promise<LiveRow[]> {
  const of = batches.filter((b) => b.kind === kind);
  if (!of.length) return [];
  const times = of.map(tokenTime);
  const q = {
    orgIds,
    tokens: of.map((b) => b.token),
    fromMs: Math.min(...times) - BEFORE_TOKEN_MS,
    toMs: Math.max(...times) + AFTER_TOKEN_MS,
  };
  if (kind === 'scan') return (await scansOfBatches(app.ch, q)).map((s) => ({ ...s, kind }));
  return (await actionsOfBatches(app.ch, q)).map((a) => ({ ...a, kind }));
}

/** Rows of batches from ClickHouse in stream order (seq, then the row's id), read again while some are missing. */
async function readBatches(app: AppContext, batches: StoredBatch[], orgIds: number[]): Promise<LiveRow[]> {
  if (!batches.length) return [];
  const seqOf = new Map(batches.map((b) => [b.token, b.seq]));
  const wanted = new Set(orgIds);
  let expected = 0;
  for (const b of batches) b.org_ids.forEach((o, i) => (expected += wanted.has(o) ? b.org_rows[i] : 0));
  let found: LiveRow[];
  for (let attempt = 0; ; attempt++) {
    const [scans, actions] = await Promise.all([
      readKind(app, 'scan', batches, orgIds),
      readKind(app, 'action', batches, orgIds),
    ]);
    found = [...scans, ...actions];
    if (found.length >= expected || attempt >= PARTIAL_READ_RETRIES) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (found.length < expected) {
    app.log.warn({ expected, read: found.length, from: batches[0].seq }, 'live stream: fewer rows read than stored');
  }
  return inStreamOrder(found, seqOf);
}

/** Rows in stream order: their batch's seq, then the row's id. */
function inStreamOrder(rows: LiveRow[], seqOf: Map<string, number>): LiveRow[] {
  return rows.sort((a, b) => seqOf.get(a.batch)! - seqOf.get(b.batch)! || (rowId(a) < rowId(b) ? -1 : 1));
}

/** The fan-out of one application context (one API process). */
class LiveHub {
  private readonly subs = new Map<number, Set<Subscriber>>();
  private lastSeq = 0;
  private inflight: number | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly labels: Labels;
  /** Work a closed stream left (its open-stream row removed), awaited by close(). */
  private readonly leaving = new Set<Promise<unknown>>();
  /**
   * Batches stored by this process, by seq, with their rows of the organizations that had
   * subscribers when they were handed over (`orgs`); taken by the pump instead of a read back.
   */
  private readonly handed = new Map<number, { token: string; orgs: Set<number>; rows: LiveRow[] }>();

  constructor(private readonly app: AppContext) {
    this.labels = new Labels(app);
  }

  async start(): Promise<void> {
    this.lastSeq = await lastBatchSeq(this.app.db);
    receiveStoredBatches(this.app, {
      wanted: () => !this.closed && this.subs.size > 0,
      receive: (b) => this.receive(b),
    });
    await this.app.notify.subscribe(
      SCAN_STREAM_CHANNEL,
      () => this.kick(),
      () => this.kick(),
    );
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    // A notification missed (the LISTEN connection down) is caught up within a second.
    every(1000, () => {
      if (this.subs.size) this.kick();
    });
    every(this.app.config.liveStreamHeartbeatMs, () => void this.heartbeat());
  }

  /**
   * A batch this process just stored and recorded (live-handoff.ts): its rows of the organizations
   * with subscribers are kept for the pump, which then reads the ledger at once. A batch the pump
   * has already read from the ledger (the notification came first) was read back; it is left.
   */
  private receive(b: HandedBatch): void {
    if (this.closed || !this.subs.size || b.seq <= (this.inflight ?? this.lastSeq)) return;
    const orgs = new Set(this.subs.keys());
    try {
      const rows = rowsOfHandedBatch(b, orgs);
      if (!rows) return;
      this.handed.set(b.seq, { token: b.token, orgs, rows });
      if (this.handed.size > HANDED_MAX) this.handed.delete(this.handed.keys().next().value!);
    } catch (err) {
      this.app.log.warn({ err, token: b.token }, 'live stream: a handed batch is read back instead');
    }
    this.kick();
  }

  /**
   * The rows of the ledger's batches for the organizations with subscribers, in stream order: those
   * of batches handed over by this process as they are, the others read back from ClickHouse.
   */
  private async rowsOf(batches: StoredBatch[], orgIds: number[]): Promise<LiveRow[]> {
    const wanted = new Set(orgIds);
    const rows: LiveRow[] = [];
    const readBack: StoredBatch[] = [];
    let relevant = 0;
    for (const b of batches) {
      if (!b.org_ids.some((o) => wanted.has(o))) continue;
      relevant++;
      const h = this.handed.get(b.seq);
      if (h && h.token === b.token && b.org_ids.every((o) => !wanted.has(o) || h.orgs.has(o))) {
        for (const r of h.rows) if (wanted.has(r.org_id)) rows.push(r);
      } else readBack.push(b);
    }
    rows.push(...(await readBatches(this.app, readBack, orgIds)));
    const counted = this.app.metrics.liveStreamBatches;
    if (readBack.length) counted.inc({ source: 'read_back' }, readBack.length);
    if (readBack.length < relevant) counted.inc({ source: 'handed' }, relevant - readBack.length);
    return inStreamOrder(rows, new Map(batches.map((b) => [b.token, b.seq])));
  }

  /** The seq a new subscriber's live events start after: batches being read now are its replay's. */
  get position(): number {
    return this.inflight ?? this.lastSeq;
  }

  add(sub: Subscriber): void {
    let set = this.subs.get(sub.org.id);
    if (!set) this.subs.set(sub.org.id, (set = new Set()));
    set.add(sub);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  remove(sub: Subscriber): void {
    const set = this.subs.get(sub.org.id);
    set?.delete(sub);
    if (set && !set.size) this.subs.delete(sub.org.id);
    const gone = this.app
      .db('scan_stream_sessions')
      .where({ id: sub.id })
      .delete()
      .catch(() => undefined)
      .finally(() => this.leaving.delete(gone));
    this.leaving.add(gone);
  }

  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pump()
      .catch((err) => this.app.log.warn({ err }, 'live stream: reading stored batches failed; retrying'))
      .finally(() => {
        this.running = null;
        this.inflight = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pump(): Promise<void> {
    while (!this.closed) {
      const batches = await batchesAfter(this.app.db, this.lastSeq, BATCHES_PER_READ);
      if (!batches.length) return;
      this.inflight = batches[batches.length - 1].seq;
      const orgIds = [...new Set(batches.flatMap((b) => b.org_ids))].filter((o) => this.subs.has(o));
      if (orgIds.length) {
        const scans = await this.rowsOf(batches, orgIds);
        const byOrg = new Map<number, LiveRow[]>();
        for (const s of scans) {
          const list = byOrg.get(s.org_id);
          if (list) list.push(s);
          else byOrg.set(s.org_id, [s]);
        }
        for (const [orgId, list] of byOrg) {
          const subs = this.subs.get(orgId);
          if (!subs?.size) continue;
          const [first] = subs;
          await this.labels.load(first.org, list);
          const seqOf = new Map(batches.map((b) => [b.token, b.seq]));
          const read = new Read(list.map((s) => this.labels.offered(seqOf.get(s.batch)!, s)));
          for (const sub of this.subs.get(orgId) ?? []) sub.take(read);
        }
      }
      this.lastSeq = this.inflight;
      for (const seq of this.handed.keys()) if (seq <= this.lastSeq) this.handed.delete(seq);
    }
  }

  /** Replays the batches after a Last-Event-ID up to where the subscriber's live events start. */
  async replay(sub: Subscriber, from: { seq: number; scanId: string }): Promise<void> {
    let after = from.seq - 1;
    const org = sub.org;
    while (!sub.closed) {
      const batches = await batchesAfter(this.app.db, after, BATCHES_PER_READ, { orgId: org.id, upTo: sub.after });
      if (!batches.length) break;
      const scans = await readBatches(this.app, batches, [org.id]);
      await this.labels.load(org, scans);
      const seqOf = new Map(batches.map((b) => [b.token, b.seq]));
      const frames: string[] = [];
      for (const s of scans) {
        const seq = seqOf.get(s.batch)!;
        if (seq === from.seq && rowId(s) <= from.scanId) continue;
        const o = this.labels.offered(seq, s);
        if (sub.matches(o)) frames.push(o.frame);
      }
      sub.send(frames);
      after = batches[batches.length - 1].seq;
      await sub.room();
    }
  }

  private async heartbeat(): Promise<void> {
    const now = this.app.clock.now();
    const ids: string[] = [];
    for (const set of this.subs.values()) {
      for (const sub of set) {
        sub.heartbeat(now);
        ids.push(sub.id);
      }
    }
    if (ids.length) {
      await this.app
        .db('scan_stream_sessions')
        .whereIn('id', ids)
        .update({ seen_at: this.app.db.fn.now() })
        .catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    receiveStoredBatches(this.app, null);
    this.handed.clear();
    for (const t of this.timers) clearInterval(t);
    const all = [...this.subs.values()].flatMap((s) => [...s]);
    for (const sub of all) sub.end();
    while (this.running) await this.running;
    await Promise.all([...this.leaving]);
  }
}

const hubs = new WeakMap<AppContext, Promise<LiveHub>>();

/** The hub of this application context, started on the first stream. */
function hubOf(app: AppContext): Promise<LiveHub> {
  let hub = hubs.get(app);
  if (!hub) {
    hub = (async () => {
      const h = new LiveHub(app);
      await h.start();
      app.onClose(() => h.close());
      return h;
    })();
    hub.catch(() => hubs.delete(app));
    hubs.set(app, hub);
  }
  return hub;
}

/** A Last-Event-ID this stream sent: `<seq>-<scan_id>` (422 otherwise, before the stream starts). */
function parseLastEventId(header: string): { seq: number; scanId: string } | null {
  if (!header) return null;
  const m = EVENT_ID.exec(header.trim());
  if (!m) throw ApiError.field('Last-Event-ID', 'Is not an event id this stream sent.');
  return { seq: Number(m[1]), scanId: m[2] };
}

async function resolveScope(app: AppContext, org: OrgRecord, q: ScanStreamQuery): Promise<Scope> {
  const scope: Scope = { includeBots: q.include_bots === true };
  if (q.code_ulid !== undefined) scope.codeId = (await getCodeRow(app.db, org, q.code_ulid)).id;
  if (q.brand_ulid !== undefined) scope.brandId = (await getBrand(app.db, org, q.brand_ulid)).id;
  if (q.domain_ulid !== undefined) {
    const domain = await getDomain(app.db, org, q.domain_ulid);
    scope.domainId = domain.type === 'fallback' ? 0 : domain.id;
  }
  return scope;
}

/**
 * Counts the stream toward the organization's plan limit (open streams of every process, those of
 * a process that stopped refreshing them for 45 s excepted), or refuses it with 429.
 */
async function openSession(app: AppContext, org: OrgRecord, id: string): Promise<void> {
  await app.db.transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtextextended('scan_stream_sessions', ?))", [org.id]);
    const plan = org.plan ? await trx('plans').where({ id: org.plan.id }).first('live_streams') : null;
    const max = Number(plan?.live_streams ?? 0);
    await trx('scan_stream_sessions')
      .where({ org_id: org.id })
      .whereRaw(`seen_at < now() - interval '${STALE_STREAM_SECONDS} seconds'`)
      .delete();
    const [{ n }] = await trx('scan_stream_sessions').where({ org_id: org.id }).count({ n: '*' });
    if (Number(n) >= max) throw ApiError.rateLimited(STALE_STREAM_SECONDS, rateLimitHelpUrl(app.config, app.apiPort()));
    await trx('scan_stream_sessions').insert({ id, org_id: org.id });
  });
}

/**
 * Opens a live stream: checks the filters and the Last-Event-ID (404, 422), the limit (429), then
 * returns the event stream. A resume replays what the client missed before the live events; an id
 * older than 24 hours (or unknown) gets a `reset` event first.
 */
export async function openScanStream(
  app: AppContext,
  org: OrgRecord,
  q: ScanStreamQuery,
  lastEventId: string,
): Promise<{ stream: Readable; stopping: boolean }> {
  const from = parseLastEventId(lastEventId);
  const scope = await resolveScope(app, org, q);
  const hub = await hubOf(app);
  // The service is stopping: a stream that ends at once, so the client reconnects after `retry`
  // (an error status would make an EventSource give up for good).
  // Connection: close, so that its keep-alive connection does not hold the stopping listener open.
  if (hub.isClosed) return { stream: Readable.from([`retry: ${RETRY_MS}\n\n`]), stopping: true };
  const sub = new Subscriber(org, scope, app.config.liveStreamBuffer, (s) => hub.remove(s));
  await openSession(app, org, sub.id);
  sub.after = hub.position;
  hub.add(sub);
  sub.send(`retry: ${RETRY_MS}\n\n`);
  if (from) {
    sub.startReplay();
    void (async () => {
      const start = await batchAt(app.db, from.seq);
      if (!start || Date.now() - start.stored_at.getTime() > RESUME_WINDOW_MS) {
        sub.send(sseEvent('reset', { reason: 'Last-Event-ID is older than 24 hours or unknown; live scans follow.' }));
      } else {
        await hub.replay(sub, from);
      }
    })()
      .catch((err) => {
        app.log.error({ err }, 'live stream: replay failed');
        sub.send(sseEvent('reset', { reason: 'The replay failed; live scans follow.' }));
      })
      .finally(() => sub.endReplay());
  }
  return { stream: sub.stream, stopping: false };
}
