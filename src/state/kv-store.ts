// A small store for what feedsync remembers between runs: fingerprints of what it wrote, feed marks
// (RESO high-water marks), first-missing times for the delete grace period, settings hashes.
// Values live in namespaces (one Redis hash, or one range of keys of the state file, each).
import { EnvironmentError } from '../errors.js';

export interface KvStore {
  /** where the state lives, for the report: "redis://host:port" or a file path */
  readonly location: string;
  /** every entry of the namespace; read-only (the file store's is a view of the file, not a copy: its reads see what is stored when they are made) */
  getAll(ns: string): Promise<ReadonlyMap<string, string>>;
  get(ns: string, key: string): Promise<string | undefined>;
  set(ns: string, entries: Iterable<readonly [string, string]>): Promise<void>;
  delete(ns: string, keys: Iterable<string>): Promise<void>;
  /**
   * Every change at once or none of them (Redis MULTI; one LMDB transaction of the state file,
   * flushed before it returns). A failed apply leaves the stored state as it was and later applies
   * work normally.
   */
  apply(changes: readonly StateChange[]): Promise<void>;
  /**
   * What apply does (all at once or none), without holding this thread for the commit: for writes
   * made often on a thread busy with other work (settle/acked.ts). The state file's is an LMDB
   * transaction committed and flushed by lmdb's write thread (resolved once it is; the calls made in
   * one event-loop turn share one), Redis's and memory's are apply. Resolved once the changes are in
   * the store: a kill of this process loses them no more.
   */
  applyInBackground(changes: readonly StateChange[]): Promise<void>;
  /**
   * Set `key` to `next` only if it still holds `expected` (undefined: absent), atomically across
   * processes; false when another writer changed it first (read again and retry).
   */
  swap(ns: string, key: string, expected: string | undefined, next: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Sets and deletes within one namespace; deletes are applied after sets. */
export interface StateChange {
  ns: string;
  set?: Iterable<readonly [string, string]>;
  delete?: Iterable<string>;
}

/**
 * The longest key a store keeps, in characters (UTF-16 code units, as String.length counts them):
 * longer than any listing key or URL a feed sends. Every store refuses a longer one alike
 * (refuseLongKeys); the file store keeps a key past LMDB's key limit under its hash (store-keys.ts).
 */
export const MAX_STATE_KEY_CHARS = 4096;

/** `key` as it is; an error naming the namespace and the key's start when it is longer than MAX_STATE_KEY_CHARS. */
export function refuseLongKey(ns: string, key: string): string {
  if (key.length <= MAX_STATE_KEY_CHARS) return key;
  throw new EnvironmentError(
    `A state key of namespace ${JSON.stringify(ns)}`,
    `is ${key.length} characters long (${key.slice(0, 10)}…): the state keeps keys of at most ${MAX_STATE_KEY_CHARS}, and nothing of this write was kept`,
    'Such a key comes from the feed (a listing key, a URL or a photo address): have the source shorten it, or key the feed by another field (keyBy)',
  );
}

/** `entries` as they are, each key checked as it goes by (refuseLongKey). */
export function* refuseLongKeys<T extends readonly [string, string]>(ns: string, entries: Iterable<T>): Generator<T> {
  for (const entry of entries) {
    refuseLongKey(ns, entry[0]);
    yield entry;
  }
}
