// Results of a pure function of a string, kept for the hot paths where the same strings repeat
// heavily (user agents, Accept-Language headers): up to `max` keys, then all forgotten at once (a
// clear costs less than an LRU's bookkeeping on every hit, and the busy keys come back at once).
export class KeptResults<T> {
  private readonly kept = new Map<string, T>();

  constructor(
    private readonly max: number,
    private readonly compute: (key: string) => T,
  ) {}

  get(key: string): T {
    let value = this.kept.get(key);
    if (value === undefined) {
      if (this.kept.size >= this.max) this.kept.clear();
      value = this.compute(key);
      this.kept.set(key, value);
    }
    return value;
  }
}
