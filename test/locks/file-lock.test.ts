// Locks that know their holder: a lock file is taken at once only when its holder is certainly gone,
// which PIDs can show only in this PID namespace under this running kernel (same boot id): a dead
// PID, a PID now another process, a PID equal to the caller's own. A holder anywhere else (another
// PID namespace, another boot id on the same host name, a record without them) keeps the lock while
// its heartbeat moves, judged by the reader's own clock. The same holder rules guard the Redis lock
// of a foreground run.
import '../setup/needs-redis.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acquireForegroundLock,
  acquireTargetLock,
  chatbotLockName,
  targetLockKey,
} from '../../src/locks/target-lock.js';
import { lockHolder, tryLockFile } from '../../src/locks/file-lock.js';
import { holderGone, newHolder, processStartTime, type LockHolder } from '../../src/locks/lock-holder.js';
import { REDIS_URL } from '../queue/helpers.js';

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
    ["the caller's own PID in its own PID namespace and boot (a killed run's leftover)", () => ({ pid: process.pid })],
  ])('%s: taken at once', async (_, patch) => {
    const path = await leftover(patch());
    const lock = await tryLockFile(path, 'test');
    expect(lock).toBeDefined();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await lock!.release();
  });

  it.each<[string, () => Partial<LockHolder>]>([
    [
      "the caller's own PID in another PID namespace (PID 1 of another container, same host name)",
      () => ({ pid: process.pid, pidNs: 'pid:[4026530000]' }),
    ],
    [
      "the caller's own PID under another boot id, same host name (another machine of a cloned image)",
      () => ({ pid: process.pid, bootId: '00000000-0000-4000-8000-000000000000' }),
    ],
    ['a dead PID under another boot id', () => ({ pid: 2 ** 22 + 7, bootId: '00000000-0000-4000-8000-000000000000' })],
    ['a record without boot id or PID namespace', () => ({ pid: process.pid, bootId: undefined, pidNs: undefined })],
  ])('%s: kept until its heartbeat stands still for the bound, by the taker’s own clock', async (_, patch) => {
    const path = await leftover(patch());
    expect(await tryLockFile(path, 'test', { staleMs: 1500 })).toBeUndefined();
    expect(await tryLockFile(path, 'test', { staleMs: 1500 })).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1600));
    const lock = await tryLockFile(path, 'test', { staleMs: 1500 });
    expect(lock).toBeDefined();
    await lock!.release();
  });

  it('a holder that beats keeps it from a taker with a short bound; when the file is taken from it, it learns so', async () => {
    const path = join(dir, 'beat.lock');
    const lock = (await tryLockFile(path, 'test', { checkMs: 20 }))!;
    // as another process would see it: another PID namespace, so only the heartbeat speaks
    const record = JSON.parse(await readFile(path, 'utf8')) as LockHolder;
    await writeFile(`${path}.tmp`, JSON.stringify({ ...record, pidNs: 'pid:[4026530000]' }));
    await rename(`${path}.tmp`, path); // whole, as a lock file always is: the holder's beat never reads half of it
    // looked at for three times the bound: the beats (every 20 ms) keep moving
    for (let i = 0; i < 15; i++) {
      expect(await tryLockFile(path, 'test', { staleMs: 500 })).toBeUndefined();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(lock.lost.aborted).toBe(false);
    await writeFile(path, JSON.stringify({ ...newHolder('someone'), pid: child.pid }));
    await new Promise((resolve) =>
      lock.lost.aborted ? resolve(undefined) : lock.lost.addEventListener('abort', resolve),
    );
    await lock.release();
    expect(JSON.parse(await readFile(path, 'utf8')).what).toBe('someone'); // release leaves another's file alone
  });

  it('holderGone names the reason, and finds nothing where PIDs do not compare', () => {
    const me = newHolder('x');
    expect(holderGone({ ...me, pid: process.pid, owner: 'not mine' })).toMatch(/this process's own/);
    expect(holderGone(me)).toMatch(/this process's own/); // a record not taken through a lock of this process
    expect(holderGone({ ...me, bootId: 'another-boot' })).toBeUndefined();
    expect(holderGone({ ...me, pidNs: 'pid:[1]' })).toBeUndefined();
    expect(holderGone({ ...me, host: 'elsewhere', pid: 2 ** 22 + 7 })).toBeUndefined();
  });
});

describe('the Redis lock of a foreground run', () => {
  const prefix = `fstest-holder-${process.pid}-${Date.now()}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });
  const key = targetLockKey(prefix, chatbotLockName({ chatbot: 'SN-H' }, 'sync'));
  /** a foreground run's lock of SN-H in this Redis, waiting `waitMs` */
  type Options = Parameters<typeof acquireForegroundLock>[0];
  const foreground = (
    waitMs: number,
    more: Partial<Omit<Options, 'onUnreleased'>> = {},
    onUnreleased: Options['onUnreleased'] = (notice) => {
      throw new Error(`not expected: ${notice}`);
    },
  ) =>
    acquireForegroundLock({
      chatbot: 'SN-H',
      redis: { connection: redis, prefix },
      lockDir: dir,
      waitMs,
      ttlMs: 8000,
      ...more,
      onUnreleased,
    });

  it('a lock whose holder record names a gone process is taken at once; a live holder keeps it', async () => {
    await redis.set(key, 'cli:dead', 'PX', 60_000);
    await redis.set(
      `${key}:holder`,
      JSON.stringify({ ...newHolder('killed'), owner: 'cli:dead', pid: 2 ** 22 + 7 }),
      'PX',
      60_000,
    );
    const taken = await foreground(0);
    expect(taken).toBeDefined();
    // named for a person, as the lock file names it (a waiting run prints it), not by its owner id
    expect(JSON.parse((await redis.get(`${key}:holder`))!)).toMatchObject({
      pid: process.pid,
      host: hostname(),
      what: 'feedsync sync SN-H',
    });
    await taken!.release();
    expect(await redis.exists(key, `${key}:holder`)).toBe(0);

    const job = (await acquireTargetLock(redis, key, 'job-1', 60_000))!;
    await redis.set(
      `${key}:holder`,
      JSON.stringify({
        ...newHolder('job-1'),
        owner: 'job-1',
        pid: child.pid,
        startTime: processStartTime(child.pid!),
      }),
      'PX',
      60_000,
    );
    expect(await foreground(0)).toBeUndefined();
    // a wait is said once, as it begins, naming the holder (sync and undo print it)
    const said: unknown[] = [];
    expect(await foreground(1200, { onWait: (holder) => said.push(holder) })).toBeUndefined();
    expect(said).toEqual([expect.objectContaining({ what: 'job-1', pid: child.pid })]);
    await job.release();
  });

  it('a release Redis refuses is said (the chatbot, why, when the lock frees itself) and resolves; the lock is left to its ttl', async () => {
    // the same connection but for the release's script, which a connection lost meanwhile refuses
    const refusing = new Proxy(redis, {
      get: (target, name) => {
        const v: unknown = Reflect.get(target, name);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) =>
          name === 'eval' && String(args[0]).includes('local freed')
            ? Promise.reject(new Error('Connection is closed.'))
            : (v as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const said: Array<{ notice: string; err: unknown }> = [];
    const lock = await foreground(0, { redis: { connection: refusing, prefix }, ttlMs: 1500 }, (notice, err) =>
      said.push({ notice, err }),
    );
    expect(lock).toBeDefined();
    await expect(lock!.release()).resolves.toBeUndefined();
    expect(said).toEqual([
      {
        notice:
          'the lock of chatbot SN-H was not released (Connection is closed.): it frees itself within 2 s (worker.lockDurationMs), and a run of the chatbot waits for it until then',
        err: expect.objectContaining({ message: 'Connection is closed.' }),
      },
    ]);
    // nothing else: the lock stays until its ttl (its renewal stopped), then a run takes it
    expect(await redis.exists(key)).toBe(1);
    const next = await foreground(5000);
    expect(next).toBeDefined();
    await next!.release();
  });

  it("a holder under another boot id or in another PID namespace is left to the lock's expiry, even naming this PID", async () => {
    for (const patch of [{ bootId: '00000000-0000-4000-8000-000000000000' }, { pidNs: 'pid:[4026530000]' }]) {
      await redis.set(key, 'cli:other', 'PX', 60_000);
      await redis.set(
        `${key}:holder`,
        JSON.stringify({ ...newHolder('other'), owner: 'cli:other', pid: process.pid, ...patch }),
        'PX',
        60_000,
      );
      expect(await foreground(0)).toBeUndefined();
      expect(await redis.get(key)).toBe('cli:other');
      await redis.del(key, `${key}:holder`);
    }
  });
});
