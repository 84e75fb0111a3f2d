// Record stamps: how a rerun tells, without mapping a record, that nothing about its listing changed.
//
// A stamp is the sha1 of what the decision "unchanged" rests on: the mapping's identity (the seed),
// the record as read (its text: the reader's FeedItem.text, else its data as JSON), the comparison
// hash the chatbot's copy had and the fingerprint stored for the key. After a run has left a
// listing in step (written it, or found it unchanged), the sync stores stamp(seed, text, hash of
// what it wrote, fingerprint of what it wrote). On the next run, a record whose stamp, taken with
// the remote copy's hash as paged now and the fingerprint stored now, equals the stored one is the
// same record, mapped the same way, against a copy that still holds what was written: the full rule
// (plan.ts) would find it unchanged, so it is not mapped, validated or hashed. Anything else (a
// changed record, a copy edited behind our back, a changed mapping, config or feedsync version)
// gives another stamp, and the record takes the full path. A stamp never decides a write; it only
// skips work whose outcome it proves.
//
// The mapping's identity covers what mapping a record depends on besides the record: the mapping
// config and the feed's display rules (as resolved), the chatbot and key field, the feed's `ignore`, and the code that maps, validates and
// hashes (the bytes of src/mapping and src/listing as installed), so an upgrade that changes how a
// record maps re-maps every record once. A mapping that reads the clock (days-since) maps a record
// differently from one run to the next: no stamps then. (A sold window that ends is the clock's
// too: lane-plan.ts maps a record whose stored window has ended, whatever its stamp.)
//
// One hash a record: the stamp's input is laid out in a reused buffer, never as strings joined.
import { hash } from 'node:crypto';
import { FINGERPRINT_BYTES, fingerprintBytes, writeFingerprintBytesV2 } from '../../listing/fingerprint.js';
import { codeIdentity } from '../util/code-identity.js';
import { compileMapping, type CompiledMapping } from '../../mapping/index.js';
import type { Lane } from '../model/lane.js';

export interface StampSeedInput {
  mapping: unknown;
  chatbot: string;
  keyBy: string;
  ignore: Iterable<string>;
  /** the media mirror's identity (bucket, public URL), when the feed's photos are mirrored: Images depend on it */
  media?: string;
}

/**
 * Bump when what a stamp covers changes shape (2: the fingerprint as its bytes, fingerprintBytes;
 * 3: the seed and the record's text in the stamp itself, no digest between).
 */
const STAMP_VERSION = 3;

/** The mapping's identity, the start of every stamp of a feed's run (27 base64url characters). */
export function stampSeed(input: StampSeedInput): string {
  const config = JSON.stringify([
    STAMP_VERSION,
    input.mapping,
    input.chatbot,
    input.keyBy,
    [...input.ignore].sort(),
    ...(input.media === undefined ? [] : [input.media]),
  ]);
  return hash('sha1', codeIdentity(['mapping', 'listing']) + config, 'base64url');
}

/** The record as read, as the stamp takes it: the reader's text, else its data as JSON (tagged apart from any reader's form). */
export function recordText(item: { data: Record<string, unknown>; text?: string }): string {
  return item.text ?? `{${JSON.stringify(item.data)}`;
}

/**
 * The stamp of a record (its text, recordText) against a copy's comparison hash and a stored
 * fingerprint: as stored, or as its bytes (fingerprintBytes), the same stamp either way. The input
 * is the seed, the hash, the fingerprint's length and bytes, then the text: each part is read back
 * from the front alone, so no two inputs run together.
 */
export function stampOf(
  seed: string,
  text: string,
  comparedHash: Uint8Array,
  fingerprint: string | Uint8Array,
): string {
  // a UTF-16 code unit is at most 3 bytes of UTF-8 (a fingerprint as bytes: a tag, then at most that)
  const fpMost = typeof fingerprint === 'string' ? 1 + 3 * fingerprint.length : fingerprint.byteLength;
  const most = seed.length + comparedHash.byteLength + 4 + fpMost + 3 * text.length;
  const input = most <= scratch.byteLength ? scratch : Buffer.allocUnsafe(most);
  let at = input.write(seed, 0, 'latin1');
  input.set(comparedHash, at);
  at += comparedHash.byteLength;
  const fpBytes = putFingerprint(fingerprint, input, at + 4);
  input.writeUInt32BE(fpBytes, at);
  at += 4 + fpBytes;
  at += input.write(text, at, 'utf8');
  return hash('sha1', input.subarray(0, at), 'base64url');
}

/** fingerprintBytes(fp) written at input[at...], a version-2 one as stored straight in (no buffer of its own a record); how many bytes */
function putFingerprint(fp: string | Uint8Array, input: Buffer, at: number): number {
  if (typeof fp === 'string' && writeFingerprintBytesV2(fp, input, at)) return V2_BYTES;
  const bytes = typeof fp === 'string' ? fingerprintBytes(fp) : fp;
  input.set(bytes, at);
  return bytes.byteLength;
}
/** a version-2 fingerprint's bytes: its tag and its sha1 */
const V2_BYTES = 1 + FINGERPRINT_BYTES;

/** a stamp's input, reused (a rerun takes 100k stamps; hash() copies what it reads); a longer record gets its own */
const scratch = Buffer.allocUnsafe(16 * 1024);

/**
 * Whether the lane's records get stamps: not when a compared field reads the clock (its value changes
 * every run). `compiled`: the feed's mapping as its run compiled it (FeedContext.compiled), else compiled here. A source's related records joined by the clock do not stop them: the reader hands on a
 * record with only those shown at the run's clock, so one that ended makes it another record, and a
 * listing whose stored one ended is fetched again although its record did not change (feeds/reso/).
 */
export function stamped(
  lane: Pick<Lane, 'feed'>,
  compiled: Pick<CompiledMapping, 'clockFields'> = compileMapping(lane.feed.mapping),
): boolean {
  const ignore = new Set(lane.feed.ignore);
  return compiled.clockFields.every((f) => ignore.has(f));
}
