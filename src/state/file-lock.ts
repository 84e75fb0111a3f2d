// A lock held by a file created with O_EXCL: for one host, without Redis. The file names its
// holder's pid; a holder that died (no such process) leaves a stale file, which the next taker
// removes. A holder checks every `checkMs` that the file still names it, else `lost` fires.
import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FileLock {
  readonly path: string;
  /** the file no longer names this holder (removed by hand, or taken as stale): stop writing */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  owner: string;
  at: string;
}

/** Take the lock, or undefined when a live process holds it. */
export async function tryLockFile(path: string, what: string, checkMs = 2000): Promise<FileLock | undefined> {
  await mkdir(dirname(path), { recursive: true });
  const me: Holder = { pid: process.pid, owner: `${what} ${randomUUID()}`, at: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(JSON.stringify(me));
        await fh.sync();
      } finally {
        await fh.close();
      }
      return held(path, me, checkMs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await readHolder(path);
      if (holder && alive(holder.pid)) return undefined;
      // stale (its process is gone) or unreadable (a holder died mid-write): clear it and try once more
      await unlink(path).catch(() => {});
    }
  }
  return undefined;
}

/** Take the lock, polling every `pollMs` while a live process holds it, until `waitMs` have passed. */
export async function lockFile(path: string, what: string, opts: { waitMs: number; pollMs?: number; signal?: AbortSignal }): Promise<FileLock | undefined> {
  const until = Date.now() + opts.waitMs;
  for (;;) {
    const lock = await tryLockFile(path, what);
    if (lock || Date.now() >= until || opts.signal?.aborted) return lock;
    await sleep(Math.min(opts.pollMs ?? 250, Math.max(1, until - Date.now())), undefined, { signal: opts.signal }).catch(() => {});
  }
}

/** Who holds the lock, when a live process does. */
export async function lockHolder(path: string): Promise<Holder | undefined> {
  const holder = await readHolder(path);
  return holder && alive(holder.pid) ? holder : undefined;
}

function held(path: string, me: Holder, checkMs: number): FileLock {
  const lost = new AbortController();
  const check = async () => {
    const holder = await readHolder(path);
    if (holder?.owner !== me.owner) lost.abort(new Error(`lock file ${path} no longer names this process`));
  };
  const timer = setInterval(() => void check().catch((err: unknown) => lost.abort(err)), checkMs);
  timer.unref();
  return {
    path,
    lost: lost.signal,
    async release() {
      clearInterval(timer);
      if ((await readHolder(path))?.owner === me.owner) await unlink(path).catch(() => {});
    },
  };
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const v: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (v && typeof v === 'object' && typeof (v as Holder).pid === 'number' && typeof (v as Holder).owner === 'string') return v as Holder;
    return undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
