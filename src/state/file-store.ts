// State in one JSON file beside the config, for runs without Redis. Every read reads the file (so a
// process sees what another one committed; it is parsed again only when its bytes changed); every
// write takes the file's lock (`<file>.lock`), reads the file again, applies the change and
// replaces the file atomically (write-file-atomic: a temporary file, fsync, rename). A failed write
// leaves the old file and fails only itself.
import { hash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { EnvironmentError, FeedsyncError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';
import { lockFile } from './file-lock.js';
import type { KvStore, StateChange } from './kv-store.js';

type StateFile = Record<string, Record<string, string>>;

/** How long a write waits for another process's write to the same file. */
const WRITE_WAIT_MS = 30_000;

export async function createFileStore(path: string): Promise<KvStore> {
  const cache = lastParsed(path);
  await cache.read(); // an unreadable state file is reported now, not halfway through a run
  let queue: Promise<unknown> = Promise.resolve();
  const write = (changes: readonly StateChange[], holds?: (data: StateFile) => boolean): Promise<boolean> => {
    // one write at a time in this process; a failed one does not stop the next
    const run = queue.catch(() => {}).then(() => writeLocked(path, cache, changes, holds).catch((err: unknown) => Promise.reject(unwritable(path, err))));
    queue = run;
    return run;
  };
  const apply = async (changes: readonly StateChange[]): Promise<void> => {
    await write(changes);
  };
  const space = async (ns: string) => (await cache.read())[ns] ?? {};
  return {
    location: path,
    getAll: async (ns) => new NamespaceView(await space(ns)),
    get: async (ns, key) => (await space(ns))[key],
    set: (ns, entries) => apply([{ ns, set: entries }]),
    delete: (ns, keys) => apply([{ ns, delete: keys }]),
    apply,
    swap: (ns, key, expected, next) => write([{ ns, set: [[key, next]] }], (data) => ownValue(data[ns], key) === expected),
    close: () =>
      queue.then(
        () => {},
        () => {},
      ),
  };
}

/** Apply `changes` under the file's lock, when `holds` (checked on the file as it is then) allows. */
async function writeLocked(path: string, cache: ParsedState, changes: readonly StateChange[], holds?: (data: StateFile) => boolean): Promise<boolean> {
  const lock = await lockFile(`${path}.lock`, 'state write', { waitMs: WRITE_WAIT_MS, pollMs: 20 });
  if (!lock) throw new Error(`state file ${path} was not written: another process held ${path}.lock for ${WRITE_WAIT_MS / 1000} s`);
  try {
    // the parsed file is shared with reads: changed namespaces are copied, never written into
    // (null-prototype: a namespace named "__proto__" is a namespace like any other)
    const data: StateFile = Object.assign(Object.create(null), await cache.read());
    if (holds && !holds(data)) return false;
    for (const c of changes) {
      // a null-prototype copy: a listing key "__proto__" is a key like any other
      const m: Record<string, string> = Object.assign(Object.create(null), data[c.ns]);
      data[c.ns] = m;
      for (const [k, v] of c.set ?? []) m[k] = v;
      for (const k of c.delete ?? []) delete m[k];
    }
    const bytes = Buffer.from(stateJson(data));
    await writeFileAtomic(path, bytes, { fsync: true });
    cache.wrote(bytes, data);
    return true;
  } finally {
    await lock.release();
  }
}

/**
 * The JSON of each namespace this process wrote, by the namespace's object: a write copies only the
 * namespaces it changes, so the others (a feed's 100k fingerprints beside the one alert state a
 * run changes) are not serialized again on every write.
 */
const namespaceJson = new WeakMap<Record<string, string>, string>();

/** JSON.stringify(data), each unchanged namespace's JSON taken from namespaceJson. */
function stateJson(data: StateFile): string {
  let out = '';
  for (const [ns, space] of Object.entries(data)) {
    let json = namespaceJson.get(space);
    if (json === undefined) namespaceJson.set(space, (json = JSON.stringify(space)));
    out += (out === '' ? '{' : ',') + JSON.stringify(ns) + ':' + json;
  }
  return out === '' ? '{}' : out + '}';
}

interface ParsedState {
  read(): Promise<StateFile>;
  /** this process wrote `bytes` (the JSON of `data`): a read that finds them needs no parse */
  wrote(bytes: Buffer, data: StateFile): void;
}

/**
 * Reads of the state file, parsed again only when its bytes changed: a run reads several
 * namespaces of every feed of its chatbot (30 reads for ten feeds), and a state file of a million
 * fingerprints takes a second or more to parse, against a few tens of ms to read and hash.
 * Not even read again while the file is the same file: same device, inode, size and modification
 * time in ns (a write replaces the file by rename, so a new inode; an edit in place changes the
 * time). A run's per-listing reads (undo's read-back of 1,166 listings in a 100k state) read and
 * hashed the whole file each time: that rerun took 30.7 s, 10.9 s with this check (npm run bench).
 * Only a file at least SETTLED_MS old when it was stat'ed is known so: the kernel stamps mtime
 * from a coarse clock and soon hands a freed inode out again, so two writes within one tick can
 * leave the same identity ("racy git"); a write after a file was that old has a later mtime.
 */
function lastParsed(path: string): ParsedState {
  let last: { digest: string; data: StateFile; file?: string } | undefined;
  return {
    async read() {
      // the identity is taken before the bytes: a file replaced in between is read again next time
      const file = await fileIdentity(path);
      if (file === undefined) return {};
      if (file.settled && last?.file === file.id) return last.data;
      const bytes = await readState(path);
      if (bytes === undefined) return {};
      const digest = hash('sha1', bytes, 'base64');
      if (last?.digest !== digest) last = { digest, data: parseState(path, bytes) };
      if (file.settled) last.file = file.id;
      else delete last.file;
      return last.data;
    },
    wrote(bytes, data) {
      // the file written is not stat'ed here: the next read takes its identity (and finds the digest)
      last = { digest: hash('sha1', bytes, 'base64'), data };
    },
  };
}

/** How old a file must be for its identity to tell it apart from any later write (far above an mtime tick). */
const SETTLED_MS = 1000;

/**
 * device, inode, size and mtime (ns) of the file, and whether it was SETTLED_MS old; undefined when
 * there is none, not settled when it cannot be stat'ed (it is read, and the read says why)
 */
async function fileIdentity(path: string): Promise<{ id: string; settled: boolean } | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return { id: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`, settled: Date.now() - Number(s.mtimeNs / 1_000_000n) >= SETTLED_MS };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { id: '', settled: false };
  }
}

/**
 * A namespace of the parsed file as a ReadonlyMap, without copying it: a feed's 100k fingerprints
 * and stamps are read on every run, and a Map of each cost more than the rest of reading them. The
 * parsed namespaces are never changed (a write copies the ones it changes).
 */
class NamespaceView implements ReadonlyMap<string, string> {
  #size: number | undefined;
  constructor(readonly space: Readonly<Record<string, string>>) {}
  get(key: string): string | undefined {
    return ownValue(this.space, key);
  }
  has(key: string): boolean {
    return Object.hasOwn(this.space, key);
  }
  get size(): number {
    return (this.#size ??= Object.keys(this.space).length);
  }
  *entries(): MapIterator<[string, string]> {
    for (const key of Object.keys(this.space)) yield [key, this.space[key]!];
  }
  *keys(): MapIterator<string> {
    yield* Object.keys(this.space);
  }
  *values(): MapIterator<string> {
    for (const key of Object.keys(this.space)) yield this.space[key]!;
  }
  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }
  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    // (a plain loop, no generator: a rerun walks a feed's 100k fingerprints with it)
    const space = this.space;
    for (const key of Object.keys(space)) fn.call(thisArg, space[key]!, key, this);
  }
}

/**
 * A key's value, never one inherited from Object.prototype (a key may be any string): values are
 * strings, and nothing Object.prototype holds is one, so one lookup tells (a rerun makes 100k).
 */
function ownValue(space: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  const value: unknown = space?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** The state file's bytes, or undefined when there is none yet. */
async function readState(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const why = isSystemError(err) ? systemProblem(err) : undefined;
    throw new EnvironmentError(
      `The state file ${path}`,
      `cannot be read: it ${why?.problem ?? (err as Error).message}`,
      `${why?.remedy ?? 'Make it readable'}, or set state.file to another path (a new file costs what moving this one aside does: ${FRESH_STATE_COST})`,
      { cause: err },
    );
  }
}

/** What a run without the state file's contents does: nothing is lost on the chatbot, some work is done again. */
const FRESH_STATE_COST =
  'the next run compares every listing by the fields the list returns and rewrites nothing that matches, ' +
  'maps every record once more, pulls incremental RESO feeds in full once, starts grace periods anew and pushes settings again';

function parseState(path: string, bytes: Buffer): StateFile {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw notJson(path, bytes, (err as Error).message, err);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw notJson(path, bytes, 'it is not a JSON object');
  return data as StateFile;
}

function notJson(path: string, bytes: Buffer, detail: string, cause?: unknown): EnvironmentError {
  return new EnvironmentError(
    `The state file ${path}`,
    `is not valid JSON (${detail}; ${bytes.length} bytes): it was cut short (a full disk, a copy that did not finish) or edited by hand`,
    `Restore it from a backup, or move it aside (mv ${path} ${path}.bad) and run again. Moving it aside costs no listing: ${FRESH_STATE_COST}`,
    cause === undefined ? undefined : { cause },
  );
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
