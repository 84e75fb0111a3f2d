// How a namespace's key is a key of the state store's LMDB database (file-store.ts): `<ns>\0K<key>`,
// so a namespace is one range of keys, its slots written as plain UTF-8 (SLOT_KEYS): a NUL is a byte
// like any other and the bytes order as the code points do, whatever a slot's length. (lmdb's
// default key encoding, ordered-binary, writes a string of 64+ characters as raw UTF-8 and reads a
// NUL in it as the separator of an array key — "strings currently can not have '\x00' (null char)
// in them", lmdb-js README, Keys — so such a slot fell out of its namespace's range: former-keys.ts
// rewrites a store of that encoding once.) A key LMDB cannot hold as it is — longer than its key limit
// (1,978 bytes), or not well-formed UTF-16 (a lone surrogate, which UTF-8 cannot carry) — is kept
// under `<ns>\0H<sha-256 of its JSON>`, its value then the JSON [key, value]. Keys come from feeds:
// any string is a key like any other, and no two keys share a slot.
import { createHash } from 'node:crypto';

/** Bytes of a slot (namespace, separator, tag and key) kept as they are; well below LMDB's 1,978. */
const MAX_SLOT_BYTES = 1500;
const PLAIN = 'K';
const HASHED = 'H';

/** The first key of a namespace's range and the first one past it. */
export function rangeOf(ns: string): { start: string; end: string } {
  if (ns.includes('\0') || !ns.isWellFormed())
    throw new Error(`a state namespace must be well-formed text without NUL: ${JSON.stringify(ns)}`);
  return { start: `${ns}\0`, end: `${ns}\x01` };
}

/** Where `key` of a namespace is kept, its range's start given (rangeOf). */
export function slotOf(start: string, key: string): string {
  const plain = start + PLAIN + key;
  // (a UTF-16 code unit is at most 3 bytes of UTF-8: a short slot, as nearly every one is, is not measured)
  if (key.isWellFormed() && (3 * plain.length <= MAX_SLOT_BYTES || Buffer.byteLength(plain) <= MAX_SLOT_BYTES))
    return plain;
  return start + HASHED + createHash('sha256').update(JSON.stringify(key)).digest('base64url');
}

/** The value stored in a slot for `key` → `value`. */
export function storedValue(slot: string, start: string, key: string, value: string): string {
  return slot.charAt(start.length) === HASHED ? JSON.stringify([key, value]) : value;
}

/** The value of `key` from what its slot holds. */
export function valueOf(slot: string, start: string, stored: string): string {
  return slot.charAt(start.length) === HASHED ? hashedEntry(stored)[1] : stored;
}

/** The key and value a slot of the range holds. */
export function entryOf(slot: string, start: string, stored: string): [string, string] {
  if (slot.charAt(start.length) === HASHED) return hashedEntry(stored);
  return [slot.slice(start.length + 1), stored];
}

/**
 * The state database's keys as the UTF-8 of the slot strings (lmdb-js "Custom Key Encoding": a
 * `keyEncoder` of writeKey(key, target, start) → end and readKey(source, start, end) → key). A slot
 * is well-formed text (slotOf hashes a key that is not), so it reads back as it was written.
 */
export const SLOT_KEYS = {
  writeKey(key: string, target: Uint8Array, start: number): number {
    const room = target.length - start;
    const written = Buffer.isBuffer(target)
      ? target.write(key, start, 'utf8')
      : encoder.encodeInto(key, target.subarray(start)).written;
    // (a write stops short of a character that does not fit: lmdb retries a RangeError with a larger buffer)
    if (written > room - 4 && Buffer.byteLength(key) > written)
      throw new RangeError(`a state slot of ${Buffer.byteLength(key)} bytes does not fit in ${room}`);
    return start + written;
  },
  readKey(source: Uint8Array, start: number, end: number): string {
    return Buffer.isBuffer(source) ? source.toString('utf8', start, end) : decoder.decode(source.subarray(start, end));
  },
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function hashedEntry(stored: string): [string, string] {
  const pair: unknown = JSON.parse(stored);
  if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string')
    return [pair[0], pair[1]];
  throw new Error(`the state store holds a hashed key's entry that is not [key, value]: ${stored.slice(0, 200)}`);
}
