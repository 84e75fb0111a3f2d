// Jobs waiting for their chatbot's lock, on the real Redis with real BullMQ workers: a release wakes
// the next waiter (it does not sit out its delay), and waiting, for the lock or for a spent budget,
// costs none of the job's retry attempts.
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/log.js';
import {
  acquireTargetLock,
  chatbotLockName,
  closeQueues,
  createProcessor,
  createQueues,
  enqueueJob,
  startWorkers,
  targetLockKey,
  waitForJob,
  type JobDefinition,
  type ProcessorDeps,
  type Queues,
  type RunReport,
  type WorkerSet,
} from '../../src/queue/index.js';
import {
  deferred,
  dropPrefix,
  loadedConfig,
  processorDeps,
  redisAt,
  testRedis,
  uniquePrefix,
  until,
} from './helpers.js';

const API = `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-wake-5f1c, sessionKey: ss-test-wake-9b2e }\n`;
const CHATBOT = 'SN-SHARED';

let redis: Redis;
let prefix: string;
let queues: Queues;
const workers: WorkerSet[] = [];

beforeEach(() => {
  redis = testRedis();
  prefix = uniquePrefix();
  queues = createQueues(redis, prefix, { backoff: { type: 'fixed', delay: 20 } });
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.close(5000);
  await closeQueues(queues);
  await dropPrefix(redis, prefix);
  await redis.quit();
});

type Payload = { feed: string };
/** every feed belongs to one chatbot, so its jobs share one lock */
function syncDef(process: (p: Payload) => Promise<RunReport>): JobDefinition<Payload> {
  return {
    name: 'listing-sync',
    kind: 'sync',
    payload: z.strictObject({ feed: z.string() }),
    exclusive: true,
    target: (p) => ({ feed: p.feed, chatbot: CHATBOT }),
    process: (p) => process(p),
  };
}

function start(def: JobDefinition<Payload>, extra: Partial<ProcessorDeps>, concurrency = 2): void {
  const processor = createProcessor(def, processorDeps(redis, prefix, loadedConfig(API), extra));
  const settings = {
    redis: redisAt(prefix),
    concurrency,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    watchdogMs: 60_000,
    logger: silentLogger,
  };
  workers.push(startWorkers(queues, { sync: processor }, settings));
}

const ok = (feed: string): RunReport => ({ outcome: 'ok', summary: `synced ${feed}`, retryable: false });
const lockKey = () => targetLockKey(prefix, chatbotLockName({ chatbot: CHATBOT }, 'sync'));

