// The queue machinery on the real Redis with injected job definitions (no API, no feeds): schedules,
// reruns while a run is active, retries and no-retries, history, scheduler removal.
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/log.js';
import {
  applySchedules,
  closeQueues,
  createProcessor,
  createQueues,
  enqueueJob,
  listRuns,
  plannedSchedules,
  QUEUE_NAMES,
  startWorkers,
  waitForJob,
  type JobDefinition,
  type Queues,
  type RunReport,
  type WorkerSet,
} from '../../src/queue/index.js';
import { ConfigError, GuardError } from '../../src/errors.js';
import {
  deferred,
  dropPrefix,
  feedsYaml,
  loadedConfig,
  processorDeps,
  redisAt,
  testRedis,
  uniquePrefix,
  until,
} from './helpers.js';

const API = `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-queue-5f1c, sessionKey: ss-test-queue-9b2e }\n`;

let redis: Redis;
let prefix: string;
let queues: Queues;
let workers: WorkerSet | undefined;

beforeEach(() => {
  redis = testRedis();
  prefix = uniquePrefix();
  queues = createQueues(redis, prefix, { backoff: { type: 'exponential', delay: 50 } });
});

afterEach(async () => {
  await workers?.close(5000);
  workers = undefined;
  await closeQueues(queues);
  await dropPrefix(redis, prefix);
  await redis.quit();
});

type Payload = { feed: string };
function syncDef(process: (p: Payload, attempt: number) => Promise<RunReport>): JobDefinition<Payload> {
  return {
    name: 'listing-sync',
    kind: 'sync',
    payload: z.strictObject({ feed: z.string() }),
    exclusive: true,
    target: (p) => ({ feed: p.feed, chatbot: `SN-${p.feed}` }),
    process: (p, ctx) => process(p, ctx.attempt.made),
  };
}

const ok = (feed: string): RunReport => ({ outcome: 'ok', summary: `synced ${feed}`, retryable: false });

function start(def: JobDefinition<Payload>, yaml = API, concurrency = 2, watchdogMs = 60_000) {
  const config = loadedConfig(yaml);
  workers = startWorkers(
    queues,
    { sync: createProcessor(def, processorDeps(redis, prefix, config)) },
    {
      redis: redisAt(prefix),
      concurrency,
      lockDurationMs: 5000,
      stalledIntervalMs: 5000,
      watchdogMs,
      logger: silentLogger,
    },
  );
  return config;
}

