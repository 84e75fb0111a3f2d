// The credential budget on both backends: a window's burst then a wait, an abort ends a wait,
// calls in flight bounded across "processes" (two Budget objects on one Redis), a dead process's
// lease expires, a pause set by one is waited out by the other, a learned limit tightens the
// configured one, and a wait past maxWaitMs is a BudgetExhaustedError saying when it resets.
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createBudget,
  createBudgets,
  credentialKey,
  memoryBackend,
  redisBackend,
  windowShape,
  type BudgetBackend,
} from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';
import { AbortedError, BudgetExhaustedError } from '../../src/errors.js';
import { busiestWindow } from '../queue/deploy.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

let redis: Redis;
const prefix = uniquePrefix();
beforeAll(() => void (redis = testRedis()));
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const opts = { label: 'test budget', maxWaitMs: 60_000 };
const tick = () => new Promise((r) => setTimeout(r, 20));

describe.each([
  ['memory', () => memoryBackend()],
  ['redis', () => redisBackend(redis, prefix)],
] as Array<[string, () => BudgetBackend]>)('budget on %s', (_name, backend) => {
  it("lets a window's requests through, then makes the next wait; an abort ends the wait", async () => {
    const b = createBudget(backend(), credentialKey('t', String(Math.random())), { perSecond: 2 }, opts, silentLogger);
    (await b.acquire()).release();
    (await b.acquire()).release();
    const controller = new AbortController();
    let settled = false;
    const third = b.acquire(controller.signal).then(
      () => (settled = true),
      (e: unknown) => e,
    );
    await tick();
    expect(settled).toBe(false);
    controller.abort();
    expect(await third).toBeInstanceOf(AbortedError);
  });

  it('a wait longer than maxWaitMs is BudgetExhaustedError with the reset time', async () => {
    const b = createBudget(
      backend(),
      credentialKey('t', String(Math.random())),
      { perDay: 1 },
      { label: 'feed source x', maxWaitMs: 1000 },
      silentLogger,
    );
    (await b.acquire()).release();
    const err = await b.acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    const reset = (err as BudgetExhaustedError).resetAt.getTime();
    expect(reset).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((err as Error).message).toMatch(
      /feed source x: the request budget is spent \(1 requests per day\); it resets at \d{4}-/,
    );
  });

  it('a learned limit lower than the configured one holds, counting what was already spent', async () => {
    const b = createBudget(
      backend(),
      credentialKey('t', String(Math.random())),
      { perMinute: 100 },
      { ...opts, maxWaitMs: 1000 },
      silentLogger,
    );
    for (let i = 0; i < 3; i++) (await b.acquire()).release();
    await b.learnLimit('perMinute', 3);
    expect(await b.acquire().catch((e: unknown) => e)).toBeInstanceOf(BudgetExhaustedError);
  });

  it('a per-second limit holds over any sliding second, not only per calendar window', async () => {
    const b = createBudget(backend(), credentialKey('t', String(Math.random())), { perSecond: 3 }, opts, silentLogger);
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      (await b.acquire()).release();
      times.push(Date.now());
    }
    expect(busiestWindow(times, 1000)).toBeLessThanOrEqual(3);
  });

  it("a call in flight counts in its window while renewed, a dead process's for its heldMs and a window", async () => {
    const back = backend();
    const key = credentialKey('t', String(Math.random()));
    const req = (id: string) => ({
      id,
      sliding: [{ window: 'perSecond' as const, points: 1, durationSec: 1 }],
      // renewed every 200 ms below: a renewal may come 800 ms late on a loaded machine and still find it held
      heldMs: 1000,
    });
    const take = async (id: string) => {
      const r = await back.take(key, req(id));
      return r.ok ? 'ok' : r.reason;
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    expect(await take('dead')).toBe('ok'); // never settled, never renewed
    expect(await take('next')).toBe('window');
    await sleep(2100); // its heldMs and the window (with its margin) passed
    expect(await take('alive')).toBe('ok');
    for (let i = 0; i < 12; i++) {
      await sleep(200); // 2.4 s in flight, renewed: past its heldMs and a window, so only the renewals hold it
      await back.renewLease(key, req('alive'));
    }
    expect(await take('next')).toBe('window');
    await back.settle(key, req('alive')); // answered now: it counts a window from now
    expect(await take('next')).toBe('window');
  });

  it('no limit at all never waits', async () => {
    const b = createBudget(backend(), credentialKey('t', String(Math.random())), {}, opts, silentLogger);
    for (let i = 0; i < 200; i++) (await b.acquire()).release();
  });
});

