// A fingerprint of everything a listing write sends, so that a change to a field the list endpoint
// does not return (Location, AreaUnit) is still noticed on the next run, and a comparison hash of
// the listed fields, so a remote listing is compared without keeping its canonical form.
//
// Both are built from one serialization per listing (listingHashes): each field's canonical value
// (canonical.ts: whitespace, numbers and empty values normalized) as JSON, once, in the spec's
// order. The compared fields make the comparison hash's JSON; the fingerprint is the sha1 of that
// JSON followed by the unlisted fields, so cosmetic differences (2.5 vs 2.50, "a  b" vs "a b") do
// not count. Fields the feed ignores (config `ignore`) are left out of both.
//
// Fingerprints carry their version ("2." + sha1): one stored by an older version is checked once
// with the function of its version (storedFingerprintStatus) and, when the listing is the same,
// re-recorded in the current version: a change of format never rewrites every listing.
import { hash } from 'node:crypto';
import {
  ALL_FIELDS,
  canonicalFromListing,
  canonicalValue,
  listItemReader,
  COMPARED_FIELDS,
  FIELD_KINDS,
  UNLISTED_FIELDS,
  type CanonicalListing,
  type CanonicalValue,
  type FieldChange,
} from './canonical.js';
import type { ListingCreate, ListingField, ListItem } from './schema.js';

const NO_FIELDS: ReadonlySet<string> = new Set();
export const FINGERPRINT_PREFIX = '2.';
// the kept form names the fields present by a 32-bit mask (comparedJson)
if (COMPARED_FIELDS.length > 32) throw new Error("more than 32 compared fields: widen the kept form's mask");
/** per compared field: its name, whether it is a coordinate, its kind */
const COMPARED_READS = COMPARED_FIELDS.map((f) => [f, FIELD_KINDS[f] === 'coordinate', FIELD_KINDS[f]] as const);
const UNLISTED_JSON = UNLISTED_FIELDS.map((f) => [f, JSON.stringify(f), FIELD_KINDS[f]] as const);

export interface ListingHashes {
  /** of every field the write sends (versioned) */
  fingerprint: string;
  /** sha1 of `compared`: equal to the remote copy's comparison hash (comparedOf) when no listed field differs */
  hash: Buffer;
  /** the compared JSON (comparedJson): what comparedChanges reads when the hashes differ */
  compared: string;
  /** with `keep`: keptOfListing(listing), built in the same pass (a create's change log entry keeps it) */
  kept?: string;
}

/**
 * The fingerprint and the comparison hash of a listing, from one serialization of it; with `keep`,
 * also its kept form (keptOfListing, every listed field whether ignored or not), from the same
 * canonical values: a create needs all three, and each field is made canonical and serialized once.
 */
export function listingHashes(
  listing: ListingCreate,
  ignore: ReadonlySet<string> = NO_FIELDS,
  keep = false,
): ListingHashes {
  const out = comparedJson((f, kind) => canonicalValue(kind, listing[f]), ignore, keep ? 'every' : 'none');
  const compared = out.json;
  const skip = ignore.size > 0;
  let unlisted = '';
  for (const [f, quoted, kind] of UNLISTED_JSON) {
    if (skip && ignore.has(f)) continue;
    const v = canonicalValue(kind, listing[f]);
    if (v !== undefined) unlisted += ',' + quoted + ',' + JSON.stringify(v);
  }
  const hashes: ListingHashes = {
    fingerprint: FINGERPRINT_PREFIX + hash('sha1', compared + unlisted, 'base64url'),
    hash: sha1Bytes(compared),
    compared,
  };
  if (out.kept !== undefined) hashes.kept = out.kept;
  return hashes;
}

/**
 * The sha1 of `text` (as UTF-8) as bytes: hash(..., 'buffer'), without the Buffer crypto makes for
 * its answer (a new backing store each: about twice the digest's own cost on Node 24, 3.0 against
 * 1.9 µs a compared JSON); the digest as latin1 ('binary'), one character a byte, written into a Buffer of
 * Node's pool. test/listing/fast-paths.test.ts holds it to hash(..., 'buffer').
 */
export function sha1Bytes(text: string): Buffer {
  const out = Buffer.allocUnsafe(FINGERPRINT_BYTES);
  out.write(hash('sha1', text, 'binary'), 0, FINGERPRINT_BYTES, 'latin1');
  return out;
}

/** sha1 bytes in a version-2 fingerprint */
export const FINGERPRINT_BYTES = 20;
const V2_CHARS = FINGERPRINT_PREFIX.length + 27;
const V2_TAG = 2;
const OTHER_TAG = 0xff;

/**
 * A stored fingerprint as bytes, one to one: a version-2 one as a tag and its 20 sha1 bytes
 * (writeFingerprintBytesV2), any other as another tag and its UTF-8.
 */