describe('waiting for a chatbot lock', () => {
  it('a release wakes the job waiting behind it: with a 60 s busy delay, both jobs of one chatbot finish, one after the other', async () => {
    const spans: Array<{ feed: string; start: number; end: number }> = [];
    const firstStarted = deferred();
    const letFirstEnd = deferred();
    start(
      syncDef(async (p) => {
        const span = { feed: p.feed, start: Date.now(), end: 0 };
        if (p.feed === 'a') {
          firstStarted.resolve();
          await letFirstEnd.promise;
        }
        span.end = Date.now();
        spans.push(span);
        return ok(p.feed);
      }),
      { busyDelayMs: 60_000 },
    );
    const a = await enqueueJob(redis, queues, 'sync', 'a', { feed: 'a' });
    await firstStarted.promise;
    const b = await enqueueJob(redis, queues, 'sync', 'b', { feed: 'b' });
    await until('b to wait for the lock', async () => (await queues.sync.getJobState(b.jobId)) === 'delayed');
    letFirstEnd.resolve();
    expect((await waitForJob(redis, queues, 'sync', a.jobId)).state).toBe('completed');
    expect((await waitForJob(redis, queues, 'sync', b.jobId)).state).toBe('completed');
    expect(spans.map((s) => s.feed)).toEqual(['a', 'b']);
    expect(spans[1]!.start).toBeGreaterThanOrEqual(spans[0]!.end);
  }, 20_000);

  it('ten jobs of one chatbot on two workers all finish, never two at once, none sitting out a 60 s delay', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const done: string[] = [];
    const def = syncDef(async (p) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      done.push(p.feed);
      return ok(p.feed);
    });
    start(def, { busyDelayMs: 60_000 }, 3);
    start(def, { busyDelayMs: 60_000 }, 3);
    const feeds = Array.from({ length: 10 }, (_, i) => `f${i}`);
    const jobs = await Promise.all(feeds.map((f) => enqueueJob(redis, queues, 'sync', f, { feed: f })));
    for (const j of jobs) expect((await waitForJob(redis, queues, 'sync', j.jobId)).state).toBe('completed');
    expect(done.sort()).toEqual([...feeds].sort());
    expect(maxInFlight).toBe(1);
  }, 30_000);

  // BullMQ's delayed set is in its workers' clocks, not Redis's: Job.moveToDelayed stores the caller's
  // Date.now() plus the delay, and a worker promotes what its own Date.now() has passed (moveToActive).
  // A backstop based on Redis's TIME would mix the two: 5 min ahead of Redis, a delay of 0 (taken
  // again at once, again and again); behind it, 5 min more.
  it('a worker whose clock is 5 min ahead of Redis’s delays a waiting job busyDelayMs by its own clock', async () => {
    const AHEAD_MS = 5 * 60_000;
    const BUSY_MS = 2000;
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + AHEAD_MS);
    try {
      const holder = await acquireTargetLock(redis, lockKey(), 'someone-else', 10_000);
      expect(holder).toBeDefined();
      start(
        syncDef(async (p) => ok(p.feed)),
        { busyDelayMs: BUSY_MS },
      );
      const { jobId } = await enqueueJob(redis, queues, 'sync', 'a', { feed: 'a' });
      await until('the job to wait for the lock', async () => (await queues.sync.getJobState(jobId)) === 'delayed');
      const delayedAt = Date.now();
      const job = await queues.sync.getJob(jobId);
      expect(job?.delay).toBeGreaterThan(BUSY_MS - 100);
      expect(job?.delay).toBeLessThanOrEqual(BUSY_MS);
      // due in the worker's clock: busyDelayMs after it moved the job, not 5 min before or after
      const score = Number(await redis.zscore(queues.sync.toKey('delayed'), jobId));
      const dueAt = Math.floor(score / 0x1000);
      expect(dueAt - delayedAt).toBeGreaterThan(0);
      expect(dueAt - delayedAt).toBeLessThanOrEqual(BUSY_MS);
      await holder!.release();
    } finally {
      vi.restoreAllMocks();
    }
  }, 20_000);

  it('a job delayed many times behind a busy lock still has every retry attempt for real failures', async () => {
    const holder = await acquireTargetLock(redis, lockKey(), 'someone-else', 10_000);
    expect(holder).toBeDefined();
    let tries = 0;
    let failures = 0;
    start(
      syncDef(async () => {
        failures++;
        throw new Error('the service is down');
      }),
      { busyDelayMs: 30 },
    );
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'a', { feed: 'a' });
    await until('several busy delays', async () => {
      const job = await queues.sync.getJob(jobId);
      tries = job?.attemptsStarted ?? 0;
      return tries >= 5;
    });
    expect(failures).toBe(0);
    await holder!.release();
    const result = await waitForJob(redis, queues, 'sync', jobId);
    expect(result.state).toBe('failed');
    expect(failures).toBe(3);
    expect((await queues.sync.getJob(jobId))?.attemptsMade).toBe(3);
  }, 30_000);

  // (a reset 30 ms ahead, and one already past when the run settles: on a loaded machine the first
  // became the second, and the budget wait was counted as a failed attempt)
  it.each([30, -1000])(
    'a job delayed for a spent budget (reset in %i ms) still has every retry attempt for real failures',
    async (resetInMs) => {
      let budgetStops = 0;
      let failures = 0;
      start(
        syncDef(async (p) => {
          if (budgetStops < 4) {
            budgetStops++;
            return {
              outcome: 'partial',
              summary: `budget spent for ${p.feed}`,
              retryable: true,
              retryAt: new Date(Date.now() + resetInMs).toISOString(),
            };
          }
          failures++;
          throw new Error('the service is down');
        }),
        {},
      );
      const { jobId } = await enqueueJob(redis, queues, 'sync', 'a', { feed: 'a' });
      const result = await waitForJob(redis, queues, 'sync', jobId);
      expect(result.state).toBe('failed');
      expect(budgetStops).toBe(4);
      expect(failures).toBe(3);
      expect((await queues.sync.getJob(jobId))?.attemptsMade).toBe(3);
    },
    30_000,
  );
});
