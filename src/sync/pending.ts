// One write per key, in bounded memory. Valid listings wait in a keyed window of the last `size`
// keys before they are planned: a key that comes again while it waits replaces its entry (the
// later record wins, one write). A key that comes again after it left the window (its earlier
// record was planned, maybe written) is held until the feed ends and planned then, after every
// earlier write has finished, against what this run wrote: an update, never a second create.
// Keys known to recur (the last run saw them twice) are held from their first record, so a feed
// that repeats a key far apart writes nothing on a rerun. What is held is bounded by `maxHeld`;
// past it a late record is planned at once (still never a create twice: see `written`).
export interface PendingWindow<T extends { key: string }> {
  /** a listing read; returns those that leave the window now, to be planned */
  push(entry: T): T[];
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
      if (window.delete(key) || late.has(key) || left.has(key)) recurring.add(key);
      if (late.has(key) || ((left.has(key) || opts.knownRecurring.has(key)) && late.size < opts.maxHeld)) {
        late.set(key, entry);
        return [];
      }
      window.set(key, entry);
      if (window.size <= opts.size) return [];
      // (the first entry, without destructuring an iterator per record)
      const [key0, oldest] = window.entries().next().value!;
      window.delete(key0);
      left.add(key0);
      return [oldest];
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