describe('queue', () => {
  it('a schedule from config fires and runs a sync, and history keeps its report', async () => {
    const yaml = `${API}worker: { minScheduleIntervalSeconds: 1 }\nfeeds:\n${feedsYaml(['austin'], '    schedule: { cron: "* * * * * *", tz: America/Chicago }\n')}`;
    const config = start(
      syncDef(async (p) => ok(p.feed)),
      yaml,
    );
    const changes = await applySchedules(redis, queues, plannedSchedules(config.config, QUEUE_NAMES), {
      root: prefix,
      logger: silentLogger,
    });
    expect(changes.added).toEqual(['sync:austin']);
    const runs = await until('a scheduled run', async () => {
      const r = await listRuns(redis, prefix, { feed: 'austin', limit: 10 });
      return r.length ? r : undefined;
    });
    expect(runs[0]).toMatchObject({
      feed: 'austin',
      chatbot: 'SN-austin',
      outcome: 'ok',
      summary: 'synced austin',
      job: 'listing-sync',
    });
    const schedulers = await queues.sync.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.pattern, s.tz])).toEqual([
      ['sync:austin', '* * * * * *', 'America/Chicago'],
    ]);
  });

  it('a run stopped by a spent request budget is retried when the budget resets, not before', async () => {
    // (the reset 1.5 s after the first run: set 1.5 s after the test's start, it is past where the
    // machine is slower than that to start the run, the job is delayed 1 ms, and a poll for its
    // delayed state, which stood here, can miss it, as it can any delay shorter than the poll's gaps)
    let resetAt = 0;
    let calls = 0;
    let secondAt = 0;
    start(
      syncDef(async (p) => {
        calls++;
        secondAt = Date.now();
        if (calls === 1) {
          resetAt = Date.now() + 1500;
          return {
            outcome: 'partial',
            summary: `budget spent for ${p.feed}`,
            retryable: true,
            retryAt: new Date(resetAt).toISOString(),
          };
        }
        return ok(p.feed);
      }),
    );
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect((await waitForJob(redis, queues, 'sync', jobId)).state).toBe('completed');
    expect(calls).toBe(2);
    expect(secondAt).toBeGreaterThanOrEqual(resetAt);
    // it waited as a delayed job until the reset (BullMQ's events stream), not as a failed attempt
    const events = await redis.xrange(queues.sync.toKey('events'), '-', '+');
    const delayed = events
      .map(([, f]) => f)
      .filter((f) => f[f.indexOf('event') + 1] === 'delayed' && f[f.indexOf('jobId') + 1] === jobId);
    expect(delayed.map((f) => Number(f[f.indexOf('delay') + 1]))).toEqual([resetAt]);
    expect((await queues.sync.getJob(jobId))?.attemptsMade).toBe(1);
  });

  it('removes schedulers no longer in config and keeps the others', async () => {
    const two = loadedConfig(
      `${API}feeds:\n${feedsYaml(['a', 'b'], '    schedule: { cron: "0 2 * * *" }\n')}chatbots:\n  - serialNumber: SN-1\n    schedule: { smoke: "*/5 * * * *" }\n`,
    );
    await applySchedules(redis, queues, plannedSchedules(two.config, QUEUE_NAMES), {
      root: prefix,
      logger: silentLogger,
    });
    expect((await queues.sync.getJobSchedulers()).map((s) => s.key).sort()).toEqual(['sync:a', 'sync:b']);
    expect((await queues.smoke.getJobSchedulers()).map((s) => s.key)).toEqual(['smoke:SN-1']);
    const one = loadedConfig(
      `${API}feeds:\n${feedsYaml(['a'], '    schedule: { cron: "0 3 * * *" }\n')}${feedsYaml(['b'])}`.replace(
        'feeds:\n',
        'feeds:\n',
      ),
    );
    const changes = await applySchedules(redis, queues, plannedSchedules(one.config, QUEUE_NAMES), {
      root: prefix,
      logger: silentLogger,
    });
    expect(changes.removed.sort()).toEqual(['smoke:SN-1', 'sync:b']);
    const left = await queues.sync.getJobSchedulers();
    expect(left.map((s) => [s.key, s.pattern])).toEqual([['sync:a', '0 3 * * *']]);
    expect(await queues.smoke.getJobSchedulers()).toEqual([]);
  });

  it('a rerun asked while a sync of the feed runs waits for it, runs after it exactly once, never beside it', async () => {
    const gate = deferred();
    let inFlight = 0;
    let maxInFlight = 0;
    const runs: number[] = [];
    start(
      syncDef(async (p) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        runs.push(Date.now());
        if (runs.length === 1) await gate.promise;
        inFlight--;
        return ok(p.feed);
      }),
    );
    const first = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(first.status).toBe('queued');
    await until('the first run to start', async () => runs.length === 1);
    const second = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    const third = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(second.status).toBe('after-active');
    expect(third.status).toBe('after-active');
    // Still running alone: nothing of this feed waits beside it.
    expect(await queues.sync.getJobCounts('wait', 'active', 'delayed')).toMatchObject({
      wait: 0,
      active: 1,
      delayed: 0,
    });
    gate.resolve();
    const done = await waitForJob(redis, queues, 'sync', third.jobId);
    expect(done.state).toBe('completed');
    // no job is left that could run the feed a third time
    expect(await queues.sync.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children')).toEqual({
      wait: 0,
      active: 0,
      delayed: 0,
      prioritized: 0,
      'waiting-children': 0,
    });
    expect(runs).toHaveLength(2);
    expect(maxInFlight).toBe(1);
    const history = await listRuns(redis, prefix, { feed: 'austin', limit: 10 });
    expect(history.map((h) => h.jobId).reverse()).toEqual([first.jobId, third.jobId]);
  });

  it('a rerun asked while one already waits joins the waiting job', async () => {
    const a = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    const b = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(b).toEqual({ jobId: a.jobId, status: 'joined' });
    expect(await queues.sync.getJobCounts('wait')).toMatchObject({ wait: 1 });
  });

  it('a scheduled job and a rerun of one feed never run at once: the second waits on the feed lock', async () => {
    const gate = deferred();
    let inFlight = 0;
    let maxInFlight = 0;
    let count = 0;
    start(
      syncDef(async (p) => {
        inFlight++;
        count++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (count === 1) await gate.promise;
        inFlight--;
        return ok(p.feed);
      }),
    );
    // A plain add stands for a scheduler's job: it carries no deduplication.
    const scheduled = await queues.sync.add('listing-sync', { feed: 'austin' });
    await until('the first run', async () => count === 1);
    const rerun = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(rerun.status).toBe('queued');
    await until(
      'the rerun to be delayed behind the lock',
      async () => (await queues.sync.getJobState(rerun.jobId)) === 'delayed',
    );
    expect(count).toBe(1);
    gate.resolve();
    expect((await waitForJob(redis, queues, 'sync', rerun.jobId)).state).toBe('completed');
    expect(await queues.sync.getJobState(scheduled.id!)).toBe('completed');
    expect(count).toBe(2);
    expect(maxInFlight).toBe(1);
  });

  it('retries a transient failure with backoff, then completes', async () => {
    const attempts: number[] = [];
    start(
      syncDef(async (p, attempt) => {
        attempts.push(attempt);
        return attempt < 3
          ? { outcome: 'unavailable', summary: `feed ${p.feed} unavailable`, retryable: true }
          : ok(p.feed);
      }),
    );
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(await waitForJob(redis, queues, 'sync', jobId)).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'ok' },
    });
    expect(attempts).toEqual([1, 2, 3]);
    const history = await listRuns(redis, prefix, { feed: 'austin', limit: 10 });
    expect(history.map((h) => [h.outcome, h.attempt.made])).toEqual([
      ['ok', 3],
      ['unavailable', 2],
      ['unavailable', 1],
    ]);
  });

  it('a guard trip and a rejected feed complete the job at once (no retry) with their outcome, and their reports are in history', async () => {
    let calls = 0;
    start(
      syncDef(async (p) => {
        calls++;
        return p.feed === 'austin'
          ? { outcome: 'guard', summary: `${p.feed}: refused to delete 80% of listings`, retryable: false }
          : { outcome: 'rejected', summary: `${p.feed}: every record rejected`, retryable: false };
      }),
    );
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(await waitForJob(redis, queues, 'sync', jobId)).toEqual({
      state: 'completed',
      returnvalue: { outcome: 'guard', summary: 'austin: refused to delete 80% of listings', retryable: false },
    });
    const rejected = await enqueueJob(redis, queues, 'sync', 'dallas', { feed: 'dallas' });
    expect(await waitForJob(redis, queues, 'sync', rejected.jobId)).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'rejected' },
    });
    expect(calls).toBe(2);
    expect(await queues.sync.getJobCounts('failed')).toEqual({ failed: 0 });
    const [run] = await listRuns(redis, prefix, { feed: 'austin', limit: 1 });
    expect(run).toMatchObject({ jobId, outcome: 'guard' });
  });

  it('a thrown guard completes with its outcome; a thrown non-retryable error and a bad payload fail without retry', async () => {
    let calls = 0;
    start(
      syncDef(async () => {
        calls++;
        throw calls === 1 ? new GuardError('incomplete feed') : new ConfigError('no such mapping');
      }),
    );
    // a thrown guard is the run's outcome: the job completes, named by it
    const guard = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(await waitForJob(redis, queues, 'sync', guard.jobId)).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'guard', summary: 'listing-sync austin guard: incomplete feed' },
    });
    const thrown = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect(await waitForJob(redis, queues, 'sync', thrown.jobId)).toMatchObject({
      state: 'failed',
      failedReason: 'no such mapping',
    });
    expect(calls).toBe(2);
    const bad = await queues.sync.add('listing-sync', { feed: 42 });
    expect(await waitForJob(redis, queues, 'sync', bad.id!)).toMatchObject({
      state: 'failed',
      failedReason: expect.stringMatching(/payload invalid: feed: /),
    });
    expect((await queues.sync.getJob(bad.id!))?.attemptsMade).toBe(1);
    expect(calls).toBe(2);
  });

  it('history keeps the last N runs per feed', async () => {
    const config = loadedConfig(API);
    const process = createProcessor(
      syncDef(async (p) => ok(p.feed)),
      processorDeps(redis, prefix, config, { historySize: 3 }),
    );
    workers = startWorkers(
      queues,
      { sync: process },
      {
        redis: redisAt(prefix),
        concurrency: 1,
        lockDurationMs: 5000,
        stalledIntervalMs: 5000,
        watchdogMs: 60_000,
        logger: silentLogger,
      },
    );
    for (let i = 0; i < 5; i++) {
      const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
      await waitForJob(redis, queues, 'sync', jobId);
    }
    expect(await listRuns(redis, prefix, { feed: 'austin', limit: 10 })).toHaveLength(3);
  });

  it('the watchdog recreates a worker that stopped taking jobs while jobs wait, and the job runs', async () => {
    const ran: string[] = [];
    start(
      syncDef(async (p) => (ran.push(p.feed), ok(p.feed))),
      API,
      1,
      1000,
    );
    const stuck = workers!.worker('sync')!;
    // A worker that no longer fetches (as seen after a Redis outage): paused behind our back.
    await stuck.pause(true);
    await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    await until('the watchdog to recreate the worker', async () => workers!.restarts >= 1);
    expect(workers!.worker('sync')).not.toBe(stuck);
    await until('the job to run on the new worker', async () => ran.includes('austin'));
    expect(ran).toEqual(['austin']);
  });
});
