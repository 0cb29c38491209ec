// redirect_cap: capped codes counted through reservations, written to Postgres at least every
// flushMs. (Every scan is counted from its scan batch, once per batch token: scan-counts.ts; a
// capped code's batch settles the reservation it was served from.)
//
// A process reserves a small block of redirects of a capped code with an atomic UPDATE that never
// takes redirects_count past redirect_cap, serves from the block in memory, and gives back what it
// did not use at the next flush. So the cap holds across any number of processes, and
// redirects_count in Postgres is exact within one flush window.
//
// Each block is recorded as this process's (one holder id per life, sql/0022), so what a process
// killed outright had not used comes back: every counters' flush looks, every RELEASE_EVERY_MS, for
// holders that are gone (a dead pid on this host once its journals are replayed, or not seen for
// STALE_SECONDS anywhere) and releases what they hold; their journaled scans are counted when the
// journals are replayed.
import os from 'node:os';
import type { Knex } from 'knex';
import { ulid } from 'ulid';
import type { Logger } from '../logger.js';
import { pidAlive, pidHasSpill } from '../analytics/scan-spill.js';
import {
  giveBackRedirects,
  pruneScanBatchCounts,
  releaseReservations,
  reservationHolders,
  reserveRedirects,
  touchReservations,
  type ReservationHolder,
} from '../qr-codes/scan-lookup.js';

/** How often holders that are gone are looked for, and this one's reservations marked as alive. */
const RELEASE_EVERY_MS = 10_000;
/** A holder not seen for this long is gone, wherever it ran (another host, a reused pid). */
export const STALE_SECONDS = 300;

interface Allowance {
  left: number;
  used: number;
}

export interface CounterOptions {
  flushMs?: number;
  /** Largest block reserved at once for a capped code. */
  maxBlock?: number;
  /**
   * The spill directory of this host's redirect processes: a dead holder is released once no
   * journal or spill file of its pid is left there (its scans counted first, so the cap holds).
   */
  spillDir?: string;
}

