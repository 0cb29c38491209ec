// A few idle objects kept for reuse (canvases, pixel buffers), matched by a key such as their size.
// Bounded in all, whatever the keys: the oldest idle object goes when a new one would exceed `max`.
export class ReusePool<T> {
  private readonly idle: { key: string; item: T }[] = [];

  constructor(private readonly max: number) {}

  /** An idle object of this key, now the caller's alone; undefined when there is none. */
  take(key: string): T | undefined {
    const i = this.idle.findIndex((e) => e.key === key);
    return i < 0 ? undefined : this.idle.splice(i, 1)[0].item;
  }

  /** Gives an object back once the caller is done with it. */
  give(key: string, item: T): void {
    this.idle.push({ key, item });
    if (this.idle.length > this.max) this.idle.shift();
  }

  get size(): number {
    return this.idle.length;
  }
}
