// A state store of schema 1 rewritten once in the key encoding of schema 2 (store-keys.ts SLOT_KEYS).
// Schema 1 kept its slots (the same strings: `<ns>\0K<key>`, `<ns>\0H<hash>`) in the database
// `state` under lmdb's default key encoding, ordered-binary (node_modules/ordered-binary/index.js,
// writeKey of a string): a byte 27 first when the first character is below 28; then, for a string
// of fewer than 64 characters, each character 0-4 as the two bytes 4, c and every other one as
// UTF-8; for a longer string, its UTF-8 as it is. A long slot's NUL was therefore a raw 0, which
// ordered-binary reads as the separator of an array key, and the byte 0 sorts it before its
// namespace's range start (`<ns>` 4 0): walks, counts and export missed it, point lookups found it.
// Each key is read here as the raw bytes it is (keyEncoding 'binary'), decoded by both rules and
// kept by the one whose encoding gives those bytes back; all of it is copied into the database
// `slots` and `state` dropped, in the one transaction that records schema 2.
import type { Database, RootDatabase } from 'lmdb';
import { EnvironmentError } from '../errors.js';
import { FRESH_STATE_COST } from './legacy-state.js';
import { feedsyncCommand } from '../format/invocation.js';

/** The database of schema 1, and the one its slots go to. */
const FORMER_DB = 'state';
export const SLOTS_DB = 'slots';

/**
 * Every slot of the former database written into `slots` (inside the caller's write transaction),
 * then the former database dropped. Returns how many slots were copied.
 */
export function rewriteFormerKeys(
  root: RootDatabase<string, string>,
  slots: Database<string, string>,
  path: string,
): number {
  const former = root.openDB<string, Uint8Array>({ name: FORMER_DB, encoding: 'string', keyEncoding: 'binary' });
  let copied = 0;
  for (const { key, value } of former.getRange()) {
    const slot = formerSlot(key);
    if (slot === undefined) {
      throw new EnvironmentError(
        `The state file ${path}`,
        `holds a key that feedsync did not write (${Buffer.from(key.subarray(0, 40)).toString('hex')}…, ${key.length} bytes), so its state cannot be carried into this version's layout; nothing was changed`,
        `Run the feedsync that wrote it and export its state (${feedsyncCommand()} state export, with that version), then move the file aside and import that document with this one (${feedsyncCommand()} state import FILE); or move it aside and run again: ${FRESH_STATE_COST}`,
      );
    }
    slots.putSync(slot, value);
    copied++;
  }
  former.dropSync();
  return copied;
}

/** The slot string whose ordered-binary encoding is `raw`, or undefined when neither rule gives it. */
function formerSlot(raw: Uint8Array): string | undefined {
  const body = raw[0] === 27 ? raw.subarray(1) : raw;
  const long = Buffer.from(body).toString('utf8');
  const short = Buffer.from(unescaped(body)).toString('utf8');
  for (const slot of [short, long]) if (Buffer.compare(orderedBinaryOf(slot), raw) === 0) return slot;
  return undefined;
}

/** The bytes of a short string's encoding with each escape (4, c) read as the byte c. */
function unescaped(body: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === 4 && i + 1 < body.length) i++;
    out.push(body[i] ?? 0);
  }
  return Uint8Array.from(out);
}

/** ordered-binary's encoding of a well-formed string (as writeKey writes it; slots are well-formed). */
function orderedBinaryOf(text: string): Buffer {
  const head = text.length > 0 && text.charCodeAt(0) >= 28 ? [] : [27];
  if (text.length >= 64) return Buffer.concat([Uint8Array.from(head), Buffer.from(text, 'utf8')]);
  const parts: Uint8Array[] = [Uint8Array.from(head)];
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    parts.push(code <= 4 ? Uint8Array.from([4, code]) : Buffer.from(ch, 'utf8'));
  }
  return Buffer.concat(parts);
}
