// A namespace of the state file as the ReadonlyMap a run reads (KvStore.getAll), answered from its
// bytes through its index (namespace-index.ts), never parsed into an object: a rerun of a million
// listings reads a feed's fingerprints and stamps whole, and JSON.parse's objects of them held
// ~130 B an entry (~260 MB at a million) against the index's ~16 B beside the bytes the store
// keeps anyway. Measured on a 1M-entry `stamp:` namespace (this machine, loaded): index 1.9 s to
// build and 2.8–3.4 s for a million gets, against 12.7 s to parse and 0.4–0.5 s for the gets.
// A key given twice answers its last value (JSON.parse's rule); iteration is in the order written.
import { decodeString, memberKey, memberValue } from './json-namespaces.js';
import type { NamespaceIndex } from './namespace-index.js';

export class NamespaceEntries implements ReadonlyMap<string, string> {
  constructor(
    /** the namespace's bytes, from '{' to '}', valid as the store read them */
    readonly bytes: Buffer,
    readonly index: NamespaceIndex,
  ) {}

  get(key: string): string | undefined {
    return this.index.value(this.bytes, key);
  }

  has(key: string): boolean {
    return this.index.find(this.bytes, key) >= 0;
  }

  get size(): number {
    return this.index.size;
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    // (a plain loop, no generator: a rerun walks a feed's fingerprints with it)
    this.#each((key, value) => fn.call(thisArg, value, key, this));
  }

  *entries(): MapIterator<[string, string]> {
    const out: Array<[string, string]> = [];
    // in slices, so a namespace of a million is never a million pairs at once
    for (let from = 0; from < this.index.count; from += SLICE) {
      out.length = 0;
      this.#each((key, value) => out.push([key, value]), from, from + SLICE);
      yield* out;
    }
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  /** each member in [from, to) that no later member of the same key supersedes, in the order written */
  #each(visit: (key: string, value: string) => void, from = 0, to = this.index.count): void {
    const { starts, superseded } = this.index;
    let s = lowerBound(superseded, from);
    for (let m = from; m < Math.min(to, starts.length); m++) {
      if (superseded[s] === m) {
        s++;
        continue;
      }
      const at = starts[m]!;
      const { start, end } = memberValue(this.bytes, at);
      visit(memberKey(this.bytes, at), decodeString(this.bytes, start, end));
    }
  }
}

const SLICE = 4096;

/** the first place in ascending `sorted` whose number is at least n */
function lowerBound(sorted: readonly number[], n: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
