// A namespace of the state store as the ReadonlyMap a run reads (KvStore.getAll): answered from the
// LMDB file, never copied into an object. A rerun reads a feed's fingerprints and stamps whole (a
// million each at 1M listings): a Map of them held about 150 MB of heap a namespace and took as long
// to build as the run's reads of it take (docs/design.md, "state store"); the file's pages are
// mapped into memory, shared and dropped by the kernel as it needs. Each read answers what is stored
// when it is made (a lane's own commit included); an iteration walks one snapshot.
import type { Database } from 'lmdb';
import { entryOf, rangeOf, slotOf, valueOf } from './store-keys.js';

export class StoredEntries implements ReadonlyMap<string, string> {
  readonly #db: Database<string, string>;
  readonly #range: { start: string; end: string };
  readonly #count: () => number;

  constructor(db: Database<string, string>, ns: string, count: () => number) {
    this.#db = db;
    this.#range = rangeOf(ns);
    this.#count = count;
  }

  get(key: string): string | undefined {
    const slot = slotOf(this.#range.start, key);
    const stored = this.#db.get(slot);
    return stored === undefined ? undefined : valueOf(slot, this.#range.start, stored);
  }

  has(key: string): boolean {
    return this.#db.doesExist(slotOf(this.#range.start, key));
  }

  /** counted in the file at each ask (LMDB's walk of the range's keys, about 26 ns a key): ask emptiness of a first entry */
  get size(): number {
    return this.#count();
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.#walk()) fn.call(thisArg, value, key, this);
  }

  *entries(): MapIterator<[string, string]> {
    yield* this.#walk();
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.#walk()) yield key;
  }

  *values(): MapIterator<string> {
    for (const [, value] of this.#walk()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  /** every entry of the namespace, in the order of their slots (one snapshot of the file) */
  *#walk(): Generator<[string, string]> {
    const { start } = this.#range;
    for (const { key, value } of this.#db.getRange(this.#range)) yield entryOf(key, start, value);
  }
}
