// A job scheduler whose definition is still in Redis but whose next job is not (its job hash deleted
// or evicted, its entry in `delayed` lost, or the job finished with no later one made) never runs
// again: BullMQ makes a scheduler's next job only as a worker takes the one before. The watch and a
// worker's start find it (src/queue/schedule-state.ts) and build it again, at the same tick while
// that is ahead, with a warning naming the scheduler; a job of the scheduler being taken or run is
// not a lost one. On real Redis under a unique prefix. The end-to-end case (`feedsync worker`, a
// feed due every second) is in schedules-after-restart.processes.test.ts.
import '../setup/needs-redis.js';
import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { applySchedules, QUEUE_NAMES, type PlannedSchedule } from '../../src/queue/index.js';
import { watchSchedules } from '../../src/queue/schedule-watch.js';
import {
  deferred,
  EVERY_SECOND,
  loseNextJob,
  NIGHTLY,
  testRedis,
  until,
  useQueues,
  type LoseHow,
  captureLogs as capture,
} from './helpers.js';

const q = useQueues();

const loseNext = (s: PlannedSchedule, how: LoseHow) => loseNextJob(q.redis, q.queues[s.kind], s.id, how);

/** the scheduler's jobs in a state that will yet run: their ids */
async function pendingJobs(s: PlannedSchedule): Promise<string[]> {
  const jobs = await q.queues[s.kind].getJobs(['delayed', 'waiting', 'prioritized'], 0, -1);
  return jobs.map((j) => j.id!).filter((id) => id.startsWith(`repeat:${s.id}:`));
}

/** Watches every 50 ms until `done` answers; stopped after. */
async function watching<T>(
  planned: PlannedSchedule[],
  logger: ReturnType<typeof capture>['logger'],
  done: () => Promise<T | undefined>,
) {
  const stop = watchSchedules(q.redis, q.queues, planned, { root: q.prefix, intervalMs: 50, logger });
  try {
    return await until('the watch to act', done, 5_000);
  } finally {
    stop();
  }
}

