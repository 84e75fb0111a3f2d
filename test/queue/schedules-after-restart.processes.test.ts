// A schedule outlives a Redis that loses it: `feedsync worker` processes on a redis-server without
// persistence, a feed due every second; the redis-server is restarted (SIGKILL, started again empty)
// or flushed (FLUSHALL). The schedulers are gone with everything else, and before the fix the feed
// never ran again until a worker restarted (the workers wrote their schedulers only at start; the
// idle-queue watchdog cannot see a schedule that makes no job). Asserted: ticks after the loss run
// (run history), one scheduler a feed, no tick run twice however many workers write them again,
// and the warning an operator can act on.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listRuns, type RunRecord } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { throwawayRedis, type ThrowawayRedis } from '../server/redis-server.js';
import { deploymentQueues, writeDeployment } from './deploy.js';
import { loseNextJob, uniquePrefix, until } from './helpers.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** the worker's warning when it finds schedulers missing (src/queue/schedule-watch.ts) */
const LOST = /Redis lost the job schedulers \(restart without persistence\?\); written again: (\d+)/g;

/** the worker's warning when it builds a scheduler's lost next job again (src/queue/schedule-watch.ts) */
const REBUILT = /job scheduler sync:austin had no next job/;

/** The tick a scheduled run was for: the millis in its job id, `repeat:<scheduler>:<millis>`. */
const tickOf = (r: RunRecord) => Number(/^repeat:.+:(\d+)$/.exec(r.jobId)?.[1]);

/** `workers` worker processes on their own redis-server without persistence, a feed due every second. */
async function scheduledDeployment(workers: number, worker: Record<string, number> = {}) {
  const redis: ThrowawayRedis = await throwawayRedis({ persist: false });
  cleanups.push(() => redis.stop());
  const emu = await startTestEmulator();
  cleanups.push(() => emu.close());
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-schedules-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = await writeDeployment([{ name: 'austin', chatbot: 'SN-S', rows: 1, schedule: '* * * * * *' }], {
    dir,
    prefix: uniquePrefix(),
    apiUrl: emu.url,
    secretKey: TEST_SECRET_KEY,
    sessionKey: TEST_SESSION_KEY,
    redis: `url: "${redis.url}"`,
    worker,
  });
  const { ops, queues, prefix, close } = await deploymentQueues(file);
  cleanups.push(close);
  const procs: WorkerProcess[] = [];
  for (let i = 0; i < workers; i++) {
    const w = await spawnWorker(file);
    cleanups.push(() => w.kill('SIGKILL'));
    procs.push(w);
  }
  const runs = async () => listRuns(ops, prefix, { feed: 'austin', limit: 500 });
  /** the runs of ticks after `since` (a run of an earlier tick may be written late: the worker keeps what Redis refused) */
  const runsAfter = async (since: number) => (await runs()).filter((r) => tickOf(r) > since);
  await until('a scheduled run before the loss', async () => (await runs()).length > 0);
  return { redis, ops, queues, procs, runsAfter };
}

type Deployment = Awaited<ReturnType<typeof scheduledDeployment>>;

/** Once `n` ticks after `since` have run: one scheduler, each tick run once, the warning said. */
async function ticksRunAgain(d: Deployment, since: number, n: number) {
  const after = await until(
    `${n} scheduled runs after the loss`,
    async () => {
      const r = await d.runsAfter(since);
      return r.length >= n && r;
    },
    30_000,
  );
  const ticks = after.map(tickOf);
  // (printed for docs/runbook.md, not asserted: the first tick run after the loss)
  console.log(
    `first scheduled run after the loss: the tick ${((Math.min(...ticks) - since) / 1000).toFixed(1)} s after it`,
  );
  expect(new Set(ticks).size, JSON.stringify(after.map((r) => r.jobId))).toBe(ticks.length);
  expect((await d.queues.sync.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual(['sync:austin']);
  const written = d.procs.flatMap((w) => [...w.logs().matchAll(LOST)].map((m) => Number(m[1])));
  expect(written.length, d.procs.map((w) => w.logs()).join('\n')).toBeGreaterThan(0);
  expect(written.every((n) => n === 1)).toBe(true);
  return { ticks, written };
}

describe('a schedule whose Redis loses it (no persistence)', () => {
  it('redis-server restarted empty: the feed runs on its schedule again', async () => {
    const d = await scheduledDeployment(1);
    await d.redis.stop();
    const since = Date.now();
    await d.redis.start();
    await ticksRunAgain(d, since, 3);
  }, 90_000);

  it('three workers write the lost schedulers again: one scheduler, no tick run twice', async () => {
    const d = await scheduledDeployment(3);
    await d.redis.stop();
    const since = Date.now();
    await d.redis.start();
    const { written } = await ticksRunAgain(d, since, 8);
    console.log(`3 workers after a restart without persistence: ${written.length} wrote the scheduler again`);
  }, 90_000);

  it('FLUSHALL (the connection stays up): written again at the next periodic check', async () => {
    const d = await scheduledDeployment(1, { scheduleCheckSeconds: 1 });
    await d.ops.flushall();
    const since = Date.now();
    await ticksRunAgain(d, since, 3);
  }, 90_000);

  it("its next job's key deleted, the scheduler kept: the feed runs on its schedule again", async () => {
    const d = await scheduledDeployment(1, { scheduleCheckSeconds: 1 });
    const lost = await loseNextJob(d.ops, d.queues.sync, 'sync:austin', 'hash');
    const since = Number(lost.split(':').pop()) - 1;
    // before the fix: no run in 15 s (15 ticks), the scheduler there with no next job
    const after = await until(
      '3 scheduled runs after the loss',
      async () => {
        const r = await d.runsAfter(since);
        return r.length >= 3 && r;
      },
      15_000,
    );
    const ticks = after.map(tickOf);
    console.log(
      `first scheduled run after the next job's loss: the tick ${Math.min(...ticks) - since - 1} ms after it`,
    );
    expect(new Set(ticks).size, JSON.stringify(after.map((r) => r.jobId))).toBe(ticks.length);
    const said = d.procs[0]!.logs()
      .split('\n')
      .filter((l) => REBUILT.test(l));
    expect(said, d.procs[0]!.logs()).toHaveLength(1);
  }, 60_000);
});
