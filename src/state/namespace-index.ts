// Where each key of a namespace lies in its bytes, without parsing it: a rerun asks a namespace of a
// million entries for a few thousand keys (`unlisted:`), and a write that changes it must find the
// members it replaces. JSON.parse's object costs ~100 B an entry; this is ~16 B an entry (typed
// arrays: each member's offset, its key's hash, and an open-addressed table of member numbers),
// and a key is decoded again from the bytes only when its hash matches.
import { memberKey, memberValue, walkMembers, decodeString } from './json-namespaces.js';

const EMPTY = -1;

export class NamespaceIndex {
  private constructor(
    /** each member's offset (its key's opening quote) in the namespace's bytes, in the order written */
    readonly starts: Uint32Array,
    readonly hashes: Int32Array,
    /** open addressing, at most half full: a member number, or EMPTY */
    readonly slots: Int32Array,
    /** members whose key is given again later (JSON.parse takes the last), ascending */
    readonly superseded: readonly number[],
  ) {}

  /**
   * The index of a namespace's bytes (its range, from '{' to '}', valid as read). Offsets are into
   * those bytes, so the index holds for the same bytes wherever a later file puts them.
   */
  static of(bytes: Buffer): NamespaceIndex {
    const starts = new Growing(Uint32Array);
    const hashes = new Growing(Int32Array);
    walkMembers(bytes, (memberStart, key) => {
      starts.push(memberStart);
      hashes.push(hashOf(key));
    });
    const count = starts.length;
    const index = new NamespaceIndex(starts.done(), hashes.done(), new Int32Array(tableSize(count)).fill(EMPTY), []);
    const superseded: number[] = [];
    for (let m = 0; m < count; m++) {
      const earlier = index.#insert(bytes, m);
      if (earlier !== EMPTY) superseded.push(earlier);
    }
    superseded.sort((a, b) => a - b);
    return new NamespaceIndex(index.starts, index.hashes, index.slots, superseded);
  }

  /** members in the bytes, a key given twice counted twice */
  get count(): number {
    return this.starts.length;
  }

  /** distinct keys */
  get size(): number {
    return this.starts.length - this.superseded.length;
  }

  /** The member that holds `key` (its last occurrence), or -1. */
  find(bytes: Buffer, key: string): number {
    const hash = hashOf(key);
    const mask = this.slots.length - 1;
    for (let s = slotOf(hash, mask); ; s = (s + 1) & mask) {
      const m = this.slots[s]!;
      if (m === EMPTY) return -1;
      if (this.hashes[m] === hash && memberKey(bytes, this.starts[m]!) === key) return m;
    }
  }

  /** The key's value, as JSON.parse would give it; undefined when the namespace has none. */
  value(bytes: Buffer, key: string): string | undefined {
    const m = this.find(bytes, key);
    if (m < 0) return undefined;
    const { start, end } = memberValue(bytes, this.starts[m]!);
    return decodeString(bytes, start, end);
  }

  /** Offset just past member m's value. */
  end(bytes: Buffer, m: number): number {
    return memberValue(bytes, this.starts[m]!).end;
  }

  /** Puts member m in the table: the member of the same key it replaces, or EMPTY. */
  #insert(bytes: Buffer, m: number): number {
    const hash = this.hashes[m]!;
    const mask = this.slots.length - 1;
    let key: string | undefined;
    for (let s = slotOf(hash, mask); ; s = (s + 1) & mask) {
      const other = this.slots[s]!;
      if (other === EMPTY) {
        this.slots[s] = m;
        return EMPTY;
      }
      if (this.hashes[other] !== hash) continue;
      key ??= memberKey(bytes, this.starts[m]!);
      if (memberKey(bytes, this.starts[other]!) === key) {
        this.slots[s] = m;
        return other;
      }
    }
  }
}

/** A power of two at least twice the count (linear probing stays short at half full). */
function tableSize(count: number): number {
  let size = 4;
  while (size < count * 2) size *= 2;
  return size;
}

/** FNV-1a over the key's UTF-16 units (what a key is to JSON.parse and a Map). */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** The table's low bits after a final mix (FNV's low bits alone cluster on keys that differ at the end). */
function slotOf(hash: number, mask: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h & mask;
}

type TypedArray = Uint32Array | Int32Array;

/** A typed array filled one number at a time, its size unknown ahead (doubling, trimmed at the end). */
class Growing<T extends TypedArray> {
  #array: T;
  length = 0;
  constructor(readonly make: new (length: number) => T) {
    this.#array = new make(1024);
  }
  push(n: number): void {
    if (this.length === this.#array.length) {
      const bigger = new this.make(this.#array.length * 2);
      bigger.set(this.#array);
      this.#array = bigger;
    }
    this.#array[this.length++] = n;
  }
  done(): T {
    const exact = new this.make(this.length);
    exact.set(this.#array.subarray(0, this.length));
    return exact;
  }
}
