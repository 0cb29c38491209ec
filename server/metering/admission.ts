// Admission of one API call (REST or MCP): the organization's fixed one-minute window shared by
// every process, the optional raw-export bucket, monthly usage and the overage debit, in one
// round trip to Postgres (the api_admit_batch function of sql/0015_admission_events.sql), or from
// a lease of calls taken in such a round trip (sql/0096_api_leases.sql, docs/api.md, Leases). What
// each call of a batch learns from that round trip is computed in ./admission-rules.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Histogram } from 'prom-client';
import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { fastUlid } from '../ids.js';
import {
  effectiveRateLimit,
  judgeBatch,
  rateHeaders,
  type Admission,
  type BatchRow,
  type RateInfo,
} from './admission-rules.js';

export { effectiveRateLimit, rateHeaders, type Admission, type RateInfo };

export interface AdmitOptions {
  billable: boolean;
  bucket?: 'raw_export';
}

/** What the admitter needs, and nothing more. */
export interface AdmitterDeps {
  db: Knex;
  config: Config;
  clock: { now(): Date };
  /** Batch sizes of the group commit. */
  batchSizes: Histogram<never>;
  /** The rate-limit help page linked from 429 answers (it names the API's bound port). */
  helpUrl(): string;
}

interface Pending {
  principal: Principal;
  now: Date;
  resolve(info: Admission): void;
  reject(err: unknown): void;
}

/** Largest batch sent in one round trip. */
const MAX_BATCH = 256;
/** How often leases are looked after: idle ones settled, expired ones of dead processes swept. */
const TICK_MS = 1000;
/** A lease no call was admitted from for this long is settled (its unspent calls given back). */
const IDLE_MS = 1000;
/** How long after its expiry another process settles a lease from its journal. */
const SWEEP_GRACE_MS = 5000;
/** One journal record: one admitted call. */
const ONE_CALL = Buffer.from([0x2e]);

/** Calls of one organization and kind held by this process (sql/0096_api_leases.sql). */
interface Lease {
  id: string;
  granted: number;
  /** Calls admitted from it, those of the round trip that took it included. */
  spent: number;
  expiresAt: number;
  /** The window's hits before the lease, and the month's billable calls before it. */
  hitsBefore: number;
  callsMonthBefore: number;
  resetAt: Date;
  limit: number;
  billable: boolean;
  /** The journal: one byte per call admitted after the take. */
  fd: number;
  /** Calls admitted from it whose bytes are not written yet: they are answered once written. */
  unjournaled: Unjournaled[];
  file: string;
  lastUsed: number;
  /** Tokens that used it (their last_used_at is written when it is settled). */
  tokens: Set<number>;
}

/** A call admitted from a lease, waiting for its journal byte. */
interface Unjournaled {
  admission: Admission;
  resolve(info: Admission): void;
  reject(err: unknown): void;
}

/** Where this host's processes journal the calls they admit from leases. */
export function leaseDirOf(config: Pick<Config, 'apiLeaseDir' | 'dataDir'>): string {
  return config.apiLeaseDir ?? path.join(config.dataDir, 'api-leases');
}

/**
 * Group commit for admission. Calls of one organization (and one kind: billable or not, extra
 * bucket or not) that arrive while a round trip for the same key is in flight wait for it and
 * go together in the next one. The result of a batch equals admitting its calls one by one in
 * arrival order (see api_admit_batch), so counts stay exact; Postgres serializes batches from
 * every process. Under no concurrency a call costs one round trip as before.
 *
 * Leases (API_LEASE_CALLS above 1, calls without an extra bucket): the round trip asks for more
 * calls than are waiting, and the process admits later calls of the key from what it was granted
 * without asking Postgres, journaling each one (one byte, written before the call is answered) so
 * that a crash loses none. A lease that runs out makes the next one twice as large (up to
 * API_LEASE_CALLS); one given back unspent (idle for a second, expired, or at shutdown) halves it.
 */
