// A lane's seal: what a clean run's outcome rested on, stored by a run that left every listing of its
// feed in step (found so, or written) with its stamp (record-stamp.ts). A later run that finds each
// part as it was would find every record in step by its stamp, record for record: the same bytes (so
// the same records, in the same order), mapped by the same code and config (the stamp seed, the
// feed's config, the sync's and readers' code), against the same list (each key's comparison hashes:
// listDigest; the written ones as the writes left them), paged whole, with the fingerprints and stamps
// stored as that run committed them (stateDigest: a namespace put back from an older copy would have
// the plain path map its records again and write what its fingerprints no longer vouch for), and no
// grace mark, sold window or repeated key stored (run/feed-seal.ts checks them). So it reads no
// record: each of the chatbot's listings is counted unchanged by the seal. Any commit of the lane
// that does not store a seal deletes the stored one. What a run's result depends on beyond these
// keeps a seal from being stored: a clock (sold windows, grace periods; a mapping that reads the
// clock has no stamps), records rejected, skipped or repeated, other feeds of the chatbot.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FileIdentity } from '../../feeds/source/file-identity.js';

/** (2: the stored state's digest) */
const SEAL_VERSION = 2;

const Seal = z.object({
  v: z.literal(SEAL_VERSION),
  /** the sync's and readers' code (code-identity.ts) */
  code: z.string(),
  /** the sha256 of the feed's config as resolved */
  feed: z.string(),
  /** the lane's stamp seed (record-stamp.ts stampSeed) */
  seed: z.string(),
  file: z.object({ size: z.number().int().nonnegative(), sha256: z.string() }),
  /** the chatbot's list as the run left it (listDigest) */
  list: z.string(),
  /** its listings: the feed's records, each valid and in step */
  listings: z.number().int().nonnegative(),
  /** the lane's fingerprints and stamps as stored once the run was committed (stateDigest) */
  state: z.string(),
});
export type Seal = z.infer<typeof Seal>;

/** What a seal holds but the list and the stored state: known before the chatbot is paged to its end. */
export type SealBefore = Omit<Seal, 'list' | 'listings' | 'state'>;

export function sealBefore(parts: Omit<SealBefore, 'v' | 'file'> & { file: FileIdentity }): SealBefore {
  return { v: SEAL_VERSION, ...parts, file: { size: parts.file.size, sha256: parts.file.sha256 } };
}

/** A stored seal, or none when there is none or it is of another shape (another version's: it seals nothing). */
export function readSeal(text: string | undefined): Seal | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = Seal.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // (not JSON: as of another shape)
  }
}

export function sealText(seal: Seal): string {
  return JSON.stringify(seal);
}

/** Which part of the stored seal differs from what the run found (undefined: none); the list's parts left out when not known yet. */
export function sealDiffers(
  stored: Seal,
  now: SealBefore & { list?: string; listings?: number; state?: string },
): string | undefined {
  const parts: Array<[string, unknown, unknown]> = [
    ['code', stored.code, now.code],
    ['feed config', stored.feed, now.feed],
    ['mapping', stored.seed, now.seed],
    ['file', `${stored.file.size}:${stored.file.sha256}`, `${now.file.size}:${now.file.sha256}`],
  ];
  if (now.list !== undefined) parts.push(["chatbot's listings", stored.list, now.list]);
  if (now.listings !== undefined) parts.push(['listing count', stored.listings, now.listings]);
  if (now.state !== undefined) parts.push(['stored state', stored.state, now.state]);
  return parts.find(([, a, b]) => a !== b)?.[0];
}

/**
 * The sha256 of a chatbot's list as a seal takes it: each key (`keys`, in sorted order) with its
 * copies' comparison hashes (sorted), and how many listings have no key. The listings' IDs and the
 * list's order are left out: a copy deleted and made again the same, or a list served in another
 * order, is the same to a run's outcome. A key's copies are asked one key at a time (a million
 * listings are not held twice), by the key and its place in `keys`.
 */
export function listDigest(
  keys: readonly string[],
  hashesOf: (key: string, at: number) => readonly Uint8Array[],
  unkeyed: number,
): string {
  const copies = new Uint32Array(keys.length);
  let hashes: Buffer = Buffer.allocUnsafe(keys.length * HASH_BYTES);
  let at = 0;
  for (let k = 0; k < keys.length; k++) {
    const its = hashesOf(keys[k]!, k);
    copies[k] = its.length;
    if (at + its.length * HASH_BYTES > hashes.length) hashes = grown(hashes, at + its.length * HASH_BYTES);
    for (const h of its.length === 1 ? its : [...its].sort(Buffer.compare)) {
      hashes.set(h, at);
      at += h.byteLength;
    }
  }
  return createHash('sha256')
    .update(JSON.stringify([unkeyed, keys]))
    .update(copies)
    .update(hashes.subarray(0, at))
    .digest('base64url');
}

