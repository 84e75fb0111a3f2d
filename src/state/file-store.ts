// State of runs without Redis in one LMDB file beside the config (`.feedsync/state.lmdb`, with its
// `state.lmdb-lock`), through the `lmdb` package (docs/design.md, "state store"). Each namespace is a
// range of keys (store-keys.ts); a read reads the file as it is (mapped into memory, nothing parsed:
// stored-entries.ts); a write is one LMDB transaction, flushed to disk before it returns, that
// touches only the keys it changes (applyInBackground's is made by lmdb's write thread: this one
// goes on meanwhile). LMDB's own lock serializes writers across processes, and its
// copy-on-write pages leave the old state or the new one after a crash or a kill, never a mix.
// The store keeps its schema version; a state file of the former format (`state.json`) is imported
// once, when the store is opened (state-json.ts). The file is open in one process at a time
// (open-lock.ts: LMDB's own locks cannot tell apart processes of two PID namespaces); an open
// waits while another process has it open, and a store whose hold was taken from it writes nothing.
import { dirname } from 'node:path';
import { open, type Database, type RootDatabase, type RootDatabaseOptions } from 'lmdb';
import { EnvironmentError, FeedsyncError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';
import type { KvStore, StateChange } from './kv-store.js';
import { rewriteFormerKeys, SLOTS_DB } from './former-keys.js';
import { FRESH_STATE_COST, importLegacyState } from './legacy-state.js';
import { checkStateFile } from './lmdb-header.js';
import type { LockHolder } from '../locks/lock-holder.js';
import { holdOpen, type OpenLock } from './open-lock.js';
import { privateDir, privateFile } from './private-files.js';
import { refuseLongKeys } from './kv-store.js';
import { recordChecked, walkStateFile } from './store-walk.js';
import { rangeOf, SLOT_KEYS, slotOf, storedValue, valueOf } from './store-keys.js';
import { StoredEntries } from './stored-entries.js';

/**
 * The store's layout; a store of a later one is refused, an earlier one upgraded: 2 keeps its slots
 * as UTF-8 in the database `slots`; 1 kept them in `state` under lmdb's default key encoding, in
 * which a slot of 64+ characters fell out of its namespace's range (former-keys.ts rewrites it).
 */
export const SCHEMA_VERSION = 2;
const SCHEMA_KEY = 'schema';

/** The database of the slots: typed by lmdb among the root's options, a keyEncoder is read by openDB as well (open.js). */
const SLOTS: RootDatabaseOptions & { name: string } = { name: SLOTS_DB, encoding: 'string', keyEncoder: SLOT_KEYS };

/** The state file store, with what `feedsync state export|import` needs beside KvStore. */
export interface FileStore extends KvStore {
  /** the namespaces that hold entries, and how many each */
  namespaces(): Array<[string, number]>;
  /** every entry of a namespace (export) */
  entries(ns: string): Iterable<[string, string]>;
  /** the whole state replaced by `state`, in one transaction (import) */
  replace(state: ReadonlyMap<string, Iterable<readonly [string, string]>>): Promise<void>;
}

/** The pieces of an open store, for the functions that write it. */
interface StoreFile {
  path: string;
  db: Database<string, string>;
  meta: Database<string, string>;
  /** this process's hold of the file (open-lock.ts) */
  hold: OpenLock;
}

export interface FileStoreOptions {
  /** how long the open waits while another process has the file open (open-lock.ts OPEN_WAIT_MS) */
  waitMs?: number;
  /** called once, when another process has the file open and the wait begins: who, when its record says */
  onWait?: (holder: LockHolder | undefined) => void;
}

export async function createFileStore(path: string, opts: FileStoreOptions = {}): Promise<FileStore> {
  const hold = await holdOpen(path, opts.waitMs, opts.onWait).catch((err: unknown) => {
    throw unopenable(path, err);
  });
  let root: RootDatabase<string, string>;
  try {
    root = await openFile(path);
  } catch (err) {
    await hold.release();
    throw err;
  }
  const file: StoreFile = {
    path,
    hold,
    db: root.openDB(SLOTS),
    meta: root.openDB({ name: 'meta', encoding: 'string' }),
  };
  // (a clean close, with the file still this process's, records it as known whole: the next open skips its walk)
  const closeAll = () =>
    root
      .close()
      .then(() => {
        if (!hold.lost.aborted) recordChecked(path);
      })
      .finally(() => hold.release());
  try {
    if (checkSchema(file) === 1) writeState(file, () => rewriteFormerKeys(root, file.db, path));
    await importLegacyState(file, (state, extra) => writeState(file, () => putAll(file, state, extra)));
  } catch (err) {
    await closeAll();
    throw err;
  }
  // (counted when asked, by LMDB's walk of the range's keys: a kept count cost every set a lookup)
  const count = (ns: string) => file.db.getKeysCount(rangeOf(ns));
  const apply = async (changes: readonly StateChange[]) =>
    writeState(file, () => changes.forEach((c) => applyChange(file, c)));
  let closed: Promise<void> | undefined;
  return {
    location: path,
    getAll: async (ns) => new StoredEntries(file.db, ns, () => count(ns)),
    get: async (ns, key) => read(file, ns, key),
    set: (ns, entries) => apply([{ ns, set: entries }]),
    delete: (ns, keys) => apply([{ ns, delete: keys }]),
    apply,
    applyInBackground: (changes) => writeInBackground(file, changes),
    swap: async (ns, key, expected, next) =>
      writeState(file, () => {
        if (read(file, ns, key) !== expected) return false;
        applyChange(file, { ns, set: [[key, next]] });
        return true;
      }),
    namespaces: () => namespacesOf(file).map((ns) => [ns, count(ns)]),
    entries: (ns) => new StoredEntries(file.db, ns, () => count(ns)),
    replace: async (state) => writeState(file, () => putAll(file, state, { clear: true })),
    close: () => (closed ??= closeAll()),
  };
}

/** The LMDB environment of the state file, with its folder made; an error a person can act on when it cannot be. */
async function openFile(path: string): Promise<RootDatabase<string, string>> {
  try {
    // the owner's alone (private-files.ts): a link in the file's place is refused, not followed
    privateDir(dirname(path), 'The folder of the state file');
    for (const [file, what] of lmdbFiles(path)) privateFile(file, what);
    checkStateFile(path); // LMDB trusts the file it maps: one cut short or of another program would crash the process
    await walkStateFile(path); // and one damaged inside: read whole in a child process first (store-walk.ts)
    // every commit flushed before it returns (no overlapping sync): a run's state is on disk when it says so;
    // the path is the file itself whatever its name (noSubdir), its lock file `<path>-lock` beside it
    const root = open<string, string>({
      path,
      noSubdir: true,
      maxDbs: 3,
      overlappingSync: false,
      compression: false,
      encoding: 'string',
    });
    for (const [file, what] of lmdbFiles(path)) privateFile(file, what); // (the ones LMDB made just now)
    return root;
  } catch (err) {
    throw unopenable(path, err);
  }
}

/** The files LMDB keeps of the state file at `path`, named for a person. */
const lmdbFiles = (path: string): Array<[string, string]> => [
  [path, 'The state file'],
  [`${path}-lock`, "The state file's LMDB lock file"],
];

/** Why the state file cannot be opened, for a person: a feedsync error as it is, a system error said so. */
function unopenable(path: string, err: unknown): unknown {
  if (err instanceof FeedsyncError) return err;
  const why = isSystemError(err) ? systemProblem(err) : undefined;
  return new EnvironmentError(
    `The state file ${path}`,
    `cannot be opened: ${why ? `it ${why.problem}` : (err as Error).message}`,
    `${why?.remedy ?? 'Make it readable and writable, or move it aside'}, or set state.file to another path (a new state costs what moving this one aside does: ${FRESH_STATE_COST})`,
    { cause: err },
  );
}

/** The stored schema version (none for a new store: its first write, or the import, records it); a later one refused. */
function checkSchema(file: StoreFile): number | undefined {
  const stored = file.meta.get(SCHEMA_KEY);
  if (stored === undefined) return undefined;
  if (Number(stored) > SCHEMA_VERSION) {
    throw new EnvironmentError(
      `The state file ${file.path}`,
      `was written by a later feedsync (its schema is version ${stored}; this one reads version ${SCHEMA_VERSION})`,
      'Run the feedsync that wrote it, or move the file aside and run again: ' + FRESH_STATE_COST,
    );
  }
  return Number(stored);
}

/** A write refused once this process no longer holds the file (open-lock.ts). */
function refuseUnheld(file: StoreFile): void {
  if (!file.hold.lost.aborted) return;
  throw new EnvironmentError(
    `The state file ${file.path}`,
    'was not written: this process no longer holds it open (another process took it, judging this one gone: it stood still past its heartbeat, or its lock file was removed)',
    'Run again. What this run wrote is on the chatbot; what it learned is not kept, so the next run does some work again and rewrites nothing that matches',
  );
}

/** A write: one transaction, committed and flushed when it returns; one that throws leaves the store as it was. */
function writeState<T>(file: StoreFile, write: () => T): T {
  refuseUnheld(file);
  try {
    return file.db.transactionSync(() => {
      const result = write();
      if (file.meta.get(SCHEMA_KEY) !== String(SCHEMA_VERSION)) file.meta.putSync(SCHEMA_KEY, String(SCHEMA_VERSION));
      return result;
    });
  } catch (err) {
    throw unwritable(file.path, err);
  }
}

function read(file: StoreFile, ns: string, key: string): string | undefined {
  const { start } = rangeOf(ns);
  const slot = slotOf(start, key);
  const stored = file.db.get(slot);
  return stored === undefined ? undefined : valueOf(slot, start, stored);
}

/**
 * Sets, then deletes, of one namespace (within a write). A set of the value the slot holds already is
 * not made: LMDB copies every page a write touches, value unchanged or not, and keeps the copies in
 * memory until the transaction commits. A lane's commit may set again what its acknowledged writes
 * recorded as they landed (settle/acked.ts: when a record failed, or records found in step share
 * its namespaces; else lane-commit.ts leaves them out); a first sync of 100k that set them all again
 * raised the run's RSS by about 65 MB in its last half second, and peaked there (a get reads the
 * file in place: its pages are mapped, not copied).
 */
function applyChange(file: StoreFile, change: StateChange): void {
  for (const [slot, value] of slotWrites(change)) {
    if (value === undefined) file.db.removeSync(slot);
    else if (file.db.get(slot) !== value) file.db.putSync(slot, value);
  }
}

/** A change as the slots it writes: [slot, stored value] of each set, then [slot, undefined] of each delete. */
function* slotWrites(change: StateChange): Generator<[string, string | undefined]> {
  const { start } = rangeOf(change.ns);
  for (const [key, value] of refuseLongKeys(change.ns, change.set ?? [])) {
    const slot = slotOf(start, key);
    yield [slot, storedValue(slot, start, key, value)];
  }
  for (const key of change.delete ?? []) yield [slotOf(start, key), undefined];
}

/**
 * A write made by lmdb's write thread (lmdb-js README, "db.put": queued, "committed in the same
 * transaction as other operations that have been queued in the current event turn", on a separate
 * thread): resolved once its transaction is committed and, the file being opened without
 * overlappingSync, flushed. Every slot is made before any is queued: a change that throws (a key
 * too long) queues nothing.
 */
async function writeInBackground(file: StoreFile, changes: readonly StateChange[]): Promise<void> {
  refuseUnheld(file);
  const writes = changes.flatMap((c) => [...slotWrites(c)]);
  if (writes.length === 0) return;
  // (the same transaction's promise for each: the last one's is the transaction's)
  let committed: Promise<boolean> | undefined;
  if (file.meta.get(SCHEMA_KEY) !== String(SCHEMA_VERSION))
    committed = file.meta.put(SCHEMA_KEY, String(SCHEMA_VERSION));
  for (const [slot, value] of writes) committed = value === undefined ? file.db.remove(slot) : file.db.put(slot, value);
  try {
    await committed;
  } catch (err) {
    throw unwritable(file.path, err);
  }
}

/** The namespaces that hold entries, in key order: one seek a namespace, past its range. */
function namespacesOf(file: StoreFile): string[] {
  const out: string[] = [];
  for (let start = ''; ;) {
    const [first] = file.db.getKeys({ start, limit: 1 });
    if (first === undefined) return out;
    const ns = first.slice(0, first.indexOf('\0'));
    out.push(ns);
    start = rangeOf(ns).end;
  }
}

/** Every namespace of `state` written (after all others are removed, with `clear`), within a write. */
function putAll(
  file: StoreFile,
  state: ReadonlyMap<string, Iterable<readonly [string, string]>>,
  extra: { clear?: boolean; meta?: Record<string, string> },
): void {
  if (extra.clear) file.db.clearSync();
  for (const [ns, entries] of state) applyChange(file, { ns, set: entries });
  for (const [key, value] of Object.entries(extra.meta ?? {})) file.meta.putSync(key, value);
}

/** A write that failed for a reason outside the code, said so; any other failure as it is. */
function unwritable(path: string, err: unknown): unknown {
  if (err instanceof FeedsyncError || !isSystemError(err)) return err;
  const why = systemProblem(err);
  return new EnvironmentError(
    `The state file ${path}`,
    `was not written: ${err.path && err.path !== path ? `${err.path} ` : 'it '}${why?.problem ?? err.message}`,
    `${why?.remedy ?? 'Fix what kept it from being written'}. What this run wrote is on the chatbot; what it learned (fingerprints, record stamps, marks) is not kept, so the next run does some work again and rewrites nothing that matches`,
    { cause: err },
  );
}
