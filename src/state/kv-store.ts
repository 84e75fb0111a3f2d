// A small store for what feedsync remembers between runs: fingerprints of what it wrote, RESO
// high-water marks, first-missing times for the delete grace period, settings hashes.
// Values live in namespaces (one Redis hash, or one object of the state file, each).
export interface KvStore {
  /** where the state lives, for the report: "redis://host:port" or a file path */
  readonly location: string;
  getAll(ns: string): Promise<Map<string, string>>;
  get(ns: string, key: string): Promise<string | undefined>;
  set(ns: string, entries: Iterable<readonly [string, string]>): Promise<void>;
  delete(ns: string, keys: Iterable<string>): Promise<void>;
  close(): Promise<void>;
}
