// Orphan scans (requests for an unknown or inactive slug on a host we serve) are kept for
// operators, but a flood of random slugs must not become a flood of rows: each domain records at
// most `perSecond` orphan rows per second, and the requests beyond that are only counted
// (redirect_orphan_scans_dropped_total). Below the limit every orphan request is recorded.

export const DEFAULT_ORPHANS_PER_SECOND = 100;
const MAX_TRACKED = 10_000;

export class OrphanSampler {
  private readonly seconds = new Map<number, { second: number; used: number }>();

  constructor(
    readonly perSecond: number,
    private readonly onDropped: () => void,
  ) {}

  /** Whether this orphan request of a domain is recorded; false: it is counted as dropped. */
  take(domainId: number, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    let slot = this.seconds.get(domainId);
    if (!slot || slot.second !== second) {
      if (!slot && this.seconds.size >= MAX_TRACKED) this.seconds.clear();
      slot = { second, used: 0 };
      this.seconds.set(domainId, slot);
    }
    if (slot.used < this.perSecond) {
      slot.used++;
      return true;
    }
    this.onDropped();
    return false;
  }
}
