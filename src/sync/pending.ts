// One write per key, in bounded memory. Valid listings wait in a keyed window of the last `size`
// keys before they are planned: a key that comes again while it waits replaces its entry (the
// later record wins, one write). A key that comes again after it left the window (its earlier
// record was planned, maybe written) is held until the feed ends and planned then, after every
// earlier write has finished, against what this run wrote: an update, never a second create.
// Keys known to recur (the last run saw them twice) are held from their first record, so a feed
// that repeats a key far apart writes nothing on a rerun. What is held is bounded by `maxHeld`;
// past it a late record is planned at once (still never a create twice: see `written`).
export interface PendingWindow<T extends { key: string }> {
  /** a listing read; returns the one that leaves the window now (the oldest, past `size`), to be planned */
  push(entry: T): T | undefined;
  /** the feed ended: what still waits in the window */
  drain(): T[];
  /** the feed ended and the window was drained: the held ones (latest record per key) */
  held(): T[];
  /** whether a record of `key` left the window already (was planned) */
  planned(key: string): boolean;
  /** keys seen more than once in this run (stored for the next run) */
  readonly recurring: ReadonlySet<string>;
}

export function createPendingWindow<T extends { key: string }>(opts: { size: number; maxHeld: number; knownRecurring: ReadonlySet<string> }): PendingWindow<T> {
  const window = new Map<string, T>();
  const late = new Map<string, T>();
  /** keys planned already (left the window): a next record of one of them is late */
  const left = new Set<string>();
  const recurring = new Set<string>();
  return {
    recurring,
    planned: (key) => left.has(key),
    push(entry) {
      const { key } = entry;
      // (each lookup once: a rerun pushes every record of the feed)
      const isLate = late.has(key);
      const hasLeft = left.has(key);
      if (window.delete(key) || isLate || hasLeft) recurring.add(key);
      if (isLate || ((hasLeft || opts.knownRecurring.has(key)) && late.size < opts.maxHeld)) {
        late.set(key, entry);
        return undefined;
      }
      window.set(key, entry);
      if (window.size <= opts.size) return undefined;
      const key0: string = window.keys().next().value!;
      const oldest = window.get(key0);
      window.delete(key0);
      left.add(key0);
      return oldest;
    },
    drain() {
      const out = [...window.values()];
      window.clear();
      return out;
    },
    held() {
      const out = [...late.values()];
      late.clear();
      return out;
    },
  };
}
