// A worker writes again the job schedulers Redis lost (src/queue/schedule-watch.ts), on real Redis
// under a unique prefix: one it finds there is not written (its next job, the tick due, stays as
// it was); several workers finding one lost at once write it once, one scheduler with one next job;
// a connection ready again after a drop looks at once, with the warning an operator can act on.
// The end-to-end case (a redis-server restarted empty) is schedules-after-restart.processes.test.ts.
import '../setup/needs-redis.js';
import { Writable } from 'node:stream';
import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../src/log.js';
import {
  applySchedules,
  createQueues,
  closeQueues,
  QUEUE_NAMES,
  upsertSchedule,
  type PlannedSchedule,
} from '../../src/queue/index.js';
import { schedulerStates } from '../../src/queue/schedule-state.js';
import { restoreSchedules, watchSchedules } from '../../src/queue/schedule-watch.js';
import { testRedis, until, useQueues } from './helpers.js';

const PLANNED: PlannedSchedule[] = [
  { kind: 'sync', id: 'sync:austin', pattern: '0 3 * * *', name: QUEUE_NAMES.sync, data: { feed: 'austin' } },
  {
    kind: 'settings',
    id: 'settings:SN-1',
    pattern: '0 4 * * *',
    name: QUEUE_NAMES.settings,
    data: { chatbot: 'SN-1' },
  },
];

const q = useQueues();

/** the planned schedulers Redis lacks: their ids */
async function missing(planned: readonly PlannedSchedule[]): Promise<string[]> {
  const states = await schedulerStates(q.redis, q.queues, planned, { dropOrphans: false });
  return states.filter((s) => s.state === 'missing').map((s) => s.schedule.id);
}

/** the next job of each scheduler: its id (`repeat:<scheduler>:<millis>`), state and delay */
async function nextJobs() {
  const jobs = [
    ...(await q.queues.sync.getJobs(['delayed', 'waiting'], 0, -1)),
    ...(await q.queues.settings.getJobs(['delayed', 'waiting'], 0, -1)),
  ];
  return jobs.map((j) => `${j.id} ${j.timestamp + j.delay}`).sort();
}

