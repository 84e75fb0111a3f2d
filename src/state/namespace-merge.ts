// A changed namespace's new bytes, from its old bytes and the changes, without building it as an
// object: a first sync commits a million entries into each of three namespaces, and a rerun some
// thousands into namespaces of a million; as objects, each such write held ~100 MB more and made a
// ~44 MB string, at the end of a run, when memory is highest.
import type { StateChange } from './kv-store.js';
import type { NamespaceIndex } from './namespace-index.js';

/** What a namespace's changes leave of each key they name: its new value, or undefined (deleted). */
export type Effects = ReadonlyMap<string, string | undefined>;

/** The changes grouped by namespace, each namespace's in the order given (one namespace's effects are made at a time). */
export function byNamespace(changes: readonly StateChange[]): Map<string, StateChange[]> {
  const groups = new Map<string, StateChange[]>();
  for (const c of changes) {
    const group = groups.get(c.ns);
    if (group === undefined) groups.set(c.ns, [c]);
    else group.push(c);
  }
  return groups;
}

/** One namespace's changes as effects: each change's sets, then its deletes; the last word on a key counts. */
export function effectsOf(changes: readonly StateChange[]): Effects {
  const effects = new Map<string, string | undefined>();
  for (const c of changes) {
    for (const [k, v] of c.set ?? []) effects.set(k, v);
    for (const k of c.delete ?? []) effects.set(k, undefined);
  }
  return effects;
}

/** A namespace's new bytes as pieces, and its distinct keys. */
export interface MergedNamespace {
  readonly pieces: readonly Buffer[];
  readonly length: number;
  readonly size: number;
}

/** How many characters of set entries make one piece (a piece's string is short-lived; never one of the whole). */
const CHUNK_CHARS = 1 << 20;

/**
 * The namespace with the effects applied, as JSON.parse would read it: the old members whose key the
 * effects name, or that a later member of the same key replaces, dropped; the others' bytes copied
 * as they are (runs of members, with what lies between them); the new values appended.
 */
export function merged(old: { bytes: Buffer; index: NamespaceIndex } | undefined, effects: Effects): MergedNamespace {
  const pieces: Buffer[] = [];
  let length = 0;
  let members = 0;
  const put = (piece: Buffer) => {
    pieces.push(piece);
    length += piece.length;
  };
  put(Buffer.from('{'));
  if (old !== undefined)
    members = copyKept(old.bytes, old.index, effects, (run) => {
      if (length > 1) put(COMMA);
      put(run);
    });
  let chunk = '';
  for (const [k, v] of effects) {
    if (v === undefined) continue;
    chunk += (members++ === 0 ? '' : ',') + JSON.stringify(k) + ':' + JSON.stringify(v);
    if (chunk.length >= CHUNK_CHARS) {
      put(Buffer.from(chunk));
      chunk = '';
    }
  }
  put(Buffer.from(chunk + '}'));
  return { pieces, length, size: members };
}

const COMMA = Buffer.from(',');

/** Puts the runs of old members kept (each run's bytes verbatim, from its first key to its last value): how many. */
function copyKept(bytes: Buffer, index: NamespaceIndex, effects: Effects, put: (run: Buffer) => void): number {
  const dropped = new Set(index.superseded);
  for (const k of effects.keys()) {
    const m = index.find(bytes, k);
    if (m >= 0) dropped.add(m);
  }
  const ends = [...dropped].sort((a, b) => a - b);
  ends.push(index.count); // the last run ends with the last member
  let first = 0;
  for (const d of ends) {
    if (d > first) put(bytes.subarray(index.starts[first]!, index.end(bytes, d - 1)));
    first = d + 1;
  }
  return index.count - dropped.size;
}
