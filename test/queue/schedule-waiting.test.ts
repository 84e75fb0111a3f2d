// A schedule whose run outlasts its interval (a first sync of a million listings on a 5-minute
// cron), on the real Redis with a real BullMQ job scheduler, the real processor and workers: while
// the run holds its chatbot's lock, at most one later run of the schedule waits behind it; the
// other ticks end `skipped`, recorded with why, never failed. A run asked for by hand still waits
// and runs.
import '../setup/needs-redis.js';
import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/log.js';
import {
  chatbotLockName,
  createProcessor,
  enqueueJob,
  listRuns,
  startWorkers,
  targetLockKey,
  waitForJob,
  type JobDefinition,
  type RunReport,
  type WorkerSet,
} from '../../src/queue/index.js';
import { doneWaiting, waitsBehind } from '../../src/queue/schedule-wait.js';
import { keysOf, lockWaitersKey } from '../../src/redis/keys.js';
import { deferred, loadedConfig, processorDeps, redisAt, testRedis, until, useQueues } from './helpers.js';

const API = `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-tick-3a9d, sessionKey: ss-test-tick-7c1f }\n`;
const CHATBOT = 'SN-TICK';
const SCHEDULER = 'sync:a';
/** the scheduler's ticks in all: the first runs long, the seven after it come while it runs */
const TICKS = 8;

const q = useQueues();
const workers: WorkerSet[] = [];
// (before useQueues' own: the workers close before the queues and the connection)
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close(5000);
});

type Payload = { feed: string };

/**
 * The scheduler of a sync whose first run lasts until `letFirstEnd` (a slow first sync), on workers
 * of the real processor: `TICKS` ticks, one every 150 ms. Returns once the first run started; `ran`:
 * the job of each run, in order.
 */
async function scheduleSlowSync(): Promise<{ ran: string[]; letFirstEnd: () => void }> {
  const ran: string[] = [];
  const firstStarted = deferred();
  const firstEnds = deferred();
  const def: JobDefinition<Payload> = {
    name: 'listing-sync',
    kind: 'sync',
    payload: z.strictObject({ feed: z.string() }),
    exclusive: true,
    target: (p) => ({ feed: p.feed, chatbot: CHATBOT }),
    process: async (p, ctx): Promise<RunReport> => {
      ran.push(ctx.jobId);
      if (ran.length === 1) {
        firstStarted.resolve();
        await firstEnds.promise;
      }
      return { outcome: 'ok', summary: `synced ${p.feed}`, retryable: false };
    },
  };
  const processor = createProcessor(def, processorDeps(q.redis, q.prefix, loadedConfig(API), { busyDelayMs: 200 }));
  const settings = {
    redis: redisAt(q.prefix),
    concurrency: 4,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    watchdogMs: 60_000,
    logger: silentLogger,
  };
  workers.push(startWorkers(q.queues, { sync: processor }, settings));
  await q.queues.sync.upsertJobScheduler(
    SCHEDULER,
    { every: 150, limit: TICKS },
    { name: 'listing-sync', data: { feed: 'a' } },
  );
  await firstStarted.promise;
  return { ran, letFirstEnd: () => firstEnds.resolve() };
}

const ofScheduler = (j: Job | undefined): j is Job => j?.repeatJobKey === SCHEDULER;

/**
 * Once every tick after the first has been taken and judged, while the first run (`running`) still
 * holds the lock: the ticks waiting behind it (delayed, or back in the queue after their backstop
 * delay). Looked at when no other tick is in a worker (being judged, or rechecking the lock).
 */
async function waitingOnceJudged(running: string): Promise<string[]> {
  return until('every later tick to be taken while the first run holds the lock', async () => {
    const open = (await q.queues.sync.getJobs(['delayed', 'waiting', 'prioritized'], 0, -1)).filter(
      (j) => ofScheduler(j) && j.id !== running,
    );
    const active = await q.queues.sync.getJobs(['active'], 0, -1);
    if (active.some((j) => ofScheduler(j) && j.id !== running)) return undefined;
    // (a job no worker took yet is the scheduler's next tick, not yet due; each once: a job moving
    // from delayed to waiting meanwhile is in both lists)
    const waiting = [...new Set(open.filter((j) => j.processedOn).map((j) => j.id!))];
    const ended = (await q.queues.sync.getJobs(['completed', 'failed'], 0, -1)).filter(ofScheduler).length;
    return waiting.length + ended >= TICKS - 1 && waiting;
  });
}

async function allEnded(): Promise<boolean> {
  const c = await q.queues.sync.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
  return Object.values(c).every((n) => n === 0);
}

