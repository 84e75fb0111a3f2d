// Key → value pairs a run collects for its commit (state.ts): the fingerprints, stamps and unlisted
// fields of every listing written or found in step. Two columns, not a [key, value] array per pair:
// a first sync of a million listings collects three million pairs, and a pair costs about 70 B of
// heap beside its strings (70 MB a million, node 20, heapUsed after a collection), its two columns'
// slots 16 B. The store takes them as the pairs they are (KvStore: an iterable of [key, value]).
export class Entries implements Iterable<[string, string]> {
  readonly #keys: string[] = [];
  readonly #values: string[] = [];

  static of(pairs: Iterable<readonly [string, string]>): Entries {
    const out = new Entries();
    for (const [k, v] of pairs) out.push(k, v);
    return out;
  }

  push(key: string, value: string): void {
    this.#keys.push(key);
    this.#values.push(value);
  }

  get length(): number {
    return this.#keys.length;
  }

  keys(): readonly string[] {
    return this.#keys;
  }

  /** these pairs, then `other`'s, as new columns */
  concat(other: Entries): Entries {
    const out = new Entries();
    for (const from of [this, other]) {
      for (let i = 0; i < from.length; i++) out.push(from.#keys[i]!, from.#values[i]!);
    }
    return out;
  }

  *[Symbol.iterator](): Iterator<[string, string]> {
    for (let i = 0; i < this.#keys.length; i++) yield [this.#keys[i]!, this.#values[i]!];
  }
}