export class RedirectCounters {
  /** Who holds this process's reservations (sql/0022), and the scan batches it counts itself. */
  readonly holder: ReservationHolder = { id: ulid(), host: os.hostname(), pid: process.pid };
  /** Give-backs not written yet (a failed flush), added to the next. */
  private unreturned = new Map<number, number>();
  private lastPrune = 0;
  private lastRelease = 0;
  private allowances = new Map<number, Allowance>();
  private inflight = new Map<number, Promise<'granted' | 'uncapped' | 'full'>>();
  /** Capped codes found full in this window: answered without asking Postgres again until the next flush. */
  private full = new Set<number>();
  /** Redirects served per capped code in the last window, to size the next block. */
  private lastUse = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private flushAgain: Promise<void> | null = null;
  private readonly maxBlock: number;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly opts: CounterOptions = {},
  ) {
    this.maxBlock = opts.maxBlock ?? 50;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.opts.flushMs ?? 1000);
    this.timer.unref();
  }

  /**
   * Takes one redirect from a capped code's allowance: true when it may be served. Synchronous
   * while the block lasts; otherwise one Postgres round trip (shared by concurrent requests).
   */
  take(codeId: number): boolean | Promise<boolean> {
    const a = this.allowances.get(codeId);
    if (a && a.left > 0) {
      a.left--;
      a.used++;
      return true;
    }
    if (this.full.has(codeId)) return false;
    return this.takeSlow(codeId);
  }

  private async takeSlow(codeId: number): Promise<boolean> {
    for (;;) {
      const a = this.allowances.get(codeId);
      if (a && a.left > 0) {
        a.left--;
        a.used++;
        return true;
      }
      if (this.full.has(codeId)) return false;
      let p = this.inflight.get(codeId);
      if (!p) {
        p = this.reserve(codeId).finally(() => this.inflight.delete(codeId));
        this.inflight.set(codeId, p);
      }
      // The cap was lifted since the code was cached: served, and counted from its scan batch.
      if ((await p) === 'uncapped') return true;
    }
  }

  private async reserve(codeId: number): Promise<'granted' | 'uncapped' | 'full'> {
    const want = Math.max(1, Math.min(this.maxBlock, Math.ceil((this.lastUse.get(codeId) ?? 0) / 4) || 1));
    const { granted, uncapped } = await reserveRedirects(this.db, this.holder, codeId, want);
    if (granted > 0) {
      const a = this.allowances.get(codeId) ?? { left: 0, used: 0 };
      a.left += granted;
      this.allowances.set(codeId, a);
      return 'granted';
    }
    if (uncapped) return 'uncapped';
    this.full.add(codeId);
    return 'full';
  }

  /**
   * Writes the window's counts and gives back unused reservations. Every redirect counted before
   * the call is written when the promise resolves: a flush already running took its snapshot
   * earlier (the timer's, say) and may miss the latest counts, so the call then waits for it and
   * runs one more (shared by every caller that arrives meanwhile).
   */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.flushOnce().finally(() => {
        this.flushing = null;
      });
      return this.flushing;
    }
    this.flushAgain ??= this.flushing.then(() => {
      this.flushAgain = null;
      return this.flush();
    });
    return this.flushAgain;
  }

  private async flushOnce(): Promise<void> {
    const unused = new Map(this.unreturned);
    this.unreturned = new Map();
    this.lastUse = new Map();
    for (const [id, a] of this.allowances) {
      this.lastUse.set(id, a.used);
      if (a.left > 0) unused.set(id, (unused.get(id) ?? 0) + a.left);
    }
    this.allowances = new Map();
    this.full = new Set();
    await this.prune();
    await this.releaseGone();
    const entries = [...unused].filter(([, n]) => n > 0);
    if (!entries.length) return;
    try {
      await giveBackRedirects(this.db, this.holder.id, entries);
    } catch (err) {
      this.log.warn({ err }, 'redirect counters not written; retrying at the next flush');
      for (const [id, n] of entries) this.unreturned.set(id, (this.unreturned.get(id) ?? 0) + n);
    }
  }

  /**
   * Every RELEASE_EVERY_MS (and at the first flush): marks this holder's reservations as alive and
   * releases those of holders that are gone. A dead pid on this host waits until its journals and
   * spill files are replayed (their scans counted), unless it is stale.
   */
  private async releaseGone(now = false): Promise<void> {
    if (!now && Date.now() - this.lastRelease < RELEASE_EVERY_MS) return;
    this.lastRelease = Date.now();
    try {
      await touchReservations(this.db, this.holder.id);
      const holders = await reservationHolders(this.db, this.holder.id, STALE_SECONDS);
      const gone = holders.filter(
        (h) =>
          h.stale ||
          (h.host === this.holder.host &&
            !pidAlive(h.pid) &&
            !(this.opts.spillDir && pidHasSpill(this.opts.spillDir, h.pid))),
      );
      if (!gone.length) return;
      await releaseReservations(
        this.db,
        gone.map((h) => h.id),
      );
      this.log.info({ holders: gone }, 'released the redirect reservations of gone processes');
    } catch (err) {
      this.log.warn({ err }, 'reservations of gone processes not released; retrying in a while');
    }
  }

  /** Forgets old scan batch tokens (scan-counts.ts) about once an hour. */
  private async prune(): Promise<void> {
    if (Date.now() - this.lastPrune < 3_600_000) return;
    this.lastPrune = Date.now();
    await pruneScanBatchCounts(this.db).catch((err: unknown) =>
      this.log.warn({ err }, 'old scan batch tokens not pruned; retrying in an hour'),
    );
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inflight.values()]);
    await this.flush();
    if (this.unreturned.size) await this.flush();
    await this.releaseGone(true);
    // What is still held was used by scans whose batches are not counted yet: released here, they
    // are added when those batches are counted (without a holder any more).
    await releaseReservations(this.db, [this.holder.id]).catch((err: unknown) =>
      this.log.warn({ err }, 'reservations not released at close; another process will'),
    );
  }
}
