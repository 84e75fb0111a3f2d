// acquireTargetLocks (locks/target-lock.ts), a queued job's locks taken in one script and released
// in one, held to the rule of taking them one by one (acquireTargetLock through lockChatbots,
// all or none): the same locks, holder records and lines in Redis, the same first busy lock, none
// left behind, and two jobs over overlapping chatbots never both running. On the real Redis.
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  acquireTargetLock,
  acquireTargetLocks,
  freeIfHolderGone,
  lockChatbots,
  lockOrder,
  targetLockKey,
  type LockWaiters,
} from '../../src/locks/target-lock.js';
import { newHolder } from '../../src/locks/lock-holder.js';
import { dropPrefix, testRedis, uniquePrefix, until } from '../queue/helpers.js';

let redis: Redis;
let prefix: string;

beforeEach(() => {
  redis = testRedis();
  prefix = uniquePrefix();
});

afterEach(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

/** A line of waiters that records each wake; `asleep`: owners that are not delayed (wake refused). */
function waitersLog(asleep: ReadonlySet<string> = new Set()): LockWaiters & { woken: string[] } {
  const woken: string[] = [];
  return {
    ttlMs: 60_000,
    woken,
    wake: async (owner) => {
      woken.push(owner);
      return !asleep.has(owner);
    },
  };
}

const NAMES = ['chatbot:SN-C:sync', 'chatbot:SN-A:sync', 'chatbot:SN-B:sync', 'chatbot:SN-A:sync', 'chatbot:SN-D:sync'];
const keysOf = (p: string, names: Iterable<string>) => lockOrder(names).map((n) => targetLockKey(p, n));

/** The owner of a taking of a lock (its value, and its holder record's owner: `owner#random`). */
const ownerOf = (taking: string | null) => taking?.replace(/#[^#]*$/, '') ?? null;

/**
 * What Redis holds of the locks: each lock's owner, whether its holder record names the same taking,
 * its line.
 */
async function lockState(p: string, names: Iterable<string>) {
  const out: Array<{ lock: string | null; holder: string | null; sameTaking: boolean; line: string[] }> = [];
  for (const key of keysOf(p, names)) {
    const text = await redis.get(`${key}:holder`);
    const holder = text === null ? null : (JSON.parse(text) as { owner: string }).owner;
    const lock = await redis.get(key);
    out.push({
      lock: ownerOf(lock),
      holder: ownerOf(holder),
      sameTaking: holder === lock,
      line: await redis.zrange(`${key}:waiters`, 0, -1),
    });
  }
  return out;
}

describe('acquireTargetLocks: the locks of a job in one script', () => {
  it('takes the same locks as one by one: each name once, the owner and its holder record on each, a TTL on both', async () => {
    const one = uniquePrefix();
    try {
      const waiters = waitersLog();
      const byOne = await lockChatbots(
        NAMES,
        (name) => acquireTargetLock(redis, targetLockKey(one, name), 'job-1', 5000, waiters),
        { allOrNone: true },
      );
      const together = await acquireTargetLocks(redis, keysOf(prefix, NAMES), 'job-1', 5000, waiters);
      expect('busy' in together).toBe(false);
      if ('busy' in together) return;
      expect(together.held).toHaveLength(byOne.held.length);
      expect(together.held).toHaveLength(4);
      expect(await lockState(prefix, NAMES)).toEqual(await lockState(one, NAMES));
      const takings = new Set<string | null>();
      for (const key of keysOf(prefix, NAMES)) {
        takings.add(await redis.get(key));
        expect(ownerOf(await redis.get(key))).toBe('job-1');
        expect(await redis.pttl(key)).toBeGreaterThan(0);
        expect(await redis.pttl(`${key}:holder`)).toBeGreaterThan(0);
      }
      // one taking of all of them, and not one by one's
      expect(takings.size).toBe(1);
      expect(takings.has(await redis.get(keysOf(one, NAMES)[0]!))).toBe(false);
      await together.release();
      for (const l of byOne.held) await l.release();
      // none left behind: no lock, no holder record, no line, of either way
      expect(await redis.keys(`${prefix}:lock:*`)).toEqual([]);
      expect(await redis.keys(`${one}:lock:*`)).toEqual([]);
    } finally {
      await dropPrefix(redis, one);
    }
  });

  it('at a busy lock takes none and joins the line of the first busy one in lock order, as one by one does', async () => {
    const one = uniquePrefix();
    try {
      for (const p of [prefix, one]) {
        expect(await acquireTargetLock(redis, targetLockKey(p, 'chatbot:SN-B:sync'), 'other-b', 5000)).toBeDefined();
        expect(await acquireTargetLock(redis, targetLockKey(p, 'chatbot:SN-D:sync'), 'other-d', 5000)).toBeDefined();
      }
      const byOne = await lockChatbots(
        NAMES,
        (name) => acquireTargetLock(redis, targetLockKey(one, name), 'job-1', 5000, waitersLog()),
        { allOrNone: true },
      );
      const together = await acquireTargetLocks(redis, keysOf(prefix, NAMES), 'job-1', 5000, waitersLog());
      expect(byOne.held).toEqual([]);
      expect([...byOne.refused.keys()]).toEqual(['chatbot:SN-B:sync']);
      expect(together).toEqual({ busy: lockOrder(NAMES).indexOf('chatbot:SN-B:sync') });
      const state = await lockState(prefix, NAMES);
      expect(state).toEqual(await lockState(one, NAMES));
      expect(state.map((s) => s.lock)).toEqual([null, 'other-b', null, 'other-d']);
      expect(state.map((s) => s.line)).toEqual([[], ['job-1'], [], []]);
    } finally {
      await dropPrefix(redis, one);
    }
  });

  it('the release frees every lock and wakes the oldest waiter of each (the next in line when it is not delayed)', async () => {
    const keys = keysOf(prefix, NAMES);
    const waiters = waitersLog(new Set(['w-not-delayed']));
    const got = await acquireTargetLocks(redis, keys, 'job-1', 5000, waiters);
    if ('busy' in got) throw new Error('busy');
    // w-a waits for SN-A; w-not-delayed then w-b2 for SN-B; nobody for SN-C and SN-D
    expect(await acquireTargetLocks(redis, [keys[0]!], 'w-a', 5000, waiters)).toEqual({ busy: 0 });
    expect(await acquireTargetLocks(redis, [keys[1]!], 'w-not-delayed', 5000, waiters)).toEqual({ busy: 0 });
    await new Promise((r) => setTimeout(r, 5)); // (the line orders by the time of joining, in ms)
    expect(await acquireTargetLocks(redis, [keys[1]!], 'w-b2', 5000, waiters)).toEqual({ busy: 0 });
    await got.release();
    expect(waiters.woken).toEqual(['w-a', 'w-not-delayed', 'w-b2']);
    for (const key of keys) expect(await redis.exists(key, `${key}:holder`)).toBe(0);
  });

  it('releases only what is still its own: a lock taken by another after it expired stays theirs', async () => {
    const keys = keysOf(prefix, ['chatbot:SN-A:sync', 'chatbot:SN-B:sync']);
    const got = await acquireTargetLocks(redis, keys, 'job-1', 5000, waitersLog());
    if ('busy' in got) throw new Error('busy');
    await redis.set(keys[1]!, 'job-2', 'PX', 5000);
    await got.release();
    expect(await redis.get(keys[0]!)).toBeNull();
    expect(await redis.get(keys[1]!)).toBe('job-2');
  });

  it('two jobs over overlapping chatbots, taking and releasing at once many times: never both hold, nothing leaked', async () => {
    const a = keysOf(prefix, ['chatbot:SN-1:sync', 'chatbot:SN-2:sync', 'chatbot:SN-3:sync']);
    const b = keysOf(prefix, ['chatbot:SN-3:sync', 'chatbot:SN-4:sync', 'chatbot:SN-2:sync']);
    let holding = 0;
    let most = 0;
    let runs = 0;
    const job = async (owner: string, keys: string[]) => {
      for (let i = 0; i < 30; i++) {
        const got = await acquireTargetLocks(redis, keys, owner, 5000, waitersLog());
        if ('busy' in got) continue;
        holding++;
        runs++;
        most = Math.max(most, holding);
        await new Promise((r) => setTimeout(r, 1));
        holding--;
        await got.release();
      }
    };
    await Promise.all([job('job-a', a), job('job-b', b)]);
    expect(most).toBe(1);
    expect(runs).toBeGreaterThan(0);
    expect(await redis.keys(`${prefix}:lock:chatbot:*:sync`)).toEqual([]);
    expect(await redis.keys(`${prefix}:lock:chatbot:*:sync:holder`)).toEqual([]);
  });
});

describe("a job's locks renewed together", () => {
  it('one call a renewal period for all of them, each kept alive; one of them lost is the whole taking lost', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `chatbot:SN-${i}:sync`);
    const keys = keysOf(prefix, names);
    const counted = testRedis();
    let evals = 0;
    const send = counted.eval.bind(counted);
    counted.eval = ((...args: Parameters<typeof send>) => {
      evals++;
      return send(...args);
    }) as typeof counted.eval;
    try {
      const got = await acquireTargetLocks(counted, keys, 'job-1', 1200, waitersLog());
      if ('busy' in got) throw new Error('busy');
      evals = 0;
      // 4 TTLs: every lock outlives its TTL, renewed 4 a TTL (a quarter apart), 16 calls, not 16 a lock
      await new Promise((r) => setTimeout(r, 4800));
      expect(evals).toBeGreaterThanOrEqual(12);
      expect(evals).toBeLessThanOrEqual(17);
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
      for (const key of keys) expect(await redis.pttl(`${key}:holder`)).toBeGreaterThan(0);
      expect(got.held.every((l) => !l.lost.aborted)).toBe(true);

      await redis.set(keys[7]!, 'job-2', 'PX', 5000); // (expired, and taken by another)
      await until('the taking to lose it', async () => got.held[0]!.lost.aborted, 5000);
      expect(got.held.every((l) => l.lost.aborted)).toBe(true);
      expect(String(got.held[0]!.lost.reason)).toContain(`another holder has ${keys[7]}`);
      await got.release();
      expect(await redis.get(keys[7]!)).toBe('job-2');
      expect(await redis.exists(keys[0]!)).toBe(0);
    } finally {
      counted.disconnect();
    }
  });

  it('a lock released alone is no longer renewed, and the others are not lost for it', async () => {
    const keys = keysOf(prefix, ['chatbot:SN-A:sync', 'chatbot:SN-B:sync']);
    // A TTL of 10 s, renewed every 2.5 s: with 1.2 s the hold stopped when no renewal was confirmed
    // within 0.8 s, which a loaded machine's event-loop lag exceeded (lost, at load 30 on 2 cores).
    const got = await acquireTargetLocks(redis, keys, 'job-1', 10_000, waitersLog());
    if ('busy' in got) throw new Error('busy');
    await got.held[0]!.release();
    // Two renewals after the release (each sets the TTL whole again). Had the released lock still
    // been renewed, the renewal would have found it gone and the hold lost; the answers come on this
    // connection, so each renewal's is heard before the PTTL read that sees it.
    let last = await redis.pttl(keys[1]!);
    // (a hold lost renews no more: then on at once to the assertion that says so)
    const renewed = async () => {
      if (got.held[1]!.lost.aborted) return true;
      const now = await redis.pttl(keys[1]!);
      const rose = now > last;
      last = now;
      return rose;
    };
    await until('a renewal of the other lock', renewed);
    await until('a second renewal of the other lock', renewed);
    expect(got.held[1]!.lost.aborted).toBe(false);
    expect(await redis.exists(keys[0]!)).toBe(0);
    expect(await redis.pttl(keys[1]!)).toBeGreaterThan(0);
    await got.release();
    expect(await redis.exists(keys[1]!)).toBe(0);
  });
});

