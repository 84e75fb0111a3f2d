// Locks that know their holder (issue 23): a lock file is stale when its holder is gone by any of
// a dead PID, a PID now another process, a PID equal to the caller's own, another boot of the same
// host, or a heartbeat older than the bound; a live holder elsewhere keeps it while it beats. The
// same holder record guards the Redis lock of a foreground run.
import '../setup/needs-redis.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireForegroundLock, acquireTargetLock, chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { lockHolder, tryLockFile } from '../../src/locks/file-lock.js';
import { holderGone, newHolder, processStartTime, type LockHolder } from '../../src/locks/lock-holder.js';

let dir: string;
let child: ChildProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedsync-lock-'));
  child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
});
afterAll(async () => {
  child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** A lock file as another process would have left it: this host and boot unless `patch` says otherwise. */
async function leftover(patch: Partial<LockHolder>): Promise<string> {
  const path = join(dir, `l${++n}.lock`);
  const other = { ...newHolder('another run'), pid: child.pid!, startTime: processStartTime(child.pid!), ...patch };
  await writeFile(path, JSON.stringify(other));
  return path;
}

describe('a lock file is stale when its holder is gone', () => {
  it('a live holder on this host keeps it', async () => {
    const path = await leftover({});
    expect(await tryLockFile(path, 'test')).toBeUndefined();
    expect((await lockHolder(path))?.pid).toBe(child.pid);
  });

  it.each<[string, () => Partial<LockHolder>]>([
    ['a dead PID', () => ({ pid: 2 ** 22 + 7 })],
    ['a PID now another process (other start time)', () => ({ startTime: '1' })],
    ["the caller's own PID (a container's PID 1 after a restart)", () => ({ pid: process.pid })],
    ['another boot of this host', () => ({ bootId: '00000000-0000-4000-8000-000000000000' })],
  ])('%s: taken at once', async (_, patch) => {
    const path = await leftover(patch());
    const lock = await tryLockFile(path, 'test');
    expect(lock).toBeDefined();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await lock!.release();
  });

  it('a holder on another host: kept while its heartbeat is fresh, taken once it is older than the bound', async () => {
    const path = await leftover({ host: 'elsewhere', pid: process.pid });
    expect(await tryLockFile(path, 'test', { staleMs: 60_000 })).toBeUndefined();
    const old = new Date(Date.now() - 61_000);
    await utimes(path, old, old);
    const lock = await tryLockFile(path, 'test', { staleMs: 60_000 });
    expect(lock).toBeDefined();
    await lock!.release();
  });

  it('a holder refreshes its heartbeat while it holds the lock, and learns when the file is taken from it', async () => {
    const path = join(dir, 'beat.lock');
    const lock = (await tryLockFile(path, 'test', { checkMs: 20 }))!;
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    while ((await stat(path)).mtimeMs < Date.now() - 30_000) await new Promise((r) => setTimeout(r, 10));
    // this process holds it: its own PID does not make it stale to another taker here
    expect(await tryLockFile(path, 'test')).toBeUndefined();
    await writeFile(path, JSON.stringify({ ...newHolder('someone'), pid: child.pid }));
    await new Promise((resolve) => lock.lost.addEventListener('abort', resolve));
    await lock.release();
    expect(JSON.parse(await readFile(path, 'utf8')).what).toBe('someone'); // release leaves another's file alone
  });

  it('holderGone names the reason', () => {
    const me = newHolder('x');
    expect(holderGone({ ...me, pid: process.pid, owner: 'not mine' })).toMatch(/this process's own/);
    expect(holderGone(me)).toMatch(/this process's own/); // a record not taken through a lock of this process
  });
});

describe('the Redis lock of a foreground run', () => {
  const prefix = `fstest-holder-${process.pid}-${Date.now()}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });
  const key = targetLockKey(prefix, chatbotLockName({ chatbot: 'SN-H' }, 'sync'));

  it('a lock whose holder record names a gone process is taken at once; a live holder keeps it', async () => {
    await redis.set(key, 'cli:dead', 'PX', 60_000);
    await redis.set(`${key}:holder`, JSON.stringify({ ...newHolder('killed'), owner: 'cli:dead', pid: 2 ** 22 + 7 }), 'PX', 60_000);
    const taken = await acquireForegroundLock({ chatbot: 'SN-H', redis: { connection: redis, prefix }, lockDir: dir, waitMs: 0 });
    expect(taken).toBeDefined();
    expect(JSON.parse((await redis.get(`${key}:holder`))!)).toMatchObject({ pid: process.pid, host: hostname() });
    await taken!.release();
    expect(await redis.exists(key, `${key}:holder`)).toBe(0);

    const job = (await acquireTargetLock(redis, key, 'job-1', 60_000))!;
    await redis.set(`${key}:holder`, JSON.stringify({ ...newHolder('job-1'), owner: 'job-1', pid: child.pid, startTime: processStartTime(child.pid!) }), 'PX', 60_000);
    expect(await acquireForegroundLock({ chatbot: 'SN-H', redis: { connection: redis, prefix }, lockDir: dir, waitMs: 0 })).toBeUndefined();
    await job.release();
  });
});
