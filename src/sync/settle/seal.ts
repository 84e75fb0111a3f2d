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
 * listings are not held twice).
 */
export function listDigest(
  keys: readonly string[],
  hashesOf: (key: string) => readonly Uint8Array[],
  unkeyed: number,
): string {
  const copies = new Uint32Array(keys.length);
  let hashes: Buffer = Buffer.allocUnsafe(keys.length * HASH_BYTES);
  let at = 0;
  for (let k = 0; k < keys.length; k++) {
    const its = hashesOf(keys[k]!);
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
 * The sha256 of a lane's stored fingerprints and stamps, each key's (`keys`, sorted: the list's, as
 * listDigest takes them) in turn; undefined unless the two hold an entry for each key and no other.
 * What the plain path's outcome rests on of the stored state: a record is in step by its stamp only
 * against the fingerprint stored beside it.
 */
export function stateDigest(
  keys: readonly string[],
  fingerprints: ReadonlyMap<string, string>,
  stamps: ReadonlyMap<string, string>,
): string | undefined {
  if (fingerprints.size !== keys.length || stamps.size !== keys.length) return undefined;
  const hash = createHash('sha256');
  // (each part is JSON: keys, fingerprints and stamps cannot run together)
  const parts: string[] = [];
  for (const key of keys) {
    const fingerprint = fingerprints.get(key);
    const stamp = stamps.get(key);
    if (fingerprint === undefined || stamp === undefined) return undefined;
    parts.push(JSON.stringify([key, fingerprint, stamp]));
    if (parts.length === STATE_BATCH) hash.update(parts.splice(0).join('\n'));
  }
  return hash.update(parts.join('\n')).digest('base64url');
}

/** keys hashed at once by stateDigest (one update per key costs more than the hashing) */
const STATE_BATCH = 4096;

/** a comparison hash's bytes (sha1) */
const HASH_BYTES = 20;

function grown(from: Buffer, least: number): Buffer {
  const to = Buffer.allocUnsafe(Math.max(least, from.length * 2));
  from.copy(to);
  return to;
}