describe('job schedulers Redis lost', () => {
  it('all there: nothing is written; a tick due and not yet taken stays (an upsert would move it to the next tick)', async () => {
    // due every second, and no worker to take its next job: that job's time passes, as when every worker is busy
    const everySecond: PlannedSchedule = { ...PLANNED[0]!, pattern: '* * * * * *' };
    const planned = [everySecond, PLANNED[1]!];
    await applySchedules(q.redis, q.queues, planned, { root: q.prefix, logger: silentLogger });
    const [tick] = await q.queues.sync.getJobs(['delayed', 'waiting']);
    await until('the tick due', async () => Date.now() > tick!.timestamp + tick!.delay + 50);
    const before = await nextJobs();
    expect(await missing(planned)).toEqual([]);
    expect(await restoreSchedules(q.redis, q.queues, planned, q.prefix)).toEqual({ written: [], failed: [] });
    expect(await nextJobs()).toEqual(before);
    expect(before.filter((j) => j.startsWith(`${tick!.id} `))).toHaveLength(1);

    // why only the missing are written: BullMQ's upsert of one that is there replaces the due tick by the next one
    await upsertSchedule(q.queues, everySecond);
    const after = (await q.queues.sync.getJobs(['delayed', 'waiting'])).map((j) => j.id);
    expect(after).toHaveLength(1);
    expect(after).not.toContain(tick!.id);
  });

  it('five workers finding one lost at once: written once, one scheduler, one next job', async () => {
    await applySchedules(q.redis, q.queues, PLANNED, { root: q.prefix, logger: silentLogger });
    const kept = (await nextJobs()).filter((j) => j.startsWith('repeat:settings:'));
    await q.queues.sync.removeJobScheduler('sync:austin');
    expect(await missing(PLANNED)).toEqual(['sync:austin']);

    const workers = Array.from({ length: 5 }, () => {
      const redis = testRedis();
      return { redis, queues: createQueues(redis, q.prefix) };
    });
    try {
      const written = await Promise.all(workers.map((w) => restoreSchedules(w.redis, w.queues, PLANNED, q.prefix)));
      expect(written.flatMap((o) => o.written.map((w) => [w.schedule.id, w.state]))).toEqual([
        ['sync:austin', 'missing'],
      ]);
    } finally {
      for (const w of workers) {
        await closeQueues(w.queues);
        await w.redis.quit();
      }
    }
    expect((await q.queues.sync.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual(['sync:austin']);
    const next = await nextJobs();
    expect(next.filter((j) => j.startsWith('repeat:sync:austin:'))).toHaveLength(1);
    expect(next.filter((j) => j.startsWith('repeat:settings:'))).toEqual(kept);
  });

  it('one a newer config removed (its worker started) is not written again by a worker of the old config, nor its run made up', async () => {
    await applySchedules(q.redis, q.queues, PLANNED, { root: q.prefix, logger: silentLogger });
    // the watch of a worker of the old config saw it waiting for its latest tick (a run it would make up)
    const latest = CronExpressionParser.parse(PLANNED[0]!.pattern).prev().getTime();
    const waitedFor = new Map([['sync:austin', latest]]);
    // a rolling deploy: a worker of a config without it starts beside the old worker
    const newer = await applySchedules(q.redis, q.queues, [PLANNED[1]!], { root: q.prefix, logger: silentLogger });
    expect(newer.removed).toEqual(['sync:austin']);
    expect(await restoreSchedules(q.redis, q.queues, PLANNED, q.prefix, waitedFor)).toEqual({
      written: [],
      failed: [],
    });
    expect(await missing(PLANNED)).toEqual(['sync:austin']);
    expect((await nextJobs()).filter((j) => j.startsWith('repeat:sync:austin:'))).toEqual([]);

    // planned again by a later config: its start writes it, and a loss of it is written again
    expect((await applySchedules(q.redis, q.queues, PLANNED, { root: q.prefix, logger: silentLogger })).added).toEqual([
      'sync:austin',
    ]);
    await q.queues.sync.removeJobScheduler('sync:austin');
    const again = await restoreSchedules(q.redis, q.queues, PLANNED, q.prefix);
    expect(again.written.map((w) => [w.schedule.id, w.state])).toEqual([['sync:austin', 'missing']]);
  });

  // The marks are what keeps an old worker's watch from writing back a scheduler a newer config
  // removed; kept for ever they grew with every scheduler ever removed.
  it('the marks of removed schedulers stay bounded: each start drops those a week old and those planned again; a fresh mark still holds', async () => {
    const key = `${q.prefix}:schedules-removed`;
    const feed = (i: number): PlannedSchedule => ({ ...PLANNED[0]!, id: `sync:f${i}`, data: { feed: `f${i}` } });
    // thirty deploys, each replacing the feed of the one before: each start removes one scheduler
    for (let i = 0; i < 30; i++)
      await applySchedules(q.redis, q.queues, [PLANNED[1]!, feed(i)], { root: q.prefix, logger: silentLogger });
    expect(await q.redis.zcard(key)).toBe(29);
    // as if removed long ago (more than a week)
    for (const id of await q.redis.zrange(key, 0, -1)) await q.redis.zadd(key, 'XX', 1, id);
    await applySchedules(q.redis, q.queues, [PLANNED[1]!, feed(30)], { root: q.prefix, logger: silentLogger });
    expect(await q.redis.zrange(key, 0, -1)).toEqual(['sync:f29']);

    // the fresh mark holds: the watch of a worker still on the config with f29 does not write it back
    const old = [PLANNED[1]!, feed(29)];
    expect(await restoreSchedules(q.redis, q.queues, old, q.prefix)).toEqual({ written: [], failed: [] });
    // a mark a week old no longer does (a worker of that config still running is then no rollout)
    await q.redis.zadd(key, 'XX', 1, 'sync:f29');
    const written = await restoreSchedules(q.redis, q.queues, old, q.prefix);
    expect(written.written.map((w) => w.schedule.id)).toEqual(['sync:f29']);
    // and one planned again is unmarked by the start that plans it
    await applySchedules(q.redis, q.queues, [PLANNED[1]!, feed(29)], { root: q.prefix, logger: silentLogger });
    expect(await q.redis.zrange(key, 0, -1)).toEqual(['sync:f30']);
  });

  // A write BullMQ refuses is tried again at every look (every worker.scheduleCheckSeconds, seconds in
  // a test): each look warned again. Here the queue's `repeat` set is lost alone while the next
  // job, its tick ahead, is kept: the upsert builds the job of that tick, whose id the kept one
  // holds (-10), until that tick has passed.
  it('a write refused at every look is warned of once, again when the failure changes, and after a long while', async () => {
    await applySchedules(q.redis, q.queues, PLANNED, { root: q.prefix, logger: silentLogger });
    await q.redis.del(q.queues.sync.toKey('repeat'));
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
    });
    const said = () =>
      lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => (l.level as number) >= 40);
    const looks = async (n: number, o: { sayAgainMs?: number } = {}) => {
      const stop = watchSchedules(q.redis, q.queues, PLANNED, { root: q.prefix, intervalMs: 50, logger, ...o });
      try {
        await new Promise((r) => setTimeout(r, n * 50 + 100));
      } finally {
        stop();
      }
    };
    await looks(10);
    expect(said()).toMatchObject([{ scheduler: 'sync:austin', state: 'missing' }]);
    expect(said()[0]!.msg).toMatch(/^job scheduler sync:austin lost and not written again: .*already exists/);
    expect(await missing(PLANNED)).toEqual(['sync:austin']);

    // another failure of it (its hash a key of another type): said once; the failed write scored it
    // (a script's writes before its error stay), so the look itself fails from then on: said once
    const kept = (await q.queues.sync.getJobs(['delayed'])).map((j) => j.id!);
    for (const id of kept) await q.redis.del(q.queues.sync.toKey(id));
    await q.redis.set(q.queues.sync.toKey('repeat:sync:austin'), 'not a hash');
    await looks(10);
    expect(said().map((l) => l.err)).toEqual([
      expect.stringMatching(/already exists/),
      expect.stringMatching(/^WRONGTYPE/),
      expect.stringMatching(/^WRONGTYPE/),
    ]);
    expect(said()[2]!.msg).toMatch(/^looking for lost job schedulers failed/);

    // after a long while (here 200 ms) the same failure is said again, with how often it failed since
    const before = said().length;
    await looks(10, { sayAgainMs: 200 });
    const later = said().slice(before);
    expect(later.length).toBeGreaterThan(1);
    expect(later[0]).not.toHaveProperty('times');
    expect(later[1]).toMatchObject({ times: expect.any(Number) as number });
  });

  it('a connection ready again after a drop looks at once, and says what it wrote', async () => {
    await applySchedules(q.redis, q.queues, PLANNED, { root: q.prefix, logger: silentLogger });
    await q.queues.sync.removeJobScheduler('sync:austin');
    await q.queues.settings.removeJobScheduler('settings:SN-1');
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
    });
    // an hour between periodic looks: only the reconnect can make this one
    const stop = watchSchedules(q.redis, q.queues, PLANNED, { root: q.prefix, intervalMs: 3_600_000, logger });
    try {
      q.redis.disconnect(true);
      await until('the lost schedulers written again', async () =>
        (await missing(PLANNED)).length === 0 ? true : undefined,
      );
      await until('the warning', async () => lines.find((l) => l.includes('Redis lost the job schedulers')));
    } finally {
      stop();
    }
    const warning = JSON.parse(lines.find((l) => l.includes('Redis lost the job schedulers'))!) as Record<
      string,
      unknown
    >;
    expect(warning).toMatchObject({
      level: 40,
      schedulers: ['sync:austin', 'settings:SN-1'],
      msg: 'Redis lost the job schedulers (restart without persistence?); written again: 2',
    });
    expect(await nextJobs()).toHaveLength(2);
  });
});