/**
 * The digest of a lane's stored fingerprints and stamps: what the plain path's outcome rests on of
 * the stored state (a record is in step by its stamp only against the fingerprint stored beside it),
 * so a namespace put back from an older copy, or cut, is told from the one a seal was stored with.
 * Each entry (namespace, key, value) is hashed on its own and the hashes are summed, so the digest
 * is the same in whatever order a store gives its entries, and is taken by iterating each map once:
 * a sha256 over each key's entries in the list's order cost a 1M-listing lane 1-1.4 s of CPU (the
 * lookups and laying out the bytes; 2 cores at load 6), this about a tenth of it. The entry hash
 * is not a cryptographic one: it tells apart copies of the state, it is not made against someone
 * forging one (who could write a seal as well).
 */
export function stateDigest(fingerprints: ReadonlyMap<string, string>, stamps: ReadonlyMap<string, string>): string {
  const sum = stateSum();
  fingerprints.forEach((value, key) => sum.add(1, key, value));
  stamps.forEach((value, key) => sum.add(2, key, value));
  return sum.digest(fingerprints.size, stamps.size);
}

/**
 * stateDigest taken a slice of entries at a time, `pause` between slices (the event loop let go), so
 * it runs in the gaps of the chatbot's paging rather than after it (30k listings: 40-50 ms after the
 * paging of a 450 ms sealed rerun). The same digest, by test; undefined when `pause` answers false
 * (the digest no longer wanted: the maps may be let go).
 */
export async function stateDigestSliced(
  fingerprints: ReadonlyMap<string, string>,
  stamps: ReadonlyMap<string, string>,
  pause: () => Promise<boolean>,
): Promise<string | undefined> {
  const sum = stateSum();
  for (const [ns, map] of [
    [1, fingerprints],
    [2, stamps],
  ] as const) {
    let n = 0;
    for (const [key, value] of map) {
      sum.add(ns, key, value);
      if (++n % DIGEST_SLICE === 0 && !(await pause())) return undefined;
    }
  }
  return sum.digest(fingerprints.size, stamps.size);
}

/** entries a slice of stateDigestSliced: about 1.5 ms of CPU here, short beside a page's answer */
const DIGEST_SLICE = 2000;

/** stateDigest's sums: two 32-bit hashes of each entry, each summed and xored over the entries (128 bits, in no order) */
function stateSum() {
  const sums = new Uint32Array(4);
  const pair = new Uint32Array(2);
  return {
    add(ns: number, key: string, value: string): void {
      entryHashes(ns, key, value, pair);
      sums[0] = sums[0]! + pair[0]!;
      sums[1] = sums[1]! + pair[1]!;
      sums[2] = sums[2]! ^ pair[0]!;
      sums[3] = sums[3]! ^ pair[1]!;
    },
    digest(fingerprints: number, stamps: number): string {
      return createHash('sha256')
        .update(JSON.stringify([fingerprints, stamps]))
        .update(sums)
        .digest('base64url');
    },
  };
}

/**
 * Two 32-bit hashes of an entry into `out` (FNV-1a's step over its UTF-16 units with two primes, the
 * key's length between key and value, murmur3's finish), its namespace `ns` their seed.
 */
function entryHashes(ns: number, key: string, value: string, out: Uint32Array): void {
  let h = Math.imul(0x811c9dc5 ^ ns, 0x01000193);
  let g = Math.imul(0x9e3779b9 ^ ns, 0x5bd1e995);
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h = Math.imul(h ^ c, 0x01000193);
    g = Math.imul(g ^ c, 0x5bd1e995);
  }
  h = Math.imul(h ^ key.length, 0x01000193);
  g = Math.imul(g ^ key.length, 0x5bd1e995);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    h = Math.imul(h ^ c, 0x01000193);
    g = Math.imul(g ^ c, 0x5bd1e995);
  }
  out[0] = finish(h);
  out[1] = finish(g);
}

/** murmur3's 32-bit finish: every bit of the input moves every bit of the output */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** a comparison hash's bytes (sha1) */
const HASH_BYTES = 20;

function grown(from: Buffer, least: number): Buffer {
  const to = Buffer.allocUnsafe(Math.max(least, from.length * 2));
  from.copy(to);
  return to;
}
