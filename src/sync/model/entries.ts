// Key → value pairs a run collects for its commit (state.ts): the fingerprints, stamps and unlisted
// fields of every listing written or found in step. Columns, not a [key, value] array per pair: a
// first sync of a million listings collects three million pairs, and a pair costs about 70 B of
// heap beside its strings (70 MB a million, node 20, heapUsed after a collection), its columns'
// slots 16 B. The store takes them as the pairs they are (KvStore: an iterable of [key, value]).
// With `digests`, a value that is the base64url of a sha1 in its one encoding (a stamp, or a
// fingerprint behind its "2.": record-stamp.ts, fingerprint.ts) is kept as its 20 bytes, and
// written out again as that same string when the pairs are read: a million stamps and a million
// fingerprints (two Entries, their keys' strings aside) held 223 MB of heap as strings, 62 MB so
// (node 20, heap and array buffers after a collection). Any other value is kept as it is.
import {
  FINGERPRINT_BYTES as DIGEST_BYTES,
  FINGERPRINT_PREFIX,
  readFingerprintV2,
  readSha1Base64url,
} from '../../listing/fingerprint.js';

/** the tag before a packed value's bytes: none (the value is in `#others`), or its prefix */
const OTHER = 0;
const BARE = 1;
const V2 = 2;

export class Entries implements Iterable<[string, string]> {
  readonly #keys: string[] = [];
  /** with digests: each pair's tag and 20 bytes; else undefined */
  #packed: Buffer | undefined;
  /** values not packed, by pair (all of them without digests) */
  readonly #others: Array<string | undefined> = [];

  constructor(opts: { digests?: boolean } = {}) {
    if (opts.digests) this.#packed = Buffer.alloc(1024 * (1 + DIGEST_BYTES));
  }

  static of(pairs: Iterable<readonly [string, string]>, opts: { digests?: boolean } = {}): Entries {
    const out = new Entries(opts);
    for (const [k, v] of pairs) out.push(k, v);
    return out;
  }

  push(key: string, value: string): void {
    const i = this.#keys.push(key) - 1;
    if (!this.#packed) {
      this.#others[i] = value;
      return;
    }
    const at = i * (1 + DIGEST_BYTES);
    if (at + 1 + DIGEST_BYTES > this.#packed.length) this.#packed = grown(this.#packed);
    if (readFingerprintV2(value, this.#packed, at + 1)) this.#packed[at] = V2;
    else if (readSha1Base64url(value, this.#packed, at + 1)) this.#packed[at] = BARE;
    else {
      this.#packed[at] = OTHER;
      this.#others[i] = value;
    }
  }

  get length(): number {
    return this.#keys.length;
  }

  keys(): readonly string[] {
    return this.#keys;
  }

  /** pair i's value, as it was pushed */
  value(i: number): string {
    const packed = this.#packed;
    const at = i * (1 + DIGEST_BYTES);
    if (!packed || packed[at] === OTHER) return this.#others[i]!;
    const digest = packed.toString('base64url', at + 1, at + 1 + DIGEST_BYTES);
    return packed[at] === V2 ? FINGERPRINT_PREFIX + digest : digest;
  }

  /** these pairs, then `other`'s: one of them when the other has none (a first sync's million written), else new columns packed as these are */
  concat(other: Entries): Entries {
    if (other.length === 0) return this;
    if (this.length === 0) return other;
    const out = new Entries({ digests: this.#packed !== undefined });
    for (const from of [this, other]) for (let i = 0; i < from.length; i++) out.push(from.#keys[i]!, from.value(i));
    return out;
  }

  *[Symbol.iterator](): Iterator<[string, string]> {
    for (let i = 0; i < this.#keys.length; i++) yield [this.#keys[i]!, this.value(i)];
  }
}

function grown(b: Buffer): Buffer {
  const next = Buffer.alloc(b.length * 2);
  b.copy(next);
  return next;
}