describe('budget shared through Redis by two processes', () => {
  it('holds calls in flight to the limit over both, and frees a slot when a call ends', async () => {
    const key = credentialKey('t', String(Math.random()));
    const a = createBudget(redisBackend(redis, prefix), key, { concurrency: 2 }, opts, silentLogger);
    const b = createBudget(redisBackend(redis, prefix), key, { concurrency: 2 }, opts, silentLogger);
    const p1 = await a.acquire();
    const p2 = await b.acquire();
    let third = false;
    const waiting = a.acquire().then((p) => ((third = true), p));
    await tick();
    await tick();
    expect(third).toBe(false);
    p2.release();
    const p3 = await waiting;
    expect(third).toBe(true);
    p1.release();
    p3.release();
  });

  it('a lease of a process that died (never released, never renewed) expires', async () => {
    const key = credentialKey('t', String(Math.random()));
    const back = redisBackend(redis, prefix);
    expect(
      await back.take(key, { id: 'dead-process', lease: { limit: 1, ttlMs: 300 }, sliding: [], heldMs: 300 }),
    ).toEqual({
      ok: true,
    });
    const b = createBudget(back, key, { concurrency: 1 }, opts, silentLogger);
    const permit = await b.acquire(AbortSignal.timeout(5000));
    permit.release();
  });

  it('a pause set by one is waited out by the other', async () => {
    const key = credentialKey('t', String(Math.random()));
    const a = createBudget(redisBackend(redis, prefix), key, { perSecond: 100 }, opts, silentLogger);
    const b = createBudget(redisBackend(redis, prefix), key, { perSecond: 100 }, opts, silentLogger);
    const until = Date.now() + 400;
    await a.pauseUntil(until, 'HTTP 429');
    (await b.acquire()).release();
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    expect((await b.pause())?.reason).toBe('HTTP 429');
    // a shorter pause never cuts a longer one short
    await a.pauseUntil(Date.now() + 5000, 'long');
    await b.pauseUntil(Date.now() + 10, 'short');
    expect((await a.pause())?.reason).toBe('long');
  });

  it('the keys name a hash of the credential, never the secret', async () => {
    const secret = 'super-secret-token-123';
    const b = createBudgets(redisBackend(redis, prefix), silentLogger).budget(
      credentialKey('feed', 'https://mls.example', secret),
      { perSecond: 5, concurrency: 1 },
      opts,
    );
    (await b.acquire()).release();
    await b.pauseUntil(Date.now() + 10, 'x');
    const keys = await redis.keys(`${prefix}:budget:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toContain(secret);
  });
});

describe('the memory and Redis backends', () => {
  it('agree on a sequence of takes and settles (lease, minute window, restamp, pause)', async () => {
    // a minute window: nothing here expires while the sequence runs, however slow the machine
    const run = async (back: BudgetBackend) => {
      const key = credentialKey('t', String(Math.random()));
      const req = (id: string) => ({
        id,
        lease: { limit: 2, ttlMs: 60_000 },
        sliding: [{ window: 'perMinute' as const, points: 3, durationSec: 60 }],
        heldMs: 60_000,
      });
      const seen: string[] = [];
      const take = async (id: string) => {
        const r = await back.take(key, req(id));
        seen.push(`${id}:${r.ok ? 'ok' : r.reason}`);
      };
      await take('a');
      await take('b');
      await take('c'); // two in flight: no slot
      await back.settle(key, req('a'));
      await take('c');
      await back.settle(key, req('b'));
      await back.settle(key, req('a')); // twice: harmless
      await take('d'); // three in the minute: the window is full, restamps or not
      await back.settle(key, req('c'));
      await take('d');
      await back.pause(key, Date.now() + 60_000, 'HTTP 429');
      await take('e');
      return seen;
    };
    const memory = await run(memoryBackend());
    expect(memory).toEqual(['a:ok', 'b:ok', 'c:lease', 'c:ok', 'd:window', 'd:window', 'e:paused']);
    expect(await run(redisBackend(redis, prefix))).toEqual(memory);
  });
});

describe('window shape', () => {
  it('is whole requests over whole seconds, never more than the limit', () => {
    expect(windowShape('perSecond', 20)).toEqual({ points: 20, durationSec: 1 });
    expect(windowShape('perSecond', 2.5)).toEqual({ points: 2, durationSec: 1 });
    expect(windowShape('perSecond', 0.5)).toEqual({ points: 1, durationSec: 2 });
    expect(windowShape('perDay', 40_000)).toEqual({ points: 40_000, durationSec: 86_400 });
  });
});
