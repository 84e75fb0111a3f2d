// A lock held by a file: for processes sharing a folder, without Redis. The file is created whole
// (written beside it, then hard-linked into place, which fails when it exists), so a reader never
// sees it half-written. It names its holder (lock-holder.ts: unique owner id, host, boot, PID
// namespace, process start time). The holder's heartbeat is a counter it advances every `checkMs`
// in a file beside the lock (`<lock>.beat`, replaced whole), and a reader judges it by its own
// monotonic clock: the heartbeat is stale once the reader has seen the same lock and the same beat
// for `staleMs` of its own time. No two clocks are compared (a host whose clock runs ahead, on a
// shared volume, sees the same beats as any other). A taker finds the lock stale when the holder is
// certainly gone (lock-holder.ts: only where PIDs compare) or its heartbeat is stale, and moves it
// aside to take it. A holder whose file no longer names it (removed by hand, or taken as stale)
// sees `lost` fire.
import { mkdir, link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { holderGone, holdingHere, newHolder, parseHolder, type LockHolder } from './lock-holder.js';

export interface FileLock {
  readonly path: string;
  /** the file no longer names this holder (removed by hand, or taken as stale): stop writing */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export interface FileLockTiming {
  /** how often a holder refreshes its heartbeat and checks that the file still names it */
  checkMs?: number;
  /** a lock whose heartbeat this process has seen standing still this long (its own clock) is stale, whoever holds it */
  staleMs?: number;
}

const CHECK_MS = 2000;
/** a lock whose heartbeat a taker has seen standing still this long is stale (FileLockTiming.staleMs's default) */
export const STALE_MS = 20_000;
/** a file that is not a holder record (written by hand, a disk that lost it) is stale after this */
const UNREADABLE_GRACE_MS = 2000;

/** Take the lock, or undefined when a live holder has it (a heartbeat is judged over calls: lockFile polls). */
export async function tryLockFile(
  path: string,
  what: string,
  timing: FileLockTiming = {},
): Promise<FileLock | undefined> {
  await mkdir(dirname(path), { recursive: true });
  const me = newHolder(what);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await create(path, me)) return held(path, me, timing.checkMs ?? CHECK_MS);
    const found = await readLock(path);
    if (found === 'absent') continue;
    if (!isStale(path, found, timing.staleMs ?? STALE_MS)) return undefined;
    watched.delete(path);
    await moveAside(path, found);
  }
  return undefined;
}

/** Take the lock, polling every `pollMs` while a live holder has it, until `waitMs` have passed. */
export async function lockFile(
  path: string,
  what: string,
  opts: FileLockTiming & {
    waitMs: number;
    pollMs?: number;
    signal?: AbortSignal;
    /** called once, when a live holder has it and the wait begins */
    onWait?: () => void | Promise<void>;
  },
): Promise<FileLock | undefined> {
  const until = Date.now() + opts.waitMs;
  for (let tries = 0; ; tries++) {
    const lock = await tryLockFile(path, what, opts);
    if (lock || Date.now() >= until || opts.signal?.aborted) return lock;
    if (tries === 0) await opts.onWait?.();
    await sleep(Math.min(opts.pollMs ?? 250, Math.max(1, until - Date.now())), undefined, {
      signal: opts.signal,
    }).catch(() => {}); // (rejects only when opts.signal aborts: the next turn returns)
  }
}

/** Who holds the lock, when a live holder does. */
export async function lockHolder(path: string, staleMs = STALE_MS): Promise<LockHolder | undefined> {
  const found = await readLock(path);
  return found !== 'absent' && found.holder && !isStale(path, found, staleMs) ? found.holder : undefined;
}

/** Create the lock file with its content in one step: false when it exists. */
async function create(path: string, me: LockHolder): Promise<boolean> {
  const tmp = `${path}.${me.owner}.tmp`;
  await writeFile(tmp, JSON.stringify(me), { flag: 'wx' });
  try {
    await link(tmp, path);
    holdingHere(me.owner, true);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    // (a leftover temporary file holds no lock: only `path` does)
    await unlink(tmp).catch(() => {});
  }
}

interface Found {
  holder?: LockHolder;
  /** the lock's text and its beat: the heartbeat moved when this changed */
  seen: string;
}

const beatPath = (path: string) => `${path}.beat`;

async function readLock(path: string): Promise<Found | 'absent'> {
  try {
    // (no beat file: a lock just made, or its holder's first beat not yet written)
    const [text, beat] = await Promise.all([readFile(path, 'utf8'), readFile(beatPath(path), 'utf8').catch(() => '')]);
    const holder = parseHolder(text);
    return { ...(holder && { holder }), seen: `${text}\n${beat}` };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
}

/** Per lock path this process looks at: what it last saw there and since when (its monotonic clock). */
const watched = new Map<string, { seen: string; since: number }>();

/** How long (ms of this process's monotonic clock) `path` has shown the same lock and beat. */
function standingStillMs(path: string, found: Found): number {
  const now = performance.now();
  const last = watched.get(path);
  if (last?.seen === found.seen) return now - last.since;
  watched.set(path, { seen: found.seen, since: now });
  return 0;
}

function isStale(path: string, found: Found, staleMs: number): boolean {
  const still = standingStillMs(path, found);
  if (!found.holder) return still > UNREADABLE_GRACE_MS;
  return still > staleMs || holderGone(found.holder) !== undefined;
}

/**
 * Remove a stale lock file, and only it: it is renamed aside, then checked to be the one judged
 * stale. When another taker replaced it meanwhile, that one is linked back (and if even that lost
 * a race, its holder's check finds the file no longer names it and stops).
 */
async function moveAside(path: string, judged: Found): Promise<void> {
  const aside = `${path}.stale-${randomUUID()}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = await readLock(aside);
  const same = moved !== 'absent' && moved.holder?.owner === judged.holder?.owner;
  // (a link that fails: another taker's lock is in place already, or its holder's check finds the file
  // gone and stops; an aside left behind holds no lock: only `path` does)
  if (!same) await link(aside, path).catch(() => {});
  await unlink(aside).catch(() => {});
}

function held(path: string, me: LockHolder, checkMs: number): FileLock {
  const lost = new AbortController();
  let beats = 0;
  const beat = async () => {
    const found = await readLock(path);
    if (found === 'absent' || found.holder?.owner !== me.owner) {
      lost.abort(new Error(`lock file ${path} no longer names this process`));
      return;
    }
    const tmp = `${beatPath(path)}.${me.owner}.tmp`;
    await writeFile(tmp, JSON.stringify({ owner: me.owner, beat: ++beats }));
    await rename(tmp, beatPath(path));
  };
  // one beat at a time: a slow disk must not have two beats race for the beat file
  let beating = false;
  const timer = setInterval(() => {
    if (lost.signal.aborted) return clearInterval(timer);
    if (beating) return;
    beating = true;
    void beat()
      .catch((err: unknown) => lost.abort(err))
      .finally(() => (beating = false));
  }, checkMs);
  timer.unref();
  return {
    path,
    lost: lost.signal,
    async release() {
      clearInterval(timer);
      holdingHere(me.owner, false);
      // (unreadable: left as it is; like a file whose unlink fails below, it has no beat any more, and
      // the next taker finds it stale and moves it aside)
      const found = await readLock(path).catch(() => 'absent' as const);
      if (found !== 'absent' && found.holder?.owner === me.owner) {
        // (a lock file left behind has no beat any more: the next taker finds it stale and moves it aside)
        await unlink(beatPath(path)).catch(() => {});
        await unlink(path).catch(() => {});
      }
    },
  };
}