export function fingerprintBytes(fp: string): Uint8Array {
  const out = Buffer.allocUnsafe(1 + FINGERPRINT_BYTES);
  if (writeFingerprintBytesV2(fp, out, 0)) return out;
  const utf8 = Buffer.from(fp, 'utf8');
  const other = Buffer.allocUnsafe(1 + utf8.byteLength);
  other[0] = OTHER_TAG;
  other.set(utf8, 1);
  return other;
}

/**
 * Whether `fp` is a version-2 fingerprint in its one encoding; if so fingerprintBytes(fp), its tag
 * and its 20 bytes, is written to out[at...] (the remote index keeps its fingerprints so).
 */
export function writeFingerprintBytesV2(fp: string, out: Uint8Array, at: number): boolean {
  if (!readFingerprintV2(fp, out, at + 1)) return false;
  out[at] = V2_TAG;
  return true;
}

/**
 * Whether `fp` is a version-2 fingerprint in its one encoding ("2." and 27 base64url characters
 * that decode to 20 bytes and encode back to it); if so its 20 bytes are written to out[at...].
 */
export function readFingerprintV2(fp: string, out: Uint8Array, at: number): boolean {
  return (
    fp.length === V2_CHARS && fp.startsWith(FINGERPRINT_PREFIX) && readSha1At(fp, FINGERPRINT_PREFIX.length, out, at)
  );
}

/**
 * Whether `text` is the base64url of 20 bytes in its one encoding (a fingerprint past its "2.", a
 * record stamp); if so the bytes are written to out[at...].
 */
export function readSha1Base64url(text: string, out: Uint8Array, at: number): boolean {
  return text.length === SHA1_CHARS && readSha1At(text, 0, out, at);
}

/** base64url characters of 20 bytes */
const SHA1_CHARS = 27;

/**
 * Whether the 27 characters of `text` from `from` on (the caller checks they end it) are the one
 * encoding of 20 bytes (26 base64url characters, then one whose two low bits, past the 160th, are
 * zero); if so they are decoded to out[at...], which is written only then and only where they fit.
 * (Decoded here, not by a regex and Buffer.write: a rerun decodes a stored fingerprint into each
 * record's stamp, and those two took 40% of what the stamp's sha1 takes; 100k decodes 39 -> 17 ms.)
 */
function readSha1At(text: string, from: number, out: Uint8Array, at: number): boolean {
  const end = from + SHA1_CHARS;
  if (at + FINGERPRINT_BYTES > out.length) return false;
  for (let i = from; i < end; i++) if (sextet(text.charCodeAt(i)) < 0) return false;
  if ((sextet(text.charCodeAt(end - 1)) & 3) !== 0) return false;
  // six groups of four characters (three bytes each), then three characters (two bytes and two zero bits)
  let i = from;
  for (let g = 0; g < 6; g++, i += 4) {
    const n =
      (sextet(text.charCodeAt(i)) << 18) |
      (sextet(text.charCodeAt(i + 1)) << 12) |
      (sextet(text.charCodeAt(i + 2)) << 6) |
      sextet(text.charCodeAt(i + 3));
    out[at++] = n >>> 16;
    out[at++] = (n >>> 8) & 0xff;
    out[at++] = n & 0xff;
  }
  const n = (sextet(text.charCodeAt(i)) << 12) | (sextet(text.charCodeAt(i + 1)) << 6) | sextet(text.charCodeAt(i + 2));
  out[at++] = n >>> 10;
  out[at] = (n >>> 2) & 0xff;
  return true;
}

/** a base64url character's six bits; -1 for any other character */
function sextet(code: number): number {
  return code < 128 ? SEXTETS[code]! : -1;
}
const SEXTETS = (() => {
  const t = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
})();

/** readFingerprintV2's rule as it was first written (the bytes encoded back), kept to test the decoder against */
export function readFingerprintV2Reference(fp: string, out: Uint8Array, at: number): boolean {
  if (fp.length !== V2_CHARS || !fp.startsWith(FINGERPRINT_PREFIX)) return false;
  const view = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  return (
    view.write(fp.slice(FINGERPRINT_PREFIX.length), at, FINGERPRINT_BYTES, 'base64url') === FINGERPRINT_BYTES &&
    FINGERPRINT_PREFIX + view.toString('base64url', at, at + FINGERPRINT_BYTES) === fp
  );
}

export function fingerprintListing(listing: ListingCreate, ignore: ReadonlySet<string> = NO_FIELDS): string {
  return listingHashes(listing, ignore).fingerprint;
}

/**
 * A stored fingerprint against the listing's current one: 'same'; 'differs'; or 'older' when it is
 * of an earlier version and the listing has not changed since (record the current one, write nothing).
 */
