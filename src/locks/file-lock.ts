// A lock held by a file: for processes sharing a folder, without Redis. The file is created whole
// (written beside it, then hard-linked into place, which fails when it exists), so a reader never
// sees it half-written. It names its holder (lock-holder.ts: unique owner id, host, boot, PID
// namespace, process start time), and its mtime is the holder's heartbeat, refreshed every
// `checkMs` while held. A taker finds it stale when the holder is gone (a dead or reused PID, its
// own PID, another boot) or its heartbeat is older than `staleMs`, and moves it aside to take it.
// A holder whose file no longer names it (removed by hand, or taken as stale) sees `lost` fire.
import { mkdir, link, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
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
  /** a lock whose heartbeat is older than this is stale, whoever holds it (a holder on another host, a frozen one) */
  staleMs?: number;
}

const CHECK_MS = 2000;
const STALE_MS = 20_000;
/** a file that is not a holder record (written by hand, a disk that lost it) is stale after this */
const UNREADABLE_GRACE_MS = 2000;

/** Take the lock, or undefined when a live holder has it. */
export async function tryLockFile(path: string, what: string, timing: FileLockTiming = {}): Promise<FileLock | undefined> {
  await mkdir(dirname(path), { recursive: true });
  const me = newHolder(what);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await create(path, me)) return held(path, me, timing.checkMs ?? CHECK_MS);
    const found = await readLock(path);
    if (found === 'absent') continue;
    if (!isStale(found, timing.staleMs ?? STALE_MS)) return undefined;
    await moveAside(path, found);
  }
  return undefined;
}

/** Take the lock, polling every `pollMs` while a live holder has it, until `waitMs` have passed. */
export async function lockFile(path: string, what: string, opts: FileLockTiming & { waitMs: number; pollMs?: number; signal?: AbortSignal }): Promise<FileLock | undefined> {
  const until = Date.now() + opts.waitMs;
  for (;;) {
    const lock = await tryLockFile(path, what, opts);
    if (lock || Date.now() >= until || opts.signal?.aborted) return lock;
    await sleep(Math.min(opts.pollMs ?? 250, Math.max(1, until - Date.now())), undefined, { signal: opts.signal }).catch(() => {});
  }
}

/** Who holds the lock, when a live holder does. */
export async function lockHolder(path: string, staleMs = STALE_MS): Promise<LockHolder | undefined> {
  const found = await readLock(path);
  return found !== 'absent' && found.holder && !isStale(found, staleMs) ? found.holder : undefined;
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
    await unlink(tmp).catch(() => {});
  }
}

interface Found {
  holder?: LockHolder;
  heartbeatMs: number;
}

async function readLock(path: string): Promise<Found | 'absent'> {
  try {
    const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const holder = parseHolder(text);
    return { ...(holder && { holder }), heartbeatMs: st.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
}

function isStale(found: Found, staleMs: number): boolean {
  const age = Date.now() - found.heartbeatMs;
  if (!found.holder) return age > UNREADABLE_GRACE_MS;
  return age > staleMs || holderGone(found.holder) !== undefined;
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
  if (!same) await link(aside, path).catch(() => {});
  await unlink(aside).catch(() => {});
}

function held(path: string, me: LockHolder, checkMs: number): FileLock {
  const lost = new AbortController();
  const beat = async () => {
    const found = await readLock(path);
    if (found === 'absent' || found.holder?.owner !== me.owner) {
      lost.abort(new Error(`lock file ${path} no longer names this process`));
      return;
    }
    const now = new Date();
    await utimes(path, now, now);
  };
  const timer = setInterval(() => {
    if (lost.signal.aborted) return clearInterval(timer);
    void beat().catch((err: unknown) => lost.abort(err));
  }, checkMs);
  timer.unref();
  return {
    path,
    lost: lost.signal,
    async release() {
      clearInterval(timer);
      holdingHere(me.owner, false);
      const found = await readLock(path).catch(() => 'absent' as const);
      if (found !== 'absent' && found.holder?.owner === me.owner) await unlink(path).catch(() => {});
    },
  };
}