export class Admitter {
  private readonly queues = new Map<string, Pending[]>();
  private readonly busy = new Set<string>();
  private readonly leases = new Map<string, Lease>();
  private readonly nextSize = new Map<string, number>();
  private readonly settling = new Set<Promise<void>>();
  private readonly host = os.hostname();
  private readonly dir: string;
  private readonly timer: NodeJS.Timeout | null = null;
  /** The tick under way, which close() waits for (its sweep may be between a settle and the rm). */
  private ticking: Promise<void> | null = null;
  /** Leases with calls waiting for their journal bytes, written at the end of this I/O round. */
  private readonly journaling = new Set<Lease>();
  private journalsDue = false;

  constructor(private readonly deps: AdmitterDeps) {
    this.dir = leaseDirOf(deps.config);
    if (deps.config.apiLeaseCalls > 1) {
      fs.mkdirSync(this.dir, { recursive: true });
      this.timer = setInterval(() => void this.tick(), TICK_MS);
      this.timer.unref();
    }
  }

  /** Admits a call or throws 429 / 402; either way the rate-limit headers travel with the answer. */
  admit(p: Principal, opts: AdmitOptions): Promise<Admission> {
    const key = `${p.org.id}:${opts.billable ? 1 : 0}:${opts.bucket ?? ''}`;
    const lease = this.usableLease(key);
    if (lease) return this.spend(lease, p);
    return new Promise<Admission>((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = []));
      queue.push({ principal: p, now: this.deps.clock.now(), resolve, reject });
      if (!this.busy.has(key)) void this.drain(key, opts);
    });
  }

  /** The key's lease if a call can be admitted from it now; one spent or expired is retired. */
  private usableLease(key: string): Lease | undefined {
    const lease = this.leases.get(key);
    if (!lease) return undefined;
    if (lease.spent < lease.granted && this.deps.clock.now().getTime() < lease.expiresAt) return lease;
    this.retire(key, lease);
    return undefined;
  }

  /** Gives back what the held leases did not spend, and waits for every settle under way. */
  async settleAll(): Promise<void> {
    for (const [key, lease] of this.leases) this.retire(key, lease);
    await Promise.all(this.settling);
  }

  /** At shutdown: stops looking after leases and settles the held ones. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    await this.settleAll();
  }

  private async drain(key: string, opts: AdmitOptions): Promise<void> {
    this.busy.add(key);
    try {
      for (;;) {
        const queue = this.queues.get(key);
        if (!queue?.length) {
          this.queues.delete(key);
          return;
        }
        // Calls that arrived while a lease was being taken are admitted from it first.
        for (let lease = this.usableLease(key); lease && queue.length; lease = this.usableLease(key)) {
          const item = queue.shift()!;
          this.spend(lease, item.principal).then(item.resolve, item.reject);
        }
        if (!queue.length) continue;
        const batch = queue.splice(0, MAX_BATCH);
        this.deps.batchSizes.observe(batch.length);
        try {
          if (opts.bucket || this.deps.config.apiLeaseCalls === 1)
            this.settle(batch, opts, await this.roundTrip(batch, opts));
          else await this.takeLease(key, batch, opts);
        } catch (err) {
          for (const item of batch) item.reject(err);
        }
      }
    } finally {
      this.busy.delete(key);
    }
  }

  private async roundTrip(batch: Pending[], opts: AdmitOptions): Promise<BatchRow> {
    const p = batch[0].principal;
    // The batch is judged at the time of its newest call.
    const now = batch[batch.length - 1].now;
    const { rows } = await this.deps.db.raw<{ rows: BatchRow[] }>(
      'select * from api_admit_batch(?, ?::bigint[], ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        p.org.id,
        tokensOf(batch),
        now,
        batch.length,
        effectiveRateLimit(this.deps.config, p.org),
        opts.bucket ?? null,
        opts.bucket ? this.deps.config.rawExportRateLimitPerMin : null,
        opts.billable,
        p.org.plan?.callsIncludedMonth ?? null,
        fastUlid(now.getTime()),
      ],
    );
    return rows[0];
  }

  /** The round trip of a batch that also asks for a lease of the calls after it. */
  private async takeLease(key: string, batch: Pending[], opts: AdmitOptions): Promise<void> {
    const p = batch[0].principal;
    const now = batch[batch.length - 1].now;
    const limit = effectiveRateLimit(this.deps.config, p.org);
    const size = Math.max(batch.length, Math.min(this.deps.config.apiLeaseCalls, this.nextSize.get(key) ?? 1));
    const id = fastUlid(now.getTime());
    const expiresAt = now.getTime() + this.deps.config.apiLeaseSeconds * 1000;
    const { rows } = await this.deps.db.raw<{ rows: BatchRow[] }>(
      'select * from api_lease_take(?, ?, ?, ?, ?, ?, ?::bigint[], ?, ?, ?, ?, ?, ?)',
      [
        id,
        this.host,
        this.dir,
        new Date(expiresAt),
        batch.length,
        p.org.id,
        tokensOf(batch),
        now,
        size,
        limit,
        opts.billable,
        p.org.plan?.callsIncludedMonth ?? null,
        fastUlid(now.getTime()),
      ],
    );
    const row = rows[0];
    // Every call asked for was spent at once: the next lease may be larger.
    if (size === batch.length && row.funded === size) this.resize(key, true);
    if (row.funded > batch.length) {
      const file = path.join(this.dir, id);
      let fd: number;
      try {
        fd = fs.openSync(file, 'a');
      } catch (err) {
        // Without a journal the lease cannot be spent: given back whole (but the batch's calls).
        this.track(this.settleLease(id, batch.length, []));
        throw err;
      }
      const held = this.leases.get(key);
      if (held) this.retire(key, held);
      this.leases.set(key, {
        id,
        granted: row.funded,
        spent: batch.length,
        expiresAt: Math.min(expiresAt, row.reset_at.getTime()),
        hitsBefore: row.hits_before,
        callsMonthBefore: Number(row.calls_month) - (opts.billable ? row.funded : 0),
        resetAt: row.reset_at,
        limit,
        billable: opts.billable,
        fd,
        unjournaled: [],
        file,
        lastUsed: Date.now(),
        tokens: new Set(),
      });
    }
    this.settle(batch, opts, row);
  }

  /**
   * Admits a call from a lease: journaled before it is answered. The bytes of every call admitted
   * while the event loop handles one round of I/O are written together, once that round is over
   * (one write instead of one per call); the calls are answered after it.
   */
  private spend(lease: Lease, p: Principal): Promise<Admission> {
    lease.spent++;
    lease.lastUsed = Date.now();
    if (p.token.id !== null) lease.tokens.add(p.token.id);
    const admission: Admission = {
      limit: lease.limit,
      remaining: Math.max(0, lease.limit - (lease.hitsBefore + lease.spent)),
      resetAt: lease.resetAt,
      callsUsedMonth: lease.callsMonthBefore + (lease.billable ? lease.spent : 0),
    };
    return new Promise<Admission>((resolve, reject) => {
      lease.unjournaled.push({ admission, resolve, reject });
      this.journaling.add(lease);
      if (!this.journalsDue) {
        this.journalsDue = true;
        setImmediate(() => this.writeJournals());
      }
    });
  }

  private writeJournals(): void {
    this.journalsDue = false;
    for (const lease of this.journaling) this.writeJournal(lease);
    this.journaling.clear();
  }

  /**
   * Writes a lease's waiting calls to its journal and answers them. Calls whose bytes could not be
   * written are refused and not spent (the journal is what bills them after a crash).
   */
  private writeJournal(lease: Lease): void {
    const calls = lease.unjournaled;
    if (!calls.length) return;
    lease.unjournaled = [];
    let written = 0;
    let failure: unknown = null;
    try {
      written = fs.writeSync(lease.fd, calls.length === 1 ? ONE_CALL : Buffer.alloc(calls.length, ONE_CALL));
    } catch (err) {
      failure = err;
    }
    lease.spent -= calls.length - written;
    for (let i = 0; i < calls.length; i++) {
      if (i < written) calls[i].resolve(calls[i].admission);
      else calls[i].reject(failure ?? new Error(`lease journal ${lease.file}: short write`));
    }
  }

  /** Lets go of a key's lease and settles it in the background; sizes the key's next lease. */
  private retire(key: string, lease: Lease): void {
    this.writeJournal(lease);
    if (this.leases.get(key) === lease) this.leases.delete(key);
    this.resize(key, lease.spent === lease.granted);
    fs.closeSync(lease.fd);
    this.track(this.settleLease(lease.id, lease.spent, [...lease.tokens], lease.file));
  }

  /** A key's next lease: twice as large after one that ran out, half after one given back unspent. */
  private resize(key: string, ranOut: boolean): void {
    const size = this.nextSize.get(key) ?? 1;
    this.nextSize.set(
      key,
      ranOut ? Math.min(this.deps.config.apiLeaseCalls, size * 2) : Math.max(1, Math.floor(size / 2)),
    );
  }

  private track(settle: Promise<void>): void {
    this.settling.add(settle);
    void settle.finally(() => this.settling.delete(settle));
  }

  /**
   * Settles a lease (idempotent: only the first settle of a lease counts) and removes its journal.
   * When Postgres fails, the journal stays and the sweep settles the lease once it has expired.
   */
  private async settleLease(id: string, spent: number, tokens: number[], file?: string): Promise<void> {
    try {
      await this.deps.db.raw('select api_lease_settle(?, ?, ?::bigint[], ?)', [
        id,
        spent,
        tokens,
        this.deps.clock.now(),
      ]);
      if (file) fs.rmSync(file, { force: true });
    } catch {
      // Left to the sweep.
    }
  }

  /** Settles idle and expired leases of this process, and expired ones of dead processes of this host. */
  private tick(): Promise<void> {
    this.ticking ??= this.lookAfterLeases().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async lookAfterLeases(): Promise<void> {
    try {
      const now = this.deps.clock.now().getTime();
      for (const [key, lease] of this.leases) {
        if (now >= lease.expiresAt || Date.now() - lease.lastUsed >= IDLE_MS) this.retire(key, lease);
      }
      await this.sweep();
    } catch {
      // Postgres unavailable: the next tick tries again.
    }
  }

  /**
   * Settles the expired, unsettled leases journaled in this host's directory: those of a process
   * that died (SIGKILL, power) and those whose settle failed. Spent: the calls of the round trip
   * that took the lease plus one per journal byte (no journal: none after the take).
   */
  async sweep(): Promise<number> {
    const held = new Set([...this.leases.values()].map((l) => l.id));
    const rows = await this.deps
      .db('api_leases')
      .whereNull('settled_at')
      .where({ host: this.host, journal_dir: this.dir })
      .where('expires_at', '<', new Date(this.deps.clock.now().getTime() - SWEEP_GRACE_MS))
      .select<{ id: string; spent_at_take: number }[]>('id', 'spent_at_take');
    let settled = 0;
    for (const row of rows) {
      if (held.has(row.id)) continue;
      const file = path.join(this.dir, row.id);
      let journaled = 0;
      try {
        journaled = fs.statSync(file).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      await this.settleLease(row.id, row.spent_at_take + journaled, [], file);
      settled++;
    }
    await this.removeSettledJournals(held);
    return settled;
  }

  /**
   * Removes the journals of leases already settled: a process stopped between a settle and the
   * removal of its journal (killed, or shut down while its sweep ran) leaves one behind.
   */
  private async removeSettledJournals(held: Set<string>): Promise<void> {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir).filter((name) => !held.has(name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (!names.length) return;
    const settled = await this.deps
      .db('api_leases')
      .whereIn('id', names)
      .whereNotNull('settled_at')
      .where({ host: this.host, journal_dir: this.dir })
      .pluck<string[]>('id');
    for (const id of settled) fs.rmSync(path.join(this.dir, id), { force: true });
  }

  private settle(batch: Pending[], opts: AdmitOptions, row: BatchRow): void {
    const outcomes = judgeBatch(
      row,
      batch.map((item) => item.now),
      {
        limit: effectiveRateLimit(this.deps.config, batch[0].principal.org),
        bucketLimit: this.deps.config.rawExportRateLimitPerMin,
        billable: opts.billable,
      },
    );
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.kind === 'admitted') item.resolve(outcome.admission);
      else if (outcome.kind === 'rate_limited') {
        item.reject(withHeaders(ApiError.rateLimited(outcome.retryAfter, this.deps.helpUrl()), outcome.info));
      } else item.reject(withHeaders(ApiError.insufficientFunds(), outcome.info));
    });
  }
}

function tokensOf(batch: Pending[]): number[] {
  return [...new Set(batch.map((b) => b.principal.token.id).filter((id): id is number => id !== null))];
}

function withHeaders(err: ApiError, info: RateInfo): ApiError {
  Object.assign(err.headers, rateHeaders(info));
  return err;
}