describe('a lock is held by one taking alone', () => {
  // A job can run twice at once: BullMQ took it again after its lock expired while its first
  // attempt went on (test/queue/two-attempts.test.ts). The second attempt is another taking.
  it('the same owner taking it again while it is held waits in line, as another job would, and gets it once it is released', async () => {
    const keys = keysOf(prefix, ['chatbot:SN-A:sync']);
    const waiters = waitersLog();
    const first = await acquireTargetLocks(redis, keys, 'job-1', 5000, waiters);
    if ('busy' in first) throw new Error('busy');
    expect(await acquireTargetLocks(redis, keys, 'job-1', 5000, waiters)).toEqual({ busy: 0 });
    expect(await acquireTargetLock(redis, keys[0]!, 'job-1', 5000)).toBeUndefined();
    expect(await redis.zrange(`${keys[0]}:waiters`, 0, -1)).toEqual(['job-1']);
    await first.release();
    expect(waiters.woken).toEqual(['job-1']);
    const second = await acquireTargetLocks(redis, keys, 'job-1', 5000, waiters);
    expect('busy' in second).toBe(false);
    if (!('busy' in second)) await second.release();
  });

  it('an earlier taking of the same owner whose lock expired and was taken again loses it at its next renewal', async () => {
    const key = targetLockKey(prefix, 'chatbot:SN-A:sync');
    const first = (await acquireTargetLock(redis, key, 'job-1', 3000))!;
    await redis.del(key, `${key}:holder`); // (expired)
    const second = (await acquireTargetLock(redis, key, 'job-1', 5000))!;
    await until('the first taking to lose it', async () => first.lost.aborted, 10_000).catch(() => undefined);
    expect(first.lost.aborted).toBe(true);
    expect(second.lost.aborted).toBe(false);
    await first.release();
    expect(ownerOf(await redis.get(key))).toBe('job-1');
    await second.release();
    expect(await redis.exists(key)).toBe(0);
  });

  it('a holder whose renewals go unanswered stops while the lock is still its own: nobody else could have taken it yet', async () => {
    const key = targetLockKey(prefix, 'chatbot:SN-A:sync');
    const cut = testRedis();
    try {
      const lock = (await acquireTargetLock(cut, key, 'job-1', 3000))!;
      // the holder's link to Redis is cut (its node away): nothing it sends arrives, nothing comes
      // back, and the TTL runs on in Redis
      cut.stream.cork();
      cut.stream.pause();
      await new Promise((r) => lock.lost.addEventListener('abort', r, { once: true }));
      expect(await redis.pttl(key)).toBeGreaterThan(0);
      expect(await acquireTargetLock(redis, key, 'job-2', 3000)).toBeUndefined();
      expect(String(lock.lost.reason)).toMatch(/no renewal confirmed in time/);
    } finally {
      cut.disconnect();
    }
  });
});