export function storedFingerprintStatus(
  stored: string,
  current: string,
  listing: ListingCreate,
  ignore: ReadonlySet<string> = NO_FIELDS,
): 'same' | 'differs' | 'older' {
  if (stored === current) return 'same';
  if (stored.startsWith(FINGERPRINT_PREFIX)) return 'differs';
  // (remove in 0.3.0 with fingerprintV1: then a fingerprint without the prefix simply differs)
  return fingerprintV1(listing, ignore) === stored ? 'older' : 'differs';
}

/**
 * The comparison hash of a canonical listing (`ignore`d fields aside), with the compared JSON it is
 * taken of: equal hashes mean no listed field differs. The sync keeps the hash (20 bytes) instead of
 * each remote listing's canonical form. Numbers are rounded first (coordinates to 1e-6, others to
 * 12 significant digits), so the tolerance of diffCanonical holds here too, bar a value right at a
 * rounding edge (which costs one update, not a wrong result). The one rule of "a listed field
 * differs", dry run or not; listingHashes and comparedOfListItem are its fast paths (held to it by test).
 */
export function comparedOf(
  canonical: CanonicalListing,
  ignore: ReadonlySet<string> = NO_FIELDS,
): { hash: Buffer; compared: string } {
  const compared = comparedJson((f) => canonical[f], ignore).json;
  return { hash: sha1Bytes(compared), compared };
}

/**
 * comparedOf(canonicalFromListItem(item)), without building the canonical object (a remote listing
 * while paging). With `keep`, also the form kept for naming changes later: the values without the
 * field names (a mask says which are present), a value longer than KEPT_CHARS (a description, many
 * images) as its hash only.
 */
export function comparedOfListItem(
  item: ListItem,
  ignore: ReadonlySet<string> = NO_FIELDS,
  keep = false,
): { hash: Buffer; compared: string; kept?: string } {
  const out = comparedJson(listItemReader(item), ignore, keep ? 'compared' : 'none');
  return {
    hash: sha1Bytes(out.json),
    compared: out.json,
    ...(out.kept !== undefined && { kept: out.kept }),
  };
}

/** Longest value (as JSON) a kept compared JSON holds; a longer one is held as { "~": sha1, "n": length }. */
export const KEPT_CHARS = 200;
type Elided = { '~': string; n: number };
const isElided = (v: unknown): v is Elided => typeof v === 'object' && v !== null && !Array.isArray(v) && '~' in v;

/**
 * The fields whose values differ between a feed listing's compared JSON (`now`) and a remote one's
 * (`was`: compared or kept form), old → new.
 * Two JSONs differ exactly when one of their fields does, so this names every field behind a
 * differing hash (values as compared: canonical and rounded).
 */
export function comparedChanges(now: string, was: string): FieldChange[] {
  const a = pairs(now);
  const b = pairs(was);
  const changes: FieldChange[] = [];
  for (const f of COMPARED_FIELDS) {
    const n = a.get(f) as CanonicalValue;
    const o = b.get(f);
    if (isElided(o)) {
      // a long old value was kept as the hash of its JSON: the field is named, its old value is not
      if (n !== undefined && pieceHash(JSON.stringify(n)) === o['~']) continue;
      changes.push({ field: f, old: undefined, new: n, oldNotKept: true });
      continue;
    }
    if (n === o || (n !== undefined && o !== undefined && JSON.stringify(n) === JSON.stringify(o))) continue;
    changes.push({ field: f, old: o as CanonicalValue, new: n });
  }
  return changes;
}

/** The fields of a compared JSON ([name, value, ...]) or of a kept one ([mask, value, ...]). */
function pairs(json: string): Map<ListingField, CanonicalValue | Elided> {
  const flat = JSON.parse(json) as unknown[];
  const out = new Map<ListingField, CanonicalValue | Elided>();
  if (typeof flat[0] === 'number') {
    const mask = flat[0];
    let at = 1;
    for (let i = 0; i < COMPARED_FIELDS.length; i++)
      if (mask & (1 << i)) out.set(COMPARED_FIELDS[i]!, flat[at++] as CanonicalValue | Elided);
    return out;
  }
  for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i] as ListingField, flat[i + 1] as CanonicalValue | Elided);
  return out;
}

const pieceHash = (piece: string) => hash('sha1', piece, 'base64url');

/** One field's value in a compared JSON or a kept one (undefined when unset, or kept as its hash only). */
export function keptField(json: string, field: ListingField): CanonicalValue {
  const v = pairs(json).get(field);
  return isElided(v) ? undefined : v;
}

/**
 * A listing's listed fields in the kept form (nothing ignored; long values as their hash): equal to
 * the kept form of a list item (comparedOfListItem with keep) exactly when the service holds that
 * listing. What the change log keeps of a write (`after`), so a later change on the service is seen
 * and named field by field.
 */
