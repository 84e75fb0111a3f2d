// A scheduled run that Redis lost before it ran is run once, late, with a warning naming the
// schedule and how late (src/queue/schedule-catch-up.ts): its scheduler's next job lost and found
// after its tick (the watch, or a start), or the scheduler lost whole while this worker's watch saw
// it waiting for a tick that then came. Only the latest tick, and only while it is less than one
// interval of the pattern old. The rule on fixed times; the rest on real Redis under a unique prefix.
import '../setup/needs-redis.js';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { applySchedules, QUEUE_NAMES, type PlannedSchedule } from '../../src/queue/index.js';
import { missedTick } from '../../src/queue/schedule-catch-up.js';
import { restoreSchedules, watchSchedules } from '../../src/queue/schedule-watch.js';
import { sayLostRunMadeUp } from '../../src/queue/schedule-write.js';
import { EVERY_SECOND, NIGHTLY, testRedis, until, useQueues, captureLogs as capture } from './helpers.js';

const at = (iso: string) => Date.parse(iso);
const DAY = 24 * 3600 * 1000;

describe('the run to make up for (fixed times)', () => {
  const nightly = { pattern: '0 2 * * *' };

  it('the tick waited for has come: that tick, once', () => {
    expect(missedTick(nightly, at('2026-12-07T02:00:00Z'), at('2026-12-07T02:01:00Z'))).toBe(
      at('2026-12-07T02:00:00Z'),
    );
    // a tick exactly now is one
    expect(missedTick(nightly, at('2026-12-07T02:00:00Z'), at('2026-12-07T02:00:00Z'))).toBe(
      at('2026-12-07T02:00:00Z'),
    );
  });

  it('the tick waited for is ahead (Redis back at 01:56, the tick at 02:00): nothing to make up for', () => {
    expect(missedTick(nightly, at('2026-12-07T02:00:00Z'), at('2026-12-07T01:56:00Z'))).toBeUndefined();
  });

  it('several ticks missed: the latest alone', () => {
    expect(missedTick(nightly, at('2026-12-04T02:00:00Z'), at('2026-12-07T09:00:00Z'))).toBe(
      at('2026-12-07T02:00:00Z'),
    );
  });

  it("the latest tick older than the pattern's interval before it: not run (the next is nearer)", () => {
    const twice = { pattern: '0 9,17 * * *' };
    // 17:00 is 8 h after 09:00; at 08:00 the next day it is 15 h old
    expect(missedTick(twice, at('2026-12-06T17:00:00Z'), at('2026-12-07T08:00:00Z'))).toBeUndefined();
    expect(missedTick(twice, at('2026-12-06T17:00:00Z'), at('2026-12-07T00:30:00Z'))).toBe(at('2026-12-06T17:00:00Z'));
  });

  it("in the schedule's time zone", () => {
    const chicago = { pattern: '0 2 * * *', tz: 'America/Chicago' };
    expect(missedTick(chicago, at('2026-12-07T08:00:00Z'), at('2026-12-07T08:05:00Z'))).toBe(
      at('2026-12-07T08:00:00Z'),
    );
  });

  it('the night clocks spring forward: the tick BullMQ made for a time that does not exist is made up', () => {
    // 02:00 does not exist in New York on 2027-03-14; BullMQ's next tick after midnight is 03:00 EDT (07:00Z)
    const ny = { pattern: '0 2 * * *', tz: 'America/New_York' };
    expect(missedTick(ny, at('2027-03-14T07:00:00Z'), at('2027-03-14T08:30:00Z'))).toBe(at('2027-03-14T07:00:00Z'));
    // a made-up run's own tick (not one of the pattern's), lost in turn: not made up again
    expect(missedTick(ny, at('2027-03-14T08:30:00Z'), at('2027-03-14T08:31:00Z'))).toBeUndefined();
  });
});

const q = useQueues();

/** the scheduler's jobs in a state that will yet run */
async function pending(s: PlannedSchedule) {
  const jobs = await q.queues[s.kind].getJobs(['delayed', 'waiting', 'prioritized'], 0, -1);
  return jobs.filter((j) => j.id!.startsWith(`repeat:${s.id}:`));
}