describe('a holder whose event loop was blocked', () => {
  // A long synchronous step or a GC pause right after a renewal was sent: Redis answers it during the
  // block, but Node reads the answer only when it next polls its sockets, and the timers that fell
  // due meanwhile run before that poll (a block in an I/O callback or an immediate ends its turn;
  // the turn's last phase is the timers', the next turn's poll comes after). So the deadline timer
  // fired before the renewal that moved the deadline on was read, and the run stopped for nothing.
  it('renewed while the loop was blocked past its deadline: the answer waiting in the socket counts, the run goes on', async () => {
    const key = targetLockKey(prefix, 'chatbot:SN-A:sync');
    const slow = testRedis();
    const send = slow.eval.bind(slow);
    let blocked = false;
    slow.eval = ((...args: Parameters<typeof send>) => {
      // the first renewal (RENEW_ALL: KEYS the lock and its holder, ARGV the taking and the TTL)
      if (blocked || args[1] !== 2 || args.length !== 6) return send(...args);
      blocked = true;
      // answered 50 ms late (a blocking pop of nothing ahead of it on the connection): inside the block below
      void slow.blpop(`${prefix}:nothing`, 0.05);
      const answer = send(...args);
      // the loop blocked from its next turn for 1.6 s: past the deadline the taking set (2 s after it,
      // a third of the 3 s TTL before its expiry; this renewal is sent 0.75 s after it), short of the
      // one this renewal sets (2 s after it is sent)
      setImmediate(() => {
        const end = performance.now() + 1600;
        while (performance.now() < end);
      });
      return answer;
    }) as typeof slow.eval;
    try {
      const lock = (await acquireTargetLock(slow, key, 'job-1', 3000))!;
      await until('the renewal sent', async () => blocked);
      // (past the block, and a renewal after it)
      await new Promise((r) => setTimeout(r, 2500));
      expect(lock.lost.reason).toBeUndefined();
      expect(ownerOf(await redis.get(key))).toBe('job-1');
      expect(await redis.pttl(key)).toBeGreaterThan(0);
      await lock.release();
      expect(await redis.exists(key)).toBe(0);
    } finally {
      slow.disconnect();
    }
  });
});

