// A worker's start writes the job schedulers of its config (applySchedules), on real Redis under a
// unique prefix: one there as configured is left as it is, so a tick due and not yet taken (every
// worker busy, or all of them down for a moment during a rolling restart) stays and runs; BullMQ's
// upsert of it would move that run to the next tick. One whose definition changed is written anew,
// with a line saying its next run moved; several workers starting at once write it once.
import '../setup/needs-redis.js';
import { Writable } from 'node:stream';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../src/log.js';
import {
  applySchedules,
  closeQueues,
  createQueues,
  QUEUE_NAMES,
  type PlannedSchedule,
  type ScheduleChanges,
} from '../../src/queue/index.js';
import { restoreSchedules } from '../../src/queue/schedule-watch.js';
import { captureLogs, EVERY_SECOND, NIGHTLY, testRedis, until, useQueues } from './helpers.js';

const q = useQueues();

describe('job schedulers at a worker start', () => {
  it('one unchanged is left alone: its tick due and not taken stays, and a worker runs it', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const [tick] = await q.queues.sync.getJobs(['delayed', 'waiting']);
    // no worker takes it: its time passes
    await until('the tick due', async () => Date.now() > tick!.timestamp + tick!.delay + 50);

    // a rolling restart: the next worker starts
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const next = (await q.queues.sync.getJobs(['delayed', 'waiting'])).map((j) => j.id);
    expect(next).toEqual([tick!.id]);

    // and takes jobs: the due tick is run, not skipped
    const ran: string[] = [];
    const worker = new Worker(QUEUE_NAMES.sync, async (job) => void ran.push(job.id!), {
      connection: testRedis(),
      prefix: q.prefix,
    });
    try {
      await until('the due tick run', async () => ran.includes(tick!.id!));
    } finally {
      await worker.close();
    }
    expect(ran[0]).toBe(tick!.id);
  });

  it('one changed (pattern, tz, data or job options) is written anew, and a line says its next run moved', async () => {
    const start = (planned: PlannedSchedule[]) =>
      applySchedules(q.redis, q.queues, planned, { root: q.prefix, logger: silentLogger });
    expect(await start([NIGHTLY])).toEqual({ added: ['sync:austin'], changed: [], rebuilt: [], removed: [] });
    expect(await start([NIGHTLY])).toEqual({ added: [], changed: [], rebuilt: [], removed: [] });

    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
    });
    const at4 = { ...NIGHTLY, pattern: '0 4 * * *', tz: 'America/Denver' };
    expect(await applySchedules(q.redis, q.queues, [at4], { root: q.prefix, logger })).toEqual({
      added: [],
      changed: ['sync:austin'],
      rebuilt: [],
      removed: [],
    });
    const line = JSON.parse(lines.find((l) => l.includes('job scheduler sync:austin changed'))!) as Record<
      string,
      unknown
    >;
    expect(line).toMatchObject({ scheduler: 'sync:austin', changed: ['pattern', 'tz'] });
    expect(line.msg).toMatch(/written anew, its next run moved to the new definition's next time/);
    const stored = await q.queues.sync.getJobScheduler('sync:austin');
    expect([stored?.pattern, stored?.tz]).toEqual(['0 4 * * *', 'America/Denver']);

    // the job's data, and the options every job of the queue gets
    expect((await start([{ ...at4, data: { feeds: ['austin', 'dallas'] } }])).changed).toEqual(['sync:austin']);
    const other = createQueues(q.redis, q.prefix, { attempts: 5 });
    try {
      const planned = [{ ...at4, data: { feeds: ['austin', 'dallas'] } }];
      const changes = await applySchedules(q.redis, other, planned, { root: q.prefix, logger: silentLogger });
      expect(changes.changed).toEqual(['sync:austin']);
      expect((await q.queues.sync.getJobScheduler('sync:austin'))?.template?.opts?.attempts).toBe(5);
    } finally {
      await closeQueues(other);
    }
    expect((await q.queues.sync.getJobs(['delayed', 'waiting'])).map((j) => j.id)).toHaveLength(1);
  });

  it('five workers starting at once with a changed definition write it once: one scheduler, one next job', async () => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const at4 = { ...NIGHTLY, pattern: '0 4 * * *' };
    const workers = Array.from({ length: 5 }, () => {
      const redis = testRedis();
      return { redis, queues: createQueues(redis, q.prefix, {}) };
    });
    let all: ScheduleChanges[];
    try {
      all = await Promise.all(
        workers.map((w) => applySchedules(w.redis, w.queues, [at4], { root: q.prefix, logger: silentLogger })),
      );
    } finally {
      for (const w of workers) {
        await closeQueues(w.queues);
        await w.redis.quit();
      }
    }
    expect(all.flatMap((c) => c.changed)).toEqual(['sync:austin']);
    expect(all.flatMap((c) => c.added)).toEqual([]);
    expect((await q.queues.sync.getJobSchedulers(0, -1)).map((s) => [s.key, s.pattern])).toEqual([
      ['sync:austin', '0 4 * * *'],
    ]);
    expect(await q.queues.sync.getJobs(['delayed', 'waiting'])).toHaveLength(1);
    expect(await q.redis.exists(`${q.prefix}:schedules-writer`)).toBe(0);
  });

  // A scheduler's own hash `<queue>:repeat:<id>` deleted (a key deleted by hand or evicted) while its
  // score and next job stay: getJobScheduler reads nothing for it. BullMQ's upsert of it replaces
  // that next job by one at the pattern's next time after now (addJobScheduler-11.lua), so a tick
  // due and not yet taken would move on.
  it("its definition's hash lost, its tick due and not taken: written again with a warning, and the due run stays due", async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const [tick] = await q.queues.sync.getJobs(['delayed', 'waiting']);
    await until('the tick due', async () => Date.now() > tick!.timestamp + tick!.delay + 50);
    await q.redis.del(q.queues.sync.toKey(`repeat:${EVERY_SECOND.id}`));

    const { logger, warnings: said } = captureLogs();
    const changes = await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger });
    // the run due is still due: waiting for a worker now, not moved to a later tick
    const pending = await q.queues.sync.getJobs(['delayed', 'waiting', 'prioritized']);
    expect(pending).toHaveLength(1);
    expect(await pending[0]!.getState()).toBe('waiting');
    expect(changes).toEqual({ added: [], changed: [], rebuilt: ['sync:austin'], removed: [] });
    expect((await q.queues.sync.getJobScheduler(EVERY_SECOND.id))?.template?.data).toEqual(EVERY_SECOND.data);
    const warnings = said();
    expect(warnings).toMatchObject([{ scheduler: 'sync:austin', definitionLost: true }]);
    expect(warnings[0]!.msg).toMatch(/^job scheduler sync:austin's definition was not in Redis/);
  });

  // BullMQ's getJobSchedulers removes a scheduler whose hash it cannot read (classes/job-scheduler.js,
  // getSchedulerData: removeJobScheduler when the hash is empty), and its delayed next job with it.
  it("its definition's hash lost and the writer's key held by another worker all along: the start's cleanup keeps it, with its next job; the watch writes it again", async () => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const [next] = await q.queues.sync.getJobs(['delayed']);
    await q.redis.del(q.queues.sync.toKey(`repeat:${NIGHTLY.id}`));
    const writer = `${q.prefix}:schedules-writer`;
    await q.redis.set(writer, 'another-worker', 'PX', 30_000);

    const changes = await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    expect(changes.removed).toEqual([]);
    expect(await q.redis.zscore(q.queues.sync.toKey('repeat'), NIGHTLY.id)).not.toBeNull();
    expect((await q.queues.sync.getJobs(['delayed'])).map((j) => j.id)).toEqual([next!.id]);

    // the key let go: the watch's look finds the definition lost and writes it, its next job kept
    await q.redis.del(writer);
    const { written } = await restoreSchedules(q.redis, q.queues, [NIGHTLY], q.prefix);
    expect(written).toMatchObject([{ schedule: { id: NIGHTLY.id }, definitionLost: true, nextJob: next!.id }]);
    expect((await q.queues.sync.getJobScheduler(NIGHTLY.id))?.template?.data).toEqual(NIGHTLY.data);
    expect((await q.queues.sync.getJobs(['delayed'])).map((j) => j.id)).toEqual([next!.id]);
  });
});