describe('a schedule whose run outlasts its interval', () => {
  it('at most one tick waits behind the running one; the others end skipped, recorded with why, none failed', async () => {
    const { ran, letFirstEnd } = await scheduleSlowSync();
    const waiting = await waitingOnceJudged(ran[0]!);
    letFirstEnd();
    await until('every tick to end', allEnded);
    expect(waiting).toHaveLength(1);
    // the first run, and the one tick that waited behind it: no run after run of the same schedule
    expect(ran).toHaveLength(2);
    expect(ran[1]).toBe(waiting[0]);

    const runs = await listRuns(q.redis, q.prefix, { feed: 'a', limit: 50 });
    expect(runs.filter((r) => r.outcome === 'ok')).toHaveLength(2);
    const skipped = runs.filter((r) => r.outcome === 'skipped');
    expect(skipped).toHaveLength(TICKS - 2);
    for (const r of skipped) {
      expect(r.summary).toMatch(/a run of this schedule already waits behind the running one/);
      expect(r.summary).toContain(chatbotLockName({ chatbot: CHATBOT }, 'sync'));
    }
    // completed with their outcome (no failure, so no failure alert), none left waiting for the lock
    expect(await q.queues.sync.getJobCounts('failed', 'completed')).toEqual({ failed: 0, completed: TICKS });
    const skippedJob = await q.queues.sync.getJob(skipped[0]!.jobId);
    expect(skippedJob?.returnvalue).toMatchObject({ outcome: 'skipped', retryable: false });
    const lockKey = targetLockKey(q.prefix, chatbotLockName({ chatbot: CHATBOT }, 'sync'));
    expect(await q.redis.zcard(lockWaitersKey(lockKey))).toBe(0);
    expect(await q.redis.exists(keysOf(q.prefix).scheduleWaiting(q.queues.sync.name, SCHEDULER))).toBe(0);
  }, 60_000);

  it('a run asked for by hand still waits behind the running one, beside the waiting tick, and runs', async () => {
    const { ran, letFirstEnd } = await scheduleSlowSync();
    const manual = await enqueueJob(q.redis, q.queues, 'sync', 'a', { feed: 'a' });
    await waitingOnceJudged(ran[0]!);
    // waiting behind the running one (delayed, or rechecking the lock), not ended
    expect(ran).not.toContain(manual.jobId);
    expect(['delayed', 'waiting', 'active']).toContain(await q.queues.sync.getJobState(manual.jobId));

    letFirstEnd();
    expect(await waitForJob(q.redis, q.queues, 'sync', manual.jobId)).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'ok' },
    });
    await until('every tick to end', allEnded);
    expect(ran).toContain(manual.jobId);
    // the first run, the tick that waited, and the run asked for by hand
    expect(ran).toHaveLength(3);
  }, 60_000);
});

describe('the waiting tick of a schedule, judged by several workers at once', () => {
  it('of ticks judged at the same moment on separate connections, exactly one waits', async () => {
    const lockKey = targetLockKey(q.prefix, chatbotLockName({ chatbot: CHATBOT }, 'sync'));
    await q.redis.set(lockKey, 'running-job#1', 'PX', 10_000);
    const connections = Array.from({ length: 6 }, () => testRedis());
    try {
      for (let round = 0; round < 20; round++) {
        const schedule = { queue: 'sync', scheduler: `sync:r${round}` };
        const answers = await Promise.all(
          connections.map((c, i) => waitsBehind(c, q.prefix, schedule, lockKey, `repeat:${round}:${i}`, 60_000)),
        );
        expect(answers.filter(Boolean)).toHaveLength(1);
      }
    } finally {
      for (const c of connections) await c.quit();
    }
  });

  it('the mark passes to a new tick once its run holds the lock, is cleared by its run alone, and expires', async () => {
    const lockKey = targetLockKey(q.prefix, chatbotLockName({ chatbot: CHATBOT }, 'sync'));
    const schedule = { queue: 'sync', scheduler: SCHEDULER };
    const mark = keysOf(q.prefix).scheduleWaiting('sync', SCHEDULER);
    await q.redis.set(lockKey, 'running-job#1', 'PX', 10_000);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 'w', 60_000)).toBe(true);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 'w', 60_000)).toBe(true);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 't1', 60_000)).toBe(false);
    // bounded: a waiter that crashed or was removed holds its schedule back one TTL at most
    expect(await q.redis.pttl(mark)).toBeGreaterThan(0);
    expect(await q.redis.pttl(mark)).toBeLessThanOrEqual(60_000);
    // the waiting run took the lock (its mark not yet cleared): it runs, a new tick may wait
    await q.redis.set(lockKey, 'w#2', 'PX', 10_000);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 't2', 60_000)).toBe(true);
    await doneWaiting(q.redis, q.prefix, schedule, 'w');
    expect(await q.redis.get(mark)).toBe('t2');
    await doneWaiting(q.redis, q.prefix, schedule, 't2');
    expect(await q.redis.exists(mark)).toBe(0);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 't3', 50)).toBe(true);
    await until('the mark to expire', async () => (await q.redis.exists(mark)) === 0);
    expect(await waitsBehind(q.redis, q.prefix, schedule, lockKey, 't4', 60_000)).toBe(true);
  });
});