describe('a job whose hold of its locks was lost', () => {
  it('keeps them from every other taking in its own process until its run releases them (no early free as "this process\'s own")', async () => {
    const keys = keysOf(prefix, ['chatbot:SN-A:sync', 'chatbot:SN-B:sync']);
    // the job's own connection: its renewals fail (Redis refusing them for a moment), the lock stays in Redis
    const own = testRedis();
    try {
      const got = await acquireTargetLocks(own, keys, 'job-1', 3000, waitersLog());
      if ('busy' in got) throw new Error('busy');
      const refused = vi.spyOn(own, 'eval').mockRejectedValue(new Error('renewal refused'));
      await until('the hold to be lost', async () => got.held[0]!.lost.aborted);
      refused.mockRestore();
      const taking = await redis.get(keys[0]!);
      expect(ownerOf(taking)).toBe('job-1');
      // the run still ends its calls in flight (the third of the TTL its hold stops before the expiry):
      // another job of this worker that finds the lock busy must not free it as a holder gone
      expect(await acquireTargetLocks(redis, keys, 'job-2', 3000, waitersLog())).toEqual({ busy: 0 });
      expect(await freeIfHolderGone(redis, keys[0]!)).toBeUndefined();
      expect(await redis.get(keys[0]!)).toBe(taking);
      // once the run released them, they are free
      await got.release();
      expect(await redis.exists(...keys)).toBe(0);
    } finally {
      await own.quit();
    }
  });
});

