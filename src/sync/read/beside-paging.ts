// A feed read beside its chatbot's paging (read-feed.ts whilePaging; run/read-early.ts readsWhilePaging decides when): on a
// rerun whose records are mostly in step by their stamps, the feed's reading, parsing and stamp
// checks are the other half of the run's work, and need only the copies of their own keys. So a
// record is taken as soon as the one copy of its key has been paged (the planner's readEarly:
// remembered, as the plain path would remember it once paging is over); a record of a key not
// paged yet waits in its key's queue until a page brings the key; anything only the finished
// paging can judge (a changed record, a key held twice, a removal, a record with no stamp) waits
// for the plain path, with every later record of its key, so a key's records keep their order.
// Nothing is mapped, planned against the unfinished paging or written here. At most
// BESIDE_PAGING_HELD records wait at once: past that, the read pauses until pages come.
import { setImmediate } from 'node:timers/promises';
import type { KeyedItem } from '../../mapping/types.js';
import type { Job } from '../model/execution.js';
import type { PlannerSteps } from '../model/lane-planner.js';

/**
 * Records taken between two turns of the event loop: the paging's answers come in on this thread,
 * and a reader's whole batch (a thousand records, several ms) would hold back the next page
 * requests for that long, against a page latency of a few tens of ms.
 */
const YIELD_EVERY = 64;

/** Records that wait while the feed is read beside the paging (about 15 MB of CSV records). */
export const BESIDE_PAGING_HELD = 10_000;

/** What the read asks of a paging under way (RemoteIndex while its first pass pages). */
export interface PagingSoFar {
  /** the paging ended (or failed) */
  done: Promise<unknown>;
  /** the next page's rows are in, or paging ended */
  rowsAdded(): Promise<void>;
  /** the keys of the rows paged since the first `row` */
  keysSince(row: number): readonly string[];
}

/** What the read beside the paging leaves for the plain path: the records that wait, and the reader's failure (rethrown after them). */
export interface Early {
  held: KeyedItem[];
  failed: { err: unknown } | undefined;
}

/** The lane the feed is read for beside the paging. */
interface BesideLane {
  planner: Pick<PlannerSteps<Job>, 'readEarly' | 'push'>;
}

export interface BesideRead {
  batches: AsyncIterator<KeyedItem[]>;
  /** whether a record goes to the lane (its `where`) */
  routes(item: KeyedItem): boolean;
  counted(): void;
  signal: AbortSignal;
}

/** Reads the feed for its one lane until paging is done; what waits is left in `early`. */
export async function readBesidePaging(
  l: BesideLane,
  read: BesideRead,
  paging: PagingSoFar,
  early: Early,
): Promise<void> {
  let over = false;
  const ended = paging.done.then(
    () => (over = true),
    () => (over = true),
  );
  const queues = new KeyQueues(l, early);
  let rows = 0;
  /** the records of keys that pages brought since the last look */
  const arrived = () => {
    const keys = paging.keysSince(rows);
    rows += keys.length;
    for (const key of keys) queues.arrived(key);
  };
  let whole = false;
  try {
    while (!over && !read.signal.aborted) {
      // (the feed read to its end, or enough waiting: what waits is taken as pages come)
      if (whole || queues.waiting >= BESIDE_PAGING_HELD) {
        await Promise.race([paging.rowsAdded(), ended]);
        arrived();
        continue;
      }
      const next = await read.batches.next();
      if (next.done) {
        whole = true;
        continue;
      }
      const batch = next.value;
      for (let i = 0; i < batch.length; i++) {
        const item = batch[i]!;
        read.counted();
        queues.add(item, item.key, item.kind === 'record' && read.routes(item));
        // (the paging's answers wait for this thread: a batch is a few ms of work, a page's latency a few tens)
        if (i % YIELD_EVERY === YIELD_EVERY - 1) {
          arrived();
          await setImmediate();
        }
      }
      arrived();
    }
  } catch (err) {
    early.failed = { err };
  }
  await ended;
  if (!early.failed) arrived();
  queues.end();
}

/** The records that wait: per key until a page brings it, or for the plain path (`early.held`, in the order they were given up). */
class KeyQueues {
  /** records of keys no copy of which is paged yet, per key in feed order */
  #notYet = new Map<string, KeyedItem[]>();
  #notYetCount = 0;
  /** keys whose records wait for the plain path */
  #later = new Set<string>();

  constructor(
    readonly l: BesideLane,
    readonly early: Early,
  ) {}

  get waiting(): number {
    return this.#notYetCount + this.early.held.length;
  }

  /** one record read; `routed`: a record that goes to the lane (anything else waits for the plain path) */
  add(item: KeyedItem, key: string | undefined, routed: boolean): void {
    if (key === undefined) {
      this.early.held.push(item);
      return;
    }
    if (!routed || this.#later.has(key)) return this.#toLater(key, [item]);
    const queue = this.#notYet.get(key);
    if (queue) {
      queue.push(item);
      this.#notYetCount++;
      return;
    }
    const r = this.#take(item, key);
    if (r === 'not yet') {
      this.#notYet.set(key, [item]);
      this.#notYetCount++;
    } else if (r === 'later') this.#toLater(key, [item]);
  }

  /** a page brought a copy of `key`: its queued records are taken, up to one only the plain path can judge */
  arrived(key: string): void {
    const queue = this.#notYet.get(key);
    if (!queue) return;
    this.#notYet.delete(key);
    this.#notYetCount -= queue.length;
    // (the key's copy is paged now: 'not yet' cannot come back)
    const i = queue.findIndex((item) => this.#take(item, key) === 'later');
    if (i >= 0) this.#toLater(key, queue.slice(i));
  }

  /** paging is over: what no page answered for (keys the chatbot does not hold, a paging that failed) waits for the plain path too */
  end(): void {
    for (const queue of this.#notYet.values()) this.early.held.push(...queue);
    this.#notYet.clear();
    this.#notYetCount = 0;
  }

  #take(item: KeyedItem, key: string): 'taken' | 'not yet' | 'later' {
    const entry = this.l.planner.readEarly(item, key);
    if (typeof entry === 'string') return entry;
    // (a remembered record that leaves the window is counted unchanged: no job, nothing planned against the paging)
    if (this.l.planner.push(entry)) throw new Error(`record ${key} was planned while its chatbot was still paged`);
    return 'taken';
  }

  /** the key's records wait for the plain path from here on: those queued before these first */
  #toLater(key: string, items: readonly KeyedItem[]): void {
    this.#later.add(key);
    const queue = this.#notYet.get(key);
    if (queue) {
      this.#notYet.delete(key);
      this.#notYetCount -= queue.length;
      this.early.held.push(...queue);
    }
    this.early.held.push(...items);
  }
}
