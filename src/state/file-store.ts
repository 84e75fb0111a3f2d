// State in one JSON file beside the config, for runs without Redis. Every read reads the file (so a
// process sees what another one committed; it is checked again only when its bytes changed, and
// each namespace indexed only when asked for, never parsed: state-bytes.ts); every write takes the file's lock
// (`<file>.lock`), reads the file again, applies the change and replaces the file atomically
// (write-file-atomic: a temporary file, fsync, rename). A failed write leaves the old file and
// fails only itself.
import { hash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { EnvironmentError, FeedsyncError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';
import { lockFile } from '../locks/file-lock.js';
import type { KvStore, StateChange } from './kv-store.js';
import { StateBytes, type StateProblem } from './state-bytes.js';

/** How long a write waits for another process's write to the same file. */
const WRITE_WAIT_MS = 30_000;

export async function createFileStore(path: string): Promise<KvStore> {
  const cache = lastRead(path);
  await cache.read(); // an unreadable state file is reported now, not halfway through a run
  let queue: Promise<unknown> = Promise.resolve();
  const write = (changes: readonly StateChange[], holds?: (state: StateBytes) => boolean): Promise<boolean> => {
    // one write at a time in this process; a failed one does not stop the next
    const run = queue.catch(() => {}).then(() => writeLocked(path, cache, changes, holds).catch((err: unknown) => Promise.reject(unwritable(path, err))));
    queue = run;
    return run;
  };
  const apply = async (changes: readonly StateChange[]): Promise<void> => {
    await write(changes);
  };
  return {
    location: path,
    getAll: async (ns) => (await cache.read()).entries(ns) ?? NO_ENTRIES,
    get: async (ns, key) => (await cache.read()).value(ns, key),
    set: (ns, entries) => apply([{ ns, set: entries }]),
    delete: (ns, keys) => apply([{ ns, delete: keys }]),
    apply,
    swap: (ns, key, expected, next) => write([{ ns, set: [[key, next]] }], (state) => state.value(ns, key) === expected),
    close: () =>
      queue.then(
        () => {},
        () => {},
      ),
  };
}

/** Apply `changes` under the file's lock, when `holds` (checked on the file as it is then) allows. */
async function writeLocked(path: string, cache: StateCache, changes: readonly StateChange[], holds?: (state: StateBytes) => boolean): Promise<boolean> {
  const lock = await lockFile(`${path}.lock`, 'state write', { waitMs: WRITE_WAIT_MS, pollMs: 20 });
  if (!lock) throw new Error(`state file ${path} was not written: another process held ${path}.lock for ${WRITE_WAIT_MS / 1000} s`);
  try {
    const state = await cache.read();
    if (holds && !holds(state)) return false;
    // the state read is shared with reads: changed namespaces are copied, never written into
    const next = state.changed(changes);
    await writeFileAtomic(path, next.bytes, { fsync: true });
    cache.wrote(next);
    return true;
  } finally {
    await lock.release();
  }
}

interface StateCache {
  read(): Promise<StateBytes>;
  /** this process wrote `state` (its bytes): a read that finds them needs no scan, and keeps the indexes it made */
  wrote(state: StateBytes): void;
}

/**
 * Reads of the state file, checked (and its namespaces indexed) again only when its bytes changed: a
 * run reads several namespaces of every feed of its chatbot (30 reads for ten feeds), and a state
 * file of a million fingerprints takes a second or more to check and index, against a few tens of
 * ms to read and hash.
 * Not even read again while the file is the same file: same device, inode, size and modification
 * time in ns (a write replaces the file by rename, so a new inode; an edit in place changes the
 * time). A run's per-listing reads (undo's read-back of 1,166 listings in a 100k state) read and
 * hashed the whole file each time: that rerun took 30.7 s, 10.9 s with this check (npm run bench).
 * Only a file at least SETTLED_MS old when it was stat'ed is known so: the kernel stamps mtime
 * from a coarse clock and soon hands a freed inode out again, so two writes within one tick can
 * leave the same identity ("racy git"); a write after a file was that old has a later mtime.
 */
function lastRead(path: string): StateCache {
  let last: { digest: string; state: StateBytes; file?: string } | undefined;
  return {
    async read() {
      // the identity is taken before the bytes: a file replaced in between is read again next time
      const file = await fileIdentity(path);
      if (file === undefined) return StateBytes.empty();
      if (file.settled && last?.file === file.id) return last.state;
      const bytes = await readState(path);
      if (bytes === undefined) return StateBytes.empty();
      const digest = hash('sha1', bytes, 'base64');
      if (last?.digest !== digest) last = { digest, state: checkedState(path, bytes) };
      if (file.settled) last.file = file.id;
      else delete last.file;
      return last.state;
    },
    wrote(state) {
      // the file written is not stat'ed here: the next read takes its identity (and finds the digest)
      last = { digest: hash('sha1', state.bytes, 'base64'), state };
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

/** A namespace the file does not have. */
const NO_ENTRIES: ReadonlyMap<string, string> = new Map();

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

function checkedState(path: string, bytes: Buffer): StateBytes {
  const state = StateBytes.read(bytes);
  if (state instanceof StateBytes) return state;
  throw notJson(path, bytes, state);
}

function notJson(path: string, bytes: Buffer, { problem, offset, json }: StateProblem): EnvironmentError {
  const what = json ? "is JSON but not feedsync's state" : 'is not valid JSON';
  return new EnvironmentError(
    `The state file ${path}`,
    `${what} (${problem} at byte ${offset}; ${bytes.length} bytes): it was cut short (a full disk, a copy that did not finish) or edited by hand`,
    `Restore it from a backup, or move it aside (mv ${path} ${path}.bad) and run again. Moving it aside costs no listing: ${FRESH_STATE_COST}`,
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
