// The sweep of the jobs' holder records (src/queue/job-holders.ts), on the real Redis with BullMQ's
// own scripts: a job whose worker process is certainly gone (lock-holder.ts holderGone) goes back
// to wait at once, counted stalled; a live holder's job never does (that would run it twice), nor
// one whose holder is on another host, boot or PID namespace (nothing there is provably dead); two
// sweepers move a job once; worker.maxStalledCount still fails a job that kills its workers; and
// a live job handed back by mistake runs twice one after the other, never at once (its chatbot lock).
import '../setup/needs-redis.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { newHolder, processStartTime, type LockHolder } from '../../src/locks/lock-holder.js';
import { silentLogger } from '../../src/log.js';
import {
  createProcessor,
  enqueueJob,
  listRuns,
  QUEUE_NAMES,
  startWorkers,
  waitForJob,
  type JobDefinition,
  type WorkerSet,
} from '../../src/queue/index.js';
import { holdJob, sweepJobHolders, type SweepDeps } from '../../src/queue/job-holders.js';
import { JOB_LOCK_LOST } from '../../src/errors.js';
import { keysOf } from '../../src/redis/keys.js';
import { JOBS } from '../../jobs/index.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import {
  captureLogs,
  deferred,
  feedsYaml,
  loadedConfig,
  processorDeps,
  redisAt,
  testRedis,
  until,
  useQueues,
} from './helpers.js';

const q = useQueues();
/** BullMQ's maxStalledCount as workers.ts sets it: the config's default (2) and one */
const BULL_MAX_STALLED = 3;

let taker: Worker;
let alive: ChildProcess;
const others: Redis[] = [];
beforeEach(() => {
  // takes jobs by hand (getNextJob), as a worker process does before its processor runs
  taker = new Worker(QUEUE_NAMES.sync, null, { connection: testRedis(), prefix: q.prefix, lockDuration: 30_000 });
  alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
});
afterEach(async () => {
  await taker.close();
  alive.kill('SIGKILL');
  for (const r of others.splice(0)) await r.quit();
});

const key = () => keysOf(q.prefix).jobHolders;
const deps = (redis: Redis = q.redis): SweepDeps => ({
  redis,
  key: key(),
  queues: new Map(Object.values(q.queues).map((queue) => [queue.name, queue])),
  maxStalledCount: BULL_MAX_STALLED,
  lockDurationMs: 30_000,
  logger: silentLogger,
});

/** A PID that was a process of this host a moment ago, and its start time then. */
async function deadProcess(): Promise<Pick<LockHolder, 'pid' | 'startTime'>> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  const pid = child.pid!;
  const startTime = processStartTime(pid);
  child.kill('SIGKILL');
  await once(child, 'exit');
  return { pid, ...(startTime && { startTime }) };
}

/** A sync job taken (active, its lock `token`), and a holder record of it naming `holder`, as a worker process writes it. */
async function taken(token: string, holder: Partial<LockHolder>): Promise<Job> {
  await enqueueJob(q.redis, q.queues, 'sync', `feed:${token}`, { feed: token });
  const job = await taker.getNextJob(token);
  if (!job?.id) throw new Error('no job taken');
  const record = { ...newHolder(`listing-sync job ${job.id}`), ...holder, queue: QUEUE_NAMES.sync, jobId: job.id };
  await q.redis.hset(key(), token, JSON.stringify(record));
  return job;
}

async function expectStillRunning(job: Job, token: string): Promise<void> {
  expect(await q.queues.sync.getJobState(job.id!)).toBe('active');
  expect(await q.redis.get(`${q.queues.sync.toKey(job.id!)}:lock`)).toBe(token);
  expect(await q.redis.hexists(key(), token)).toBe(1);
  expect((await q.queues.sync.getJob(job.id!))?.stalledCounter ?? 0).toBe(0);
}