describe('the locks of a taking whose holder is gone', () => {
  it("are all freed by the first that finds it gone, in one call; another taking's lock stays", async () => {
    // a routed feed's job held 100 chatbots' locks under one taking, and its process died (here: a record
    // naming this process, its taking not held here, which holderGone judges gone as it does a dead PID)
    const names = Array.from({ length: 100 }, (_, i) => `chatbot:SN-${String(i).padStart(3, '0')}:sync`);
    const keys = keysOf(prefix, names);
    const dead = 'job-dead#1';
    const record = JSON.stringify({ ...newHolder('job dead'), owner: dead });
    for (const key of keys)
      await redis.set(key, dead, 'PX', 60_000).then(() => redis.set(`${key}:holder`, record, 'PX', 60_000));
    const live = targetLockKey(prefix, 'chatbot:SN-LIVE:sync');
    const kept = (await acquireTargetLock(redis, live, 'job-live', 60_000))!;
    try {
      expect(await freeIfHolderGone(redis, keys[0]!, [...keys, live])).toMatch(/this process's own/);
      expect(await redis.exists(...keys, ...keys.map((k) => `${k}:holder`))).toBe(0);
      expect(ownerOf(await redis.get(live))).toBe('job-live');
      const got = await acquireTargetLocks(redis, keys, 'job-new', 60_000, waitersLog());
      expect('busy' in got).toBe(false);
      if (!('busy' in got)) await got.release();
    } finally {
      await kept.release();
    }
  });
});
