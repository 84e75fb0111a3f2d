// The state file is open in one process at a time: a lock file (locks/file-lock.ts) taken before
// its LMDB environment is opened and released after it is closed, `locks/<file name>.open.lock`
// beside the state file. LMDB cannot be shared by processes that do not see the same PIDs: it marks
// a reader by a byte lock at its PID's offset in its lock file and its writer mutex by thread id, so
// PID 1 of one container and PID 1 of another (one volume, `docker run --network host`) collide —
// the second failed to read and crashed at open. The lock file's holder rules judge a holder by its
// PID only where PIDs compare, else by its heartbeat (lock-holder.ts), so a holder in any PID
// namespace, boot or clock keeps the file until it closes it or is gone. Within a process the
// stores of one file share one lock (LMDB shares one environment per file within a process).
import { basename, dirname, join, resolve } from 'node:path';
import { lockFile, lockHolder, type FileLock } from '../locks/file-lock.js';
import { describeHolder, type LockHolder } from '../locks/lock-holder.js';
import { EnvironmentError } from '../errors.js';

/** How long an open waits, by default, while another process has the file open. */
export const OPEN_WAIT_MS = 10 * 60_000;

/**
 * What a command that waits for the state file says at once (a second sync, `state export` beside a
 * running sync): who holds it open and how long it waits. `why`: where that bound comes from.
 */
export function openWaitNotice(path: string, holder: LockHolder | undefined, waitMs: number, why: string): string {
  const who = holder ? describeHolder(holder, 'another feedsync process') : 'another feedsync process';
  return `the state file ${path} is open in ${who}; waiting for it to close the file, up to ${waitMs / 60_000} min (${why}); Ctrl-C stops waiting`;
}

/** The open lock of a state file. */
export function openLockFile(path: string): string {
  return join(dirname(path), 'locks', `${basename(path)}.open.lock`);
}

/** The lock each state file this process has open holds, with how many of its stores use it. */
const openHere = new Map<string, { lock: Promise<FileLock>; users: number }>();

export interface OpenLock {
  /** the lock was taken from this process (it stalled past the heartbeat, or the file was removed): write nothing more */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/**
 * Hold the state file `path` open for this process: waits up to `waitMs` while another process
 * holds it, then an error naming that process. Release once the store is closed.
 */
export async function holdOpen(
  path: string,
  waitMs = OPEN_WAIT_MS,
  onWait?: (holder: LockHolder | undefined) => void,
): Promise<OpenLock> {
  const key = resolve(path);
  let entry = openHere.get(key);
  if (!entry) {
    const made = { lock: take(path, waitMs, onWait), users: 0 };
    // (a lock not taken is forgotten, so the next open tries again; its error is thrown below to each user that awaits it)
    made.lock.catch(() => openHere.get(key) === made && openHere.delete(key));
    openHere.set(key, made);
    entry = made;
  }
  entry.users++;
  const mine = entry;
  let lock: FileLock;
  try {
    lock = await mine.lock;
  } catch (err) {
    mine.users--;
    throw err;
  }
  let released: Promise<void> | undefined;
  return {
    lost: lock.lost,
    release: () =>
      (released ??= (async () => {
        if (--mine.users > 0) return;
        if (openHere.get(key) === mine) openHere.delete(key);
        await lock.release();
      })()),
  };
}

async function take(
  path: string,
  waitMs: number,
  onWait?: (holder: LockHolder | undefined) => void,
): Promise<FileLock> {
  const at = openLockFile(path);
  const lock = await lockFile(at, `feedsync with the state file open`, {
    waitMs,
    pollMs: 250,
    // (a holder file unread says "another process" while waiting; the wait itself goes on by the lock)
    ...(onWait && { onWait: async () => onWait(await lockHolder(at).catch(() => undefined)) }),
  });
  if (lock) return lock;
  const holder = await lockHolder(at);
  const who = holder ? `by PID ${holder.pid} on ${holder.host} since ${holder.at}` : 'by another process';
  throw new EnvironmentError(
    `The state file ${path}`,
    `is held open ${who} (${at}), still after ${Math.round(waitMs / 1000)} s`,
    'Run again once that run has ended; a process that is gone frees it by itself (at once on this host and PID namespace, else within 20 s of its last heartbeat). Or set state.file to another path',
  );
}