export function keptOfListing(listing: ListingCreate): string {
  return comparedJson((f, kind) => canonicalValue(kind, listing[f]), NO_FIELDS, 'every').kept!;
}

/** The fields whose values differ between two kept (or compared) forms. */
export function keptFieldsDiffer(a: string, b: string): ListingField[] {
  const x = pairs(a);
  const y = pairs(b);
  return COMPARED_FIELDS.filter((f) => JSON.stringify(x.get(f)) !== JSON.stringify(y.get(f)));
}

/**
 * The JSON the comparison hash is taken of: [name, value] of each compared field that has a value.
 * With `kept`, also the kept form (long values as their hash: KEPT_CHARS), built in the same pass:
 * of the compared fields ('compared': `ignore`d ones aside, as the JSON) or of every listed field
 * ('every': `ignore`d ones too, as keptOfListing keeps a write).
 * Each is one JSON.stringify of an array of the values: a flat string made at once, where joining
 * each value's JSON to the text so far made a chain of a hundred string pieces a listing (a third
 * of what a first sync allocated), which the hash then copied flat. JSON.stringify of an array is
 * its members' JSON joined by commas: the same text (test/listing/compared-json.test.ts holds it
 * to the piece-by-piece rule).
 */
function comparedJson(
  value: (f: ListingField, kind: (typeof FIELD_KINDS)[ListingField]) => CanonicalValue,
  ignore: ReadonlySet<string>,
  kept: 'none' | 'compared' | 'every' = 'none',
): { json: string; kept?: string } {
  const skip = ignore.size > 0;
  const flat: CanonicalValue[] = [];
  // the kept form: [mask of the fields present (bit = place in COMPARED_FIELDS), their values in
  // order], a long value as { "~": sha1, "n": length }: no field names (about a third of the bytes)
  const held: Array<CanonicalValue | Elided> | undefined = kept === 'none' ? undefined : [0];
  let mask = 0;
  for (let i = 0; i < COMPARED_READS.length; i++) {
    const [f, coordinate, kind] = COMPARED_READS[i]!;
    const ignored = skip && ignore.has(f);
    if (ignored && kept !== 'every') continue;
    const raw = value(f, kind);
    if (raw === undefined) continue;
    const v = typeof raw === 'number' ? rounded(raw, coordinate) : raw;
    if (!ignored) flat.push(f, v);
    if (!held) continue;
    mask |= 1 << i;
    held.push(mayBeLong(v) ? keptValue(v) : v);
  }
  const json = JSON.stringify(flat);
  if (!held) return { json };
  held[0] = mask >>> 0;
  return { json, kept: JSON.stringify(held) };
}

/**
 * Whether a value's JSON may be longer than KEPT_CHARS: a number's never is, nor a string's of at
 * most (KEPT_CHARS - 2) / 6 characters (each is at most 6 in JSON, \u0000, between its quotes).
 */
function mayBeLong(v: Exclude<CanonicalValue, undefined>): boolean {
  return typeof v === 'string' ? v.length > (KEPT_CHARS - 2) / 6 : typeof v !== 'number';
}

/** A value as the kept form holds it: itself, or its JSON's hash and length when that is longer than KEPT_CHARS. */
function keptValue(v: Exclude<CanonicalValue, undefined>): CanonicalValue | Elided {
  const piece = JSON.stringify(v);
  return piece.length > KEPT_CHARS ? { '~': pieceHash(piece), n: piece.length } : v;
}

/**
 * Version 1 (unversioned): sha1 of [key, value] pairs of every field, sorted by name. Kept one release
 * to read state written before version 2 (a rerun records the current fingerprint without a write: 'older').
 * @deprecated Remove in 0.3.0, with storedFingerprintStatus's 'older' and its test (test/sync/fingerprint-version.emulator.test.ts).
 */
const SORTED_FIELDS = [...ALL_FIELDS].sort().map((f) => [f, JSON.stringify(f)] as const);
export function fingerprintV1(listing: ListingCreate, ignore: ReadonlySet<string> = NO_FIELDS): string {
  const canonical = canonicalFromListing(listing, ALL_FIELDS);
  const skip = ignore.size > 0;
  let json = '[';
  for (const [f, quoted] of SORTED_FIELDS) {
    const v = canonical[f as ListingField];
    if (v === undefined || (skip && ignore.has(f))) continue;
    json += (json.length === 1 ? '[' : ',[') + quoted + ',' + JSON.stringify(v) + ']';
  }
  return hash('sha1', json + ']', 'base64url');
}

function rounded(v: number, coordinate: boolean): number {
  if (coordinate) return Math.round(v * 1e6) / 1e6;
  // a whole number of up to 12 digits is its own 12-digit rounding: skip the costly toPrecision
  return Number.isInteger(v) && Math.abs(v) < 1e12 ? v : Number(v.toPrecision(12));
}
