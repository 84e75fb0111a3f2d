// A small store for what feedsync remembers between runs: fingerprints of what it wrote, feed marks
// (RESO high-water marks), first-missing times for the delete grace period, settings hashes.
// Values live in namespaces (one Redis hash, or one range of keys of the state file, each).
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