describe('a run Redis lost before it ran', () => {
  it('its next job lost, found after its tick: run once now, with a warning naming it and how late; the ticks go on after it', async () => {
    await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger: silentLogger });
    const [next] = await pending(NIGHTLY);
    // as if found a day earlier: the scheduler waits for the latest 03:00 gone by, and that job is lost
    const tick = Number(next!.id!.split(':').pop()) - DAY;
    const repeat = q.queues.sync.toKey('repeat');
    await q.redis
      .multi()
      .zadd(repeat, tick, NIGHTLY.id)
      .del(q.queues.sync.toKey(next!.id!))
      .zrem(q.queues.sync.toKey('delayed'), next!.id!)
      .exec();

    const { logger, warnings } = capture();
    const stop = watchSchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, intervalMs: 50, logger });
    try {
      await until('the watch to write it', async () => (await pending(NIGHTLY)).length > 0, 5_000);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      stop();
    }
    const [caughtUp, ...more] = await pending(NIGHTLY);
    expect(more).toEqual([]);
    expect(await caughtUp!.getState()).toBe('waiting');
    expect(warnings()).toMatchObject([
      { scheduler: NIGHTLY.id, state: 'gone', lostJob: `repeat:${NIGHTLY.id}:${tick}`, missedTick: tick },
    ]);
    expect(warnings()[0]!.msg).toMatch(
      new RegExp(
        `^job scheduler sync:austin had no next job: .*; its run of ${new Date(tick).toISOString()} was missed: run now, [0-9.]+ (s|min|h) late, once`,
      ),
    );

    // a worker runs it, and makes the next at the pattern's next tick
    const ran: string[] = [];
    const worker = new Worker(QUEUE_NAMES.sync, async (job) => void ran.push(job.id!), {
      connection: testRedis(),
      prefix: q.prefix,
    });
    try {
      await until('the late run', async () => ran.length > 0);
      await until('the next tick made', async () => (await pending(NIGHTLY)).length > 0);
    } finally {
      await worker.close();
    }
    expect(ran).toEqual([caughtUp!.id]);
    expect((await pending(NIGHTLY)).map((j) => j.id)).toEqual([next!.id]);
  });

  it('the scheduler lost whole after the watch saw it waiting for a tick, written once that tick has come: run once now, warned', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, logger: silentLogger });
    const [next] = await pending(EVERY_SECOND);
    const tick = Number(next!.id!.split(':').pop());
    const { logger, warnings } = capture();
    const writer = `${q.prefix}:schedules-writer`;
    const stop = watchSchedules(q.redis, q.queues, [EVERY_SECOND], { root: q.prefix, intervalMs: 50, logger });
    try {
      await new Promise((r) => setTimeout(r, 200)); // it looks: the scheduler waits for `tick`
      // lost while another worker holds the writer's key: nothing written until the tick has come
      await q.redis.set(writer, 'another-worker', 'PX', 10_000);
      await q.queues.sync.removeJobScheduler(EVERY_SECOND.id);
      await until('its tick come', async () => Date.now() > tick + 50);
      await q.redis.del(writer);
      await until('the watch to write it', async () => (await pending(EVERY_SECOND)).length > 0, 5_000);
    } finally {
      stop();
    }
    const [caughtUp, ...more] = await pending(EVERY_SECOND);
    expect(more).toEqual([]);
    expect(await caughtUp!.getState()).toBe('waiting');
    const said = warnings().filter((w) => w.scheduler === EVERY_SECOND.id);
    expect(said).toMatchObject([{ state: 'missing' }]);
    expect(said[0]!.missedTick).toBeGreaterThanOrEqual(tick);
    expect(said[0]!.msg).toMatch(
      /^job scheduler sync:austin was lost from Redis, its run of .* not run: run now, .* late, once/,
    );
  });

  it("a worker's start finding one missing writes it only (new in config, or lost before the start: it cannot tell)", async () => {
    const { logger, warnings } = capture();
    const changes = await applySchedules(q.redis, q.queues, [NIGHTLY], { root: q.prefix, logger });
    expect(changes.added).toEqual([NIGHTLY.id]);
    const [next] = await pending(NIGHTLY);
    expect(await next!.getState()).toBe('delayed');
    expect(warnings()).toEqual([]);
  });
});

describe('a scheduler lost after its tick ran (s28 review)', () => {
  // every 5 s: the tick comes within the test, and the look after its run is within its interval
  const EVERY_5S: PlannedSchedule = { ...NIGHTLY, pattern: '*/5 * * * * *' };

  it('its `repeat` set lost alone (evicted, deleted by hand) while its next job waited, that job run at its tick: the look after finds it missing and does not run the tick again', async () => {
    await applySchedules(q.redis, q.queues, [EVERY_5S], { root: q.prefix, logger: silentLogger });
    const [next] = await pending(EVERY_5S);
    // the watch looks: the scheduler waits for `next`'s tick
    const waitedFor = new Map<string, number>();
    await restoreSchedules(q.redis, q.queues, [EVERY_5S], q.prefix, waitedFor);
    expect(waitedFor.get(EVERY_5S.id)).toBe(Number(next!.id!.split(':').pop()));
    // the queue's `repeat` set is lost; the next job, a key of its own, stays and runs at its tick
    await q.redis.del(q.queues.sync.toKey('repeat'));
    const ran: string[] = [];
    const worker = new Worker(QUEUE_NAMES.sync, async (job) => void ran.push(job.id!), {
      connection: testRedis(),
      prefix: q.prefix,
    });
    try {
      await until('the tick to run', async () => ran.length > 0, 10_000);
    } finally {
      await worker.close();
    }
    expect(ran).toEqual([next!.id]);

    // the next look (before the tick after it): missing, and the tick it waited for has run
    const { logger, warnings } = capture();
    const { written } = await restoreSchedules(q.redis, q.queues, [EVERY_5S], q.prefix, waitedFor);
    sayLostRunMadeUp(logger, written[0]!);
    expect(written).toMatchObject([{ state: 'missing' }]);
    expect(written[0]!.missedTick).toBeUndefined();
    expect(warnings()).toEqual([]);
    // written again, its next run the pattern's next tick: nothing due now
    const after = await pending(EVERY_5S);
    expect(after.map((j) => j.id)).toHaveLength(1);
    expect(await after[0]!.getState()).toBe('delayed');
  });
});