describe('a job scheduler whose next job Redis lost, the scheduler kept', () => {
  it("BullMQ's own removals keep it (Job.remove refuses, clean and drain pass it over): a key lost does not", async () => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const [id] = await pendingJobs(NIGHTLY);
    await expect(q.queues.sync.remove(id!)).rejects.toThrow(/job scheduler/i);
    expect(await q.queues.sync.clean(0, 100, 'delayed')).toEqual([]);
    await q.queues.sync.drain(true);
    expect(await pendingJobs(NIGHTLY)).toEqual([id]);
  });

  it.each([
    ['its job hash deleted', 'hash', 'gone'],
    ['its entry in `delayed` lost (the hash in no list, dropped)', 'entry', 'orphan'],
  ] as const)('%s: the watch builds it again at the same tick, once, and warns naming it', async (_, how, state) => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const lost = await loseNext(NIGHTLY, how);
    const { logger, warnings } = capture();
    await watching([NIGHTLY], logger, async () => (await pendingJobs(NIGHTLY)).length > 0);
    // the tick ahead is kept: the same job id, `repeat:<scheduler>:<millis>`
    expect(await pendingJobs(NIGHTLY)).toEqual([lost]);
    expect(warnings()).toMatchObject([{ scheduler: 'sync:austin', lostJob: lost, state, nextJob: lost }]);
    expect(warnings()[0]!.msg).toMatch(/^job scheduler sync:austin had no next job: .*\(the same tick\)$/);
  });

  it('its job failed with no later one made: built at the next tick, the failed job kept', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    // a job fails once its tick has come (no worker here: it stays delayed)
    const [tick] = await pendingJobs(EVERY_SECOND);
    await until('its tick come', async () => Date.now() > Number(tick!.split(':').pop()) + 50);
    const lost = await loseNext(EVERY_SECOND, 'failed');
    expect(lost).toBe(tick);
    const { logger, warnings } = capture();
    const [next] = await watching([EVERY_SECOND], logger, async () => {
      const p = await pendingJobs(EVERY_SECOND);
      return p.length > 0 ? p : undefined;
    });
    expect(next).not.toBe(lost);
    expect(await q.queues.sync.getJobState(lost)).toBe('failed');
    expect(warnings()).toMatchObject([{ scheduler: 'sync:austin', state: 'failed', lostJob: lost, nextJob: next }]);
  });

  // A job of the scheduler finished before its tick (taken early, by a promote in a queue UI, and its
  // worker could not make the next one): BullMQ's upsert would build the next job at that same tick,
  // whose id the finished job holds (addJobScheduler-11.lua: -10, SchedulerJobIdCollision; BullMQ
  // issue #3063), so it refused every look and every start until the tick had passed.
  it.each(['completed', 'failed'] as const)(
    'its job %s before its tick, no later one made: built at the tick after it, warned once; a start is not refused',
    async (how) => {
      await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
      const lost = await loseNext(NIGHTLY, how);
      const day = 24 * 3600 * 1000;
      const after = `repeat:${NIGHTLY.id}:${Number(lost.split(':').pop()) + day}`;

      const { logger, warnings } = capture();
      const stop = watchSchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, intervalMs: 50, logger });
      try {
        // the repair said, however long a loaded machine takes to look (a fixed 0.6 s saw no warning
        // yet at load 30); then ten looks or more, in which it must not be said again
        await until('the repair warned', async () => warnings().length > 0);
        await new Promise((r) => setTimeout(r, 600));
      } finally {
        stop();
      }
      expect(warnings()).toHaveLength(1);
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);
      expect(warnings()).toMatchObject([{ scheduler: 'sync:austin', state: how, lostJob: lost, nextJob: after }]);
      expect(await q.queues.sync.getJobState(lost)).toBe(how);

      // the same found by a worker's start (another scheduler: one removed and written again at the
      // tick of a finished job of its id collides alike, BullMQ issue #3063)
      const dallas: PlannedSchedule = { ...NIGHTLY, id: 'sync:dallas', data: { feed: 'dallas' } };
      await applySchedules(q.redis, q.queues, [dallas], { root: q.prefix, logger: silentLogger });
      const again = await loseNext(dallas, how);
      const changes = await applySchedules(q.redis, q.queues, [dallas], { root: q.prefix, logger: silentLogger });
      expect(changes.rebuilt).toEqual(['sync:dallas']);
      expect(await pendingJobs(dallas)).toEqual([`repeat:${dallas.id}:${Number(again.split(':').pop()) + day}`]);
    },
  );

  // The same with the scheduler's own hash (its definition) lost too: the repair upserted it with
  // BullMQ's override, which builds the next job at the pattern's next time after now, that same
  // tick, whose id the finished job holds (-10): refused, and warned, at every look.
  it.each(['completed', 'failed'] as const)(
    'its job %s before its tick and its definition lost: written again with the tick after it, warned once; a start is not refused',
    async (how) => {
      const day = 24 * 3600 * 1000;
      const lose = async (s: PlannedSchedule) => {
        await applySchedules(q.redis, q.queues, [s], { root: q.prefix, logger: silentLogger });
        const lost = await loseNext(s, how);
        await q.redis.del(q.queues.sync.toKey(`repeat:${s.id}`));
        return { lost, after: `repeat:${s.id}:${Number(lost.split(':').pop()) + day}` };
      };
      const { lost, after } = await lose(NIGHTLY);
      const { logger, warnings } = capture();
      const stop = watchSchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, intervalMs: 50, logger });
      try {
        // the repair said, however long a loaded machine takes to look (a fixed 0.6 s saw no warning
        // yet at load 30); then ten looks or more, in which it must not be said again
        await until('the repair warned', async () => warnings().length > 0);
        await new Promise((r) => setTimeout(r, 600));
      } finally {
        stop();
      }
      expect(warnings()).toMatchObject([
        { scheduler: 'sync:austin', state: how, lostJob: lost, nextJob: after, definitionLost: true },
      ]);
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);
      expect(await q.queues.sync.getJobState(lost)).toBe(how);
      // the definition is the planned one: a start finds nothing to change
      const quiet = capture();
      expect(await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: quiet.logger })).toEqual({
        added: [],
        changed: [],
        rebuilt: [],
        removed: [],
      });
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);

      // the same found by a worker's start
      const dallas: PlannedSchedule = { ...NIGHTLY, id: 'sync:dallas', data: { feed: 'dallas' } };
      const again = await lose(dallas);
      const changes = await applySchedules(q.redis, q.queues, [dallas], { root: q.prefix, logger: silentLogger });
      expect(changes.rebuilt).toEqual(['sync:dallas']);
      expect(await pendingJobs(dallas)).toEqual([again.after]);
      expect((await q.queues.sync.getJobScheduler(dallas.id))?.template?.data).toEqual(dallas.data);
    },
  );

  // A tick run early (its job finished before its tick, the next job made at the tick after it) must
  // not come back: BullMQ's upsert makes the pattern's next tick after now, that one, and where the
  // scheduler's next job was there to replace it writes over the finished job's hash and queues it
  // again (addJobScheduler-11.lua checks the id's collision only when it replaced nothing).
  describe('a tick run early is not made again', () => {
    const day = 24 * 3600 * 1000;
    /** NIGHTLY's next job finished before its tick, made again at the tick after it (as its worker would). */
    async function ranEarly(s: PlannedSchedule, o: { definitionLost?: boolean; failingHdel?: boolean } = {}) {
      await applySchedules(q.redis, q.queues, [s], { root: q.prefix, logger: silentLogger });
      const ran = await loseNext(s, 'completed');
      if (o.definitionLost) await q.redis.del(q.queues.sync.toKey(`repeat:${s.id}`));
      const hdel = q.redis.hdel.bind(q.redis);
      // Redis answering the write and then not (a failover, a dropped connection) for one start
      if (o.failingHdel) q.redis.hdel = (() => Promise.reject(new Error('connection lost'))) as typeof q.redis.hdel;
      try {
        // (cut short, the start fails: the next one finds what the write left)
        await applySchedules(q.redis, q.queues, [s], { root: q.prefix, logger: silentLogger }).catch((err: unknown) => {
          if (!o.failingHdel) throw err;
        });
      } finally {
        q.redis.hdel = hdel;
      }
      return { ran, after: `repeat:${s.id}:${Number(ran.split(':').pop()) + day}` };
    }

    it.each([
      [
        'its definition lost too, repaired, the repair cut short after its write',
        { definitionLost: true, failingHdel: true },
      ],
      ['its definition lost too, repaired', { definitionLost: true }],
      ['its definition kept', {}],
    ])('%s: starts after, the same definition or a changed one, leave that tick run', async (_, o) => {
      const { ran, after } = await ranEarly(NIGHTLY, o);
      await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);
      const changed: PlannedSchedule = { ...NIGHTLY, data: { feed: 'austin', note: 'changed' } };
      const changes = await applySchedules(q.redis, q.queues, [changed], { root: q.prefix, logger: silentLogger });
      expect(changes.changed).toEqual([NIGHTLY.id]);
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);
      expect(await q.queues.sync.getJobState(ran)).toBe('completed');
      // and the definition is the planned one: a start finds nothing to write
      expect(await applySchedules(q.redis, q.queues, [changed], { root: q.prefix, logger: silentLogger })).toEqual({
        added: [],
        changed: [],
        rebuilt: [],
        removed: [],
      });
    });

    it('nor when the finished job is gone too (removeOnComplete): a changed definition, the same pattern, keeps the next tick', async () => {
      const { ran, after } = await ranEarly(NIGHTLY);
      await q.redis.del(q.queues.sync.toKey(ran));
      await q.redis.zrem(q.queues.sync.toKey('completed'), ran);
      const changed: PlannedSchedule = { ...NIGHTLY, data: { feed: 'austin', note: 'changed' } };
      await applySchedules(q.redis, q.queues, [changed], { root: q.prefix, logger: silentLogger });
      expect(await pendingJobs(NIGHTLY)).toEqual([after]);
    });

    it('a changed pattern moves the next run to its own next time, as before', async () => {
      const { ran } = await ranEarly(NIGHTLY);
      const hourly: PlannedSchedule = { ...NIGHTLY, pattern: '0 * * * *' };
      await applySchedules(q.redis, q.queues, [hourly], { root: q.prefix, logger: silentLogger });
      const hour = 3600 * 1000;
      // the next hour, unless that is the nightly tick already run early (in the hour before it): then the one after
      const next = Math.floor(Date.now() / hour + 1) * hour;
      const expected = `repeat:${NIGHTLY.id}:${next}` === ran ? next + hour : next;
      expect(await pendingJobs(NIGHTLY)).toEqual([`repeat:${NIGHTLY.id}:${expected}`]);
    });
  });

  it("a worker's start builds it again too (an unchanged scheduler is otherwise left alone)", async () => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const lost = await loseNext(NIGHTLY, 'hash');
    const { logger, warnings } = capture();
    const changes = await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger });
    expect(changes).toEqual({ added: [], changed: [], rebuilt: ['sync:austin'], removed: [] });
    expect(await pendingJobs(NIGHTLY)).toEqual([lost]);
    expect(warnings()).toMatchObject([{ scheduler: 'sync:austin', state: 'gone', lostJob: lost, nextJob: lost }]);
  });

  it('a job of it being taken (active, the worker not yet done making the next one) is not lost: nothing written, one next job', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const taken = deferred();
    const gate = deferred();
    const worker = new Worker(QUEUE_NAMES.sync, async () => undefined, {
      connection: testRedis(),
      prefix: q.prefix,
      autorun: false,
    });
    // BullMQ's worker makes a scheduler's next job as it takes one (classes/worker.js, nextJobFromJobData):
    // held here, the taken job is active and still the one the scheduler names
    const scheduler = (await (worker as unknown as { jobScheduler: Promise<object> }).jobScheduler) as {
      upsertJobScheduler: (...a: unknown[]) => Promise<unknown>;
    };
    const make = scheduler.upsertJobScheduler.bind(scheduler);
    scheduler.upsertJobScheduler = async (...a: unknown[]) => {
      taken.resolve();
      await gate.promise;
      return make(...a);
    };
    const { logger, warnings } = capture();
    const stop = watchSchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, intervalMs: 20, logger });
    try {
      void worker.run();
      await taken.promise;
      const [active] = await q.queues.sync.getJobs(['active']);
      expect(active?.id).toMatch(/^repeat:sync:austin:/);
      // several looks while it is active and no next job exists
      await new Promise((r) => setTimeout(r, 300));
      expect(await pendingJobs(EVERY_SECOND)).toEqual([]);
      gate.resolve();
      await until('the next job made by the worker', async () => (await pendingJobs(EVERY_SECOND)).length > 0);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      stop();
      await worker.close();
    }
    expect(warnings()).toEqual([]);
  });

  // What a nightly operator expects of a tick whose worker was lost as it took it (killed between
  // BullMQ's moveToActive and the make of the next job, or its make failed): no night lost, none run
  // twice. The scheduler still names the taken job, so that job's run never started (BullMQ makes a
  // scheduler's next job before it runs the one taken): it is run once, by the stalled check that
  // puts it back in `wait`, and the watch writes nothing; or, the job lost from Redis (its hash, or
  // its entry in `active`), made up once by the watch, and nothing else of it runs (its id left in
  // `active` was put back as a job with no data: the tick ran twice, once broken).
  it.each(['kept', 'its hash lost', 'its entry in `active` lost'] as const)(
    'its job taken by a worker lost before it made the next, %s: run once, nothing run twice',
    async (how) => {
      await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
      const [tick] = await pendingJobs(EVERY_SECOND);
      await until('its tick come', async () => Date.now() > Number(tick!.split(':').pop()) + 50);
      // as BullMQ's moveToActive leaves it (delayed to active, taken, its lock held for a second by a
      // worker that then died); no next job made
      await q.redis.eval(
        `redis.call('ZREM', KEYS[1], ARGV[1]); redis.call('LPUSH', KEYS[2], ARGV[1])
       redis.call('HSET', KEYS[3], 'processedOn', ARGV[2], 'ats', '1')
       redis.call('SET', KEYS[3] .. ':lock', 'a-lost-worker', 'PX', 1000)`,
        3,
        q.queues.sync.toKey('delayed'),
        q.queues.sync.toKey('active'),
        q.queues.sync.toKey(tick!),
        tick!,
        String(Date.now()),
      );
      if (how === 'its hash lost') await q.redis.del(q.queues.sync.toKey(tick!));
      if (how === 'its entry in `active` lost') await q.redis.lrem(q.queues.sync.toKey('active'), 1, tick!);
      const { logger, warnings } = capture();
      const ran: string[] = [];
      const stop = watchSchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, intervalMs: 50, logger });
      const worker = new Worker(QUEUE_NAMES.sync, async (job) => void ran.push(job.id!), {
        connection: testRedis(),
        prefix: q.prefix,
        stalledInterval: 500,
      });
      try {
        await until('the taken tick run, and two ticks after it', async () => ran.length >= 3, 10_000);
      } finally {
        stop();
        await worker.close();
      }
      // its tick run once: by the stalled check (kept), or made up, due now (lost with the job)
      const ofTick = ran.filter((id) => id === tick || Number(id.split(':').pop()) % 1000 !== 0);
      expect(ofTick).toHaveLength(1);
      expect(new Set(ran).size).toBe(ran.length);
      if (how === 'kept') expect(warnings()).toEqual([]);
      else expect(warnings()).toMatchObject([{ state: how === 'its hash lost' ? 'gone' : 'orphan', lostJob: tick }]);
    },
  );

  it("its definition's hash deleted: the worker taking a tick cannot make the next (BullMQ's script fails midway), the watch builds it, its data whole", async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    await q.redis.del(q.queues.sync.toKey(`repeat:${EVERY_SECOND.id}`));
    const ran: Array<[string, unknown]> = [];
    const errors: string[] = [];
    const worker = new Worker(QUEUE_NAMES.sync, async (job) => void ran.push([job.id!, job.data]), {
      connection: testRedis(),
      prefix: q.prefix,
    });
    worker.on('error', (err) => errors.push(err.message));
    const { logger, warnings } = capture();
    let stop = () => {};
    try {
      // updateJobScheduler-12.lua scores the next tick, then fails on the definition's missing name
      // (the watch, started after, finds that next job gone; started before, it finds the definition
      // lost and writes it before a worker takes the tick: test/queue/schedule-start.test.ts)
      await until('the worker failing to make the next', async () =>
        errors.some((e) => /Failed to add repeatable job for next iteration/.test(e)),
      );
      stop = watchSchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, intervalMs: 100, logger });
      const before = ran.length;
      await until('two ticks run after the repair', async () => ran.length >= before + 2, 10_000);
    } finally {
      stop();
      await worker.close();
    }
    expect(warnings()).toMatchObject([{ scheduler: 'sync:austin', state: 'gone', definitionLost: true }]);
    expect(ran.every(([, data]) => isDeepStrictEqual(data, EVERY_SECOND.data))).toBe(true);
    expect((await q.queues.sync.getJobScheduler(EVERY_SECOND.id))?.template?.data).toEqual(EVERY_SECOND.data);
  });

  it('a worker taking a tick every second while the watch looks every 20 ms: nothing written, each tick run once', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const ran: string[] = [];
    const worker = new Worker(
      QUEUE_NAMES.sync,
      async (job) => {
        ran.push(job.id!);
        await new Promise((r) => setTimeout(r, 150));
      },
      { connection: testRedis(), prefix: q.prefix, concurrency: 2 },
    );
    const { logger, warnings } = capture();
    const stop = watchSchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, intervalMs: 20, logger });
    try {
      await until('four ticks run', async () => ran.length >= 4, 10_000);
    } finally {
      stop();
      await worker.close();
    }
    expect(new Set(ran).size).toBe(ran.length);
    expect(warnings()).toEqual([]);
    expect(await pendingJobs(EVERY_SECOND)).toHaveLength(1);
  });
});
