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
  /**
   * a later record of `key` is no listing (off the market, removed, rejected): its waiting entry goes
   * (the later record decides), and a key pushed before is recurring (held from its first record next run)
   */
  withdraw(key: string): void;
  /** whether a record of `key` left the window already (was planned) */
  planned(key: string): boolean;
  /** keys seen more than once in this run (stored for the next run) */
  readonly recurring: ReadonlySet<string>;
}

export function createPendingWindow<T extends { key: string }>(opts: {
  size: number;
  maxHeld: number;
  knownRecurring: ReadonlySet<string>;
}): PendingWindow<T> {
  const window = new FifoWindow<T>();
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
      window.add(entry);
      if (window.size <= opts.size) return undefined;
      const oldest = window.shift()!;
      left.add(oldest.key);
      return oldest;
    },
    withdraw(key) {
      const waited = window.delete(key);
      if (late.delete(key) || waited || left.has(key)) recurring.add(key);
    },
    drain() {
      return window.clear();
    },
    held() {
      const out = [...late.values()];
      late.clear();
      return out;
    },
  };
}

/**
 * Entries by key in the order they came, the oldest taken first. (A Map used as a queue slows down
 * as it churns: its iterator walks over the slots of deleted entries until the table is rebuilt,
 * so taking the first one costs more the longer the feed. Here: a list with a moving head.)
 */
class FifoWindow<T extends { key: string }> {
  /** entries by arrival, a taken or replaced one cleared; slots[i] is arrival number base + i */
  #slots: Array<T | undefined> = [];
  #head = 0;
  #base = 0;
  /** the arrival number of each key's entry */
  #at = new Map<string, number>();

  get size(): number {
    return this.#at.size;
  }

  add(entry: T): void {
    this.#at.set(entry.key, this.#base + this.#slots.length);
    this.#slots.push(entry);
  }

  /** removes the key's entry; whether it had one */
  delete(key: string): boolean {
    const at = this.#at.get(key);
    if (at === undefined) return false;
    this.#slots[at - this.#base] = undefined;
    this.#at.delete(key);
    return true;
  }

  /** takes the oldest entry */
  shift(): T | undefined {
    const slots = this.#slots;
    while (this.#head < slots.length && slots[this.#head] === undefined) this.#head++;
    const oldest = slots[this.#head];
    if (oldest === undefined) return undefined;
    slots[this.#head++] = undefined;
    this.#at.delete(oldest.key);
    // the taken head is dropped once it is most of the list (each slot is moved once at most, on average)
    if (this.#head > 1024 && this.#head * 2 > slots.length) {
      this.#slots = slots.slice(this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
    return oldest;
  }

  /** every entry, oldest first, and empties the window */
  clear(): T[] {
    const out: T[] = [];
    for (let i = this.#head; i < this.#slots.length; i++) {
      const e = this.#slots[i];
      if (e !== undefined) out.push(e);
    }
    this.#slots = [];
    this.#base += this.#head;
    this.#head = 0;
    this.#at.clear();
    return out;
  }
}