describe('the sweep of the jobs’ holder records', () => {
  it('a job whose worker process is gone goes back to wait at once, counted stalled, its lock and record gone', async () => {
    const job = await taken('t-dead', await deadProcess());
    const [back, ...more] = await sweepJobHolders(deps());
    expect(more).toEqual([]);
    expect(back).toMatchObject({ jobId: job.id, queue: QUEUE_NAMES.sync, stalled: 1 });
    expect(back!.reason).toMatch(/^its process \d+ is gone$/);
    expect(await q.queues.sync.getJobState(job.id!)).toBe('waiting');
    expect((await q.queues.sync.getJob(job.id!))?.stalledCounter).toBe(1);
    expect(await q.redis.exists(`${q.queues.sync.toKey(job.id!)}:lock`)).toBe(0);
    expect(await q.redis.hlen(key())).toBe(0);
    // (told as BullMQ's stalled check tells it, on the queue's events)
    const events = await q.redis.xrange(q.queues.sync.toKey('events'), '-', '+');
    expect(events.map(([, f]) => f.join(' '))).toContain(`event stalled jobId ${job.id}`);
  });

  it('a live holder’s job is never handed back: a sibling process’s, this process’s own', async () => {
    await once(alive, 'spawn');
    const sibling = await taken('t-alive', { pid: alive.pid!, startTime: processStartTime(alive.pid!) });
    // this process's own, as the worker records it (held here until its release)
    const own = await enqueueJob(q.redis, q.queues, 'sync', 'feed:own', { feed: 'own' });
    const ownJob = await taker.getNextJob('t-own');
    expect(ownJob?.id).toBe(own.jobId);
    const release = await holdJob(q.redis, key(), ownJob!, 't-own', silentLogger);

    expect(await sweepJobHolders(deps(), true)).toEqual([]);
    await expectStillRunning(sibling, 't-alive');
    await expectStillRunning(ownJob!, 't-own');
    await release();
    expect(await q.redis.hexists(key(), 't-own')).toBe(0);
  });

  it('a record whose PID is now another process (reused: its start time differs) goes back; the same PID and start time stay', async () => {
    await once(alive, 'spawn');
    const now = processStartTime(alive.pid!);
    expect(now).toBeDefined();
    const reused = await taken('t-reused', { pid: alive.pid!, startTime: `${Number(now) - 100}` });
    const same = await taken('t-same', { pid: alive.pid!, startTime: now });
    const [back, ...more] = await sweepJobHolders(deps());
    expect(more).toEqual([]);
    expect(back).toMatchObject({ jobId: reused.id, stalled: 1, reason: `PID ${alive.pid} is now another process` });
    await expectStillRunning(same, 't-same');
  });

  it('a record from another host, boot or PID namespace is left alone, its holder dead or not', async () => {
    const dead = await deadProcess();
    const jobs = [
      ['t-host', await taken('t-host', { ...dead, host: 'another-host' })],
      ['t-boot', await taken('t-boot', { ...dead, bootId: '00000000-0000-0000-0000-000000000000' })],
      ['t-ns', await taken('t-ns', { ...dead, pidNs: 'pid:[1]' })],
      ['t-none', await taken('t-none', { ...dead, bootId: undefined, pidNs: undefined })],
    ] as const;
    expect(await sweepJobHolders(deps(), true)).toEqual([]);
    for (const [token, job] of jobs) await expectStillRunning(job, token);
  });

  it('a job handed back is counted stalled once: BullMQ’s stalled check, before, after and under its next attempt, adds nothing', async () => {
    const stalledCheck = async () => {
      // (a check of the next interval: the key that spaces the fleet's checks dropped)
      await q.redis.del(q.queues.sync.toKey('stalled-check'));
      return taker.backend.moveStalledJobsToWait();
    };
    const job = await taken('t-crash', await deadProcess());
    const jobKey = q.queues.sync.toKey(job.id!);
    // the check before the crash was noticed marked the job a candidate; its dead worker never renews it
    expect(await stalledCheck()).toEqual([]);
    expect(await q.redis.sismember(q.queues.sync.toKey('stalled'), job.id!)).toBe(1);

    expect(await sweepJobHolders(deps())).toMatchObject([{ jobId: job.id, stalled: 1 }]);
    // the move took it out of the candidates with its lock: the next check finds nothing to count
    expect(await q.redis.sismember(q.queues.sync.toKey('stalled'), job.id!)).toBe(0);
    expect(await stalledCheck()).toEqual([]);

    // the next attempt takes it (a lock of its own) and runs through two more checks
    const next = await taker.getNextJob('t-next');
    expect(next?.id).toBe(job.id);
    expect(next?.stalledCounter).toBe(1);
    expect(await stalledCheck()).toEqual([]);
    expect(await stalledCheck()).toEqual([]);
    expect(await q.redis.hget(jobKey, 'stc')).toBe('1');
    expect(await q.redis.hexists(jobKey, 'defa')).toBe(0);
    // a crash is no attempt: the attempt after it is still the first (processor.ts: attempt 1/N)
    expect((await q.queues.sync.getJob(job.id!))?.attemptsMade).toBe(0);
  });

  it('two sweepers at once: the job moves once, counted once', async () => {
    const job = await taken('t-two', await deadProcess());
    const second = testRedis();
    others.push(second);
    const results = await Promise.all([sweepJobHolders(deps()), sweepJobHolders(deps(second))]);
    expect(results.flat()).toHaveLength(1);
    expect((await q.queues.sync.getJob(job.id!))?.stalledCounter).toBe(1);
    expect(await q.redis.llen(q.queues.sync.toKey('wait'))).toBe(1);
  });

  // One death is one stall, whatever fails between the count and the move: a move back refused (a
  // dropped connection), or a claim a failover lost (the record back, another sweeper claiming it
  // while the first has counted and not yet moved).
  describe('counted once when the hand-back is cut short', () => {
    const stalledCheck = async () => {
      await q.redis.del(q.queues.sync.toKey('stalled-check'));
      return taker.backend.moveStalledJobsToWait();
    };
    afterEach(() => vi.restoreAllMocks());

    it('its move back refused after the count: a later sweep moves it; BullMQ’s check, the lock expired, adds nothing', async () => {
      const job = await taken('t-cut', await deadProcess());
      const lockKey = `${q.queues.sync.toKey(job.id!)}:lock`;
      const short = { ...deps(), lockDurationMs: 300 }; // (the lock kept for the move lives this long)
      vi.spyOn(Job.prototype, 'moveToWait').mockRejectedValueOnce(new Error('connection lost'));
      expect(await sweepJobHolders(short)).toEqual([]);
      const later = await sweepJobHolders(short);
      await until('the lock kept for the move gone', async () => (await q.redis.exists(lockKey)) === 0);
      await stalledCheck();
      await stalledCheck();
      expect((await q.queues.sync.getJob(job.id!))?.stalledCounter).toBe(1);
      expect(later).toMatchObject([{ jobId: job.id, stalled: 1 }]);
      expect(await q.queues.sync.getJobState(job.id!)).toBe('waiting');
      expect(await q.redis.hlen(key())).toBe(0);
    });

    it('its move refused and its record not put back (HSETNX fails too): said, with the job and queue; BullMQ’s check takes it over at the lock’s expiry', async () => {
      const job = await taken('t-lost-record', await deadProcess());
      const lockKey = `${q.queues.sync.toKey(job.id!)}:lock`;
      // the same client but for HSETNX, which a dropped connection refuses
      const refusing = new Proxy(q.redis, {
        get: (target, name) => {
          if (name === 'hsetnx') return () => Promise.reject(new Error('connection lost (HSETNX)'));
          const v: unknown = Reflect.get(target, name);
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const { logger, warnings } = captureLogs();
      vi.spyOn(Job.prototype, 'moveToWait').mockRejectedValueOnce(new Error('connection lost'));
      expect(await sweepJobHolders({ ...deps(refusing), lockDurationMs: 300, logger })).toEqual([]);
      expect(warnings()).toEqual([
        expect.objectContaining({
          jobId: job.id,
          queue: QUEUE_NAMES.sync,
          err: expect.objectContaining({ message: 'connection lost' }),
          putBackErr: 'Error: connection lost (HSETNX)',
          msg: expect.stringMatching(/record not put back.*no sweep tries again.*stalled check.*lock's expiry/),
        }),
      ]);
      expect(await q.redis.hlen(key())).toBe(0);
      // no sweep finds it again; BullMQ's check does, once the lock kept for the move has expired
      expect(await sweepJobHolders(deps())).toEqual([]);
      await until('the lock kept for the move gone', async () => (await q.redis.exists(lockKey)) === 0);
      await stalledCheck();
      await stalledCheck();
      expect(await q.queues.sync.getJobState(job.id!)).toBe('waiting');
      // (counted by the sweep and by the check: the one case a death counts twice, as the warning says)
      expect((await q.queues.sync.getJob(job.id!))?.stalledCounter).toBe(2);
    });

    it('its claim lost in a failover, claimed again while the first sweeper has counted and not yet moved: counted once, moved once', async () => {
      const job = await taken('t-failover', await deadProcess());
      const record = (await q.redis.hget(key(), 't-failover'))!;
      const counted = deferred();
      const gate = deferred();
      const move = Job.prototype.moveToWait;
      vi.spyOn(Job.prototype, 'moveToWait').mockImplementationOnce(async function (this: Job, token?: string) {
        counted.resolve();
        await gate.promise;
        return move.call(this, token);
      });
      const first = sweepJobHolders(deps());
      await counted.promise;
      await q.redis.hset(key(), 't-failover', record); // (the HDEL that claimed it lost with the old primary)
      const second = testRedis();
      others.push(second);
      const again = await sweepJobHolders(deps(second));
      gate.resolve();
      expect([...(await first), ...again]).toMatchObject([{ jobId: job.id, stalled: 1 }]);
      await sweepJobHolders(deps());
      expect(await q.queues.sync.getJobState(job.id!)).toBe('waiting');
      expect((await q.queues.sync.getJob(job.id!))?.stalledCounter).toBe(1);
      expect(await q.redis.llen(q.queues.sync.toKey('wait'))).toBe(1);
      expect(await q.redis.hlen(key())).toBe(0);
    });
  });

  it('a record whose job is no longer active under its token is dropped, the job left as it is', async () => {
    const job = await taken('t-over', await deadProcess());
    // the job ended (completed by its worker) before the record was deleted
    await job.moveToCompleted({ outcome: 'ok', summary: 'done' }, 't-over', false);
    expect(await sweepJobHolders(deps())).toEqual([]);
    expect(await q.redis.hlen(key())).toBe(0);
    expect(await q.queues.sync.getJobState(job.id!)).toBe('completed');
    expect((await q.queues.sync.getJob(job.id!))?.stalledCounter ?? 0).toBe(0);
  });

  it('a live holder’s record whose job ended under it is dropped by the tidy, and only then', async () => {
    await once(alive, 'spawn');
    const job = await taken('t-ended', { pid: alive.pid!, startTime: processStartTime(alive.pid!) });
    await job.moveToCompleted({ outcome: 'ok', summary: 'done' }, 't-ended', false);
    await sweepJobHolders(deps());
    expect(await q.redis.hexists(key(), 't-ended')).toBe(1);
    expect(await sweepJobHolders(deps(), true)).toEqual([]);
    expect(await q.redis.hexists(key(), 't-ended')).toBe(0);
  });

  describe('a job that kills its workers', () => {
    let workers: WorkerSet | undefined;
    afterEach(async () => workers?.close(5000));
    /** the workers that run the job once it has been found gone three times (on this test's prefix) */
    const oneAtATime = () => ({
      redis: redisAt(q.prefix),
      concurrency: 1,
      lockDurationMs: 5000,
      stalledIntervalMs: 5000,
      watchdogMs: 60_000,
      logger: silentLogger,
    });

    it('found gone more than worker.maxStalledCount (2) times, it fails, recorded as failed', async () => {
      const { jobId } = await enqueueJob(q.redis, q.queues, 'sync', 'feed:oom', { feed: 'oom' });
      for (let k = 1; k <= 3; k++) {
        const token = `t-oom-${k}`;
        const job = await taker.getNextJob(token);
        expect(job?.id).toBe(jobId);
        const record = { ...newHolder('oom'), ...(await deadProcess()), queue: QUEUE_NAMES.sync, jobId };
        await q.redis.hset(key(), token, JSON.stringify(record));
        expect(await sweepJobHolders(deps())).toMatchObject([{ jobId, stalled: k }]);
      }
      await taker.close();
      const ran: string[] = [];
      const def: JobDefinition<{ feed: string }> = {
        name: 'listing-sync',
        kind: 'sync',
        payload: z.strictObject({ feed: z.string() }),
        target: (p) => ({ feed: p.feed }),
        process: async (p) => {
          ran.push(p.feed);
          return { outcome: 'ok', summary: 'ran' };
        },
      };
      const config = loadedConfig(
        'api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-oom-1, sessionKey: ss-test-oom-2 }\n',
      );
      workers = startWorkers(
        q.queues,
        { sync: createProcessor(def as JobDefinition<never>, processorDeps(q.redis, q.prefix, config)) },
        oneAtATime(),
      );
      const end = await waitForJob(q.redis, q.queues, 'sync', jobId);
      expect(end).toMatchObject({
        state: 'failed',
        failedReason: expect.stringMatching(/its worker stopped while running it 3 times/),
      });
      expect(ran).toEqual([]);
      const [run] = await listRuns(q.redis, q.prefix, { feed: 'oom', limit: 1 });
      expect(run).toMatchObject({ jobId, outcome: 'failed' });
    });

    it('a sync job failed so is seen by its lanes’ alert rules: a failing run, not silence', async () => {
      // (its attempts taken over ended `taken-over`, which the rules do not count: without this, a
      // job lost three times over would fail for good with no alert)
      const receiver = await startHttpReceiver();
      try {
        const { jobId } = await enqueueJob(q.redis, q.queues, 'sync', 'feed:lost', { feed: 'lost' });
        for (let k = 1; k <= 3; k++) {
          const token = `t-lost-${k}`;
          expect((await taker.getNextJob(token))?.id).toBe(jobId);
          const record = { ...newHolder('lost'), ...(await deadProcess()), queue: QUEUE_NAMES.sync, jobId };
          await q.redis.hset(key(), token, JSON.stringify(record));
          expect(await sweepJobHolders(deps())).toMatchObject([{ jobId, stalled: k }]);
        }
        await taker.close();
        const config = loadedConfig(
          `api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-lost-1, sessionKey: ss-test-lost-2 }
alerts: { channels: [{ kind: webhook, url: "${receiver.url}/hook", secret: whsec-test-lost }], rules: { failedRuns: 1 } }
feeds:
${feedsYaml(['lost'])}`,
        );
        workers = startWorkers(
          q.queues,
          { sync: createProcessor(JOBS.sync, processorDeps(q.redis, q.prefix, config)) },
          oneAtATime(),
        );
        expect(await waitForJob(q.redis, q.queues, 'sync', jobId)).toMatchObject({ state: 'failed' });
        const [run] = await listRuns(q.redis, q.prefix, { feed: 'lost', limit: 1 });
        expect(run).toMatchObject({ jobId, outcome: 'failed' });
        const alerts = receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
        expect(alerts).toEqual([
          expect.objectContaining({
            status: 'firing',
            condition: 'failing',
            feed: 'lost',
            runId: `${jobId}.1`,
            message: expect.stringMatching(/its worker stopped while running it 3 times/),
          }),
        ]);
      } finally {
        await receiver.close();
      }
    });
  });
});

describe('a live job taken for a dead one (a false "gone")', () => {
  const sets: WorkerSet[] = [];
  afterEach(async () => {
    for (const w of sets.splice(0)) await w.close(5000);
  });

  it('its second run waits for the chatbot lock; the first stops at its lost job lock, recorded taken-over; never two at once, the job completes', async () => {
    const started = deferred<AbortSignal>();
    let inFlight = 0;
    let most = 0;
    const runs: string[] = [];
    const def: JobDefinition<{ feed: string }> = {
      name: 'listing-sync',
      kind: 'sync',
      payload: z.strictObject({ feed: z.string() }),
      exclusive: true,
      target: (p) => ({ feed: p.feed, chatbot: 'SN-FALSE-GONE' }),
      process: async (_p, ctx) => {
        most = Math.max(most, ++inFlight);
        try {
          runs.push(`start ${runs.length === 0 ? 'first' : 'second'}`);
          if (runs.length > 1) return { outcome: 'ok', summary: 'ran' };
          started.resolve(ctx.signal);
          // the first run goes on until something stops it (the lost job lock, or the test's end)
          await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
          runs.push(`first stopped: ${String(ctx.signal.reason)}`);
          throw new Error('stopped');
        } finally {
          inFlight--;
        }
      },
    };
    const config = loadedConfig(
      'api: { baseUrl: "http://127.0.0.1:1", secretKey: sk-test-fg-1a2b, sessionKey: ss-test-fg-3c4d }\n',
    );
    await taker.close();
    // two worker processes (as two BullMQ workers here, one job at a time each): the second takes
    // what the first is handed back of
    for (let k = 0; k < 2; k++)
      sets.push(
        startWorkers(
          q.queues,
          { sync: createProcessor(def as JobDefinition<never>, processorDeps(q.redis, q.prefix, config)) },
          {
            redis: redisAt(q.prefix),
            concurrency: 1,
            lockDurationMs: 4000,
            stalledIntervalMs: 30_000,
            watchdogMs: 60_000,
            logger: silentLogger,
          },
        ),
      );
    const { jobId } = await enqueueJob(q.redis, q.queues, 'sync', 'feed:fg', { feed: 'fg' });
    const firstSignal = await started.promise;
    // its record rewritten as a dead process's: the workers' own sweep hands the live job back
    const [[token, text]] = Object.entries(await q.redis.hgetall(key())) as [[string, string]];
    const dead = { ...(JSON.parse(text) as object), ...newHolder('a dead worker'), ...(await deadProcess()) };
    await q.redis.hset(key(), token, JSON.stringify(dead));

    const end = await waitForJob(q.redis, q.queues, 'sync', jobId);
    expect(end.state).toBe('completed');
    expect(firstSignal.aborted).toBe(true);
    expect(most).toBe(1);
    expect(runs).toEqual(['start first', `first stopped: ${JOB_LOCK_LOST}`, 'start second']);
    // the stopped attempt is no failed run: recorded taken over; the second records the job's outcome (newest first)
    const history = await listRuns(q.redis, q.prefix, { feed: 'fg', limit: 5 });
    expect(history.map((r) => [r.jobId, r.outcome])).toEqual([
      [jobId, 'ok'],
      [jobId, 'taken-over'],
    ]);
    expect(history[1]!.summary).toBe(
      `listing-sync fg taken over by another attempt of its job (its job lock or a chatbot lock was lost): stopped`,
    );
    expect(await q.redis.hlen(key())).toBe(0);
  });
});
