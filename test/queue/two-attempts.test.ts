// A job BullMQ hands to a second attempt while its first still runs: the first attempt's job lock
// expired without its worker dying (its Redis node restarted for longer than the lock, its event
// loop stalled on a loaded machine), the stalled check put the job back and a worker took it again.
// Its worker hears of the lost lock only at its next renewal, and not at all when it took the job
// again itself (BullMQ tracks a worker's jobs by id: the new attempt replaces the first, whose
// renewals and cancel then go to the new one) or when the renewal errs instead of failing. The
// chatbot lock is what keeps the two attempts apart: the second waits behind the first, and no
// listing is created twice. (CI: test/redis/cluster.test.ts's node restart, 414 listings stored
// for 300 records.) The real sync job, processor and BullMQ on the real Redis; only the fetching
// is done by hand, so that the second attempt starts while the first writes.
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { DelayedError, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JOBS } from '../../jobs/index.js';
import { silentLogger } from '../../src/log.js';
import { closeRedis, createProcessor, createRedis, enqueueJob, type RedisClient } from '../../src/queue/index.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { deploy, FEED, type Deployment } from '../redis/deployment.js';
import { dropPrefix, REDIS_URL, testRedis, until } from './helpers.js';

const ROWS = 300;

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu?.close();
});

it('a job taken again while its first attempt still writes: the second attempt waits behind the first, no listing is created twice', async () => {
  const prefix = `fstest-${randomUUID().slice(0, 8)}`;
  const d: Deployment = await deploy(emu, [`url: "${REDIS_URL}"`, `prefix: ${prefix}`], { rows: ROWS });
  let runtime: Runtime | undefined;
  let fetcher: Worker | undefined;
  let taker: Worker | undefined;
  let fetching: RedisClient | undefined;
  emu.emulator.configure({ latencyMs: 20 });
  try {
    const redis = d.ops;
    runtime = await createRuntime(d.loaded, { logger: silentLogger, redis });
    const processor = createProcessor(JOBS.sync, {
      config: d.loaded,
      runtime,
      redis,
      prefix: d.settings.prefix,
      logger: silentLogger,
      historySize: 50,
      // the worker's (src/cli/worker.ts)
      lockTtlMs: 30_000,
      busyDelayMs: 250,
    });
    // BullMQ's own fetching and stalled check, by hand: a job lock of 0.5 s that nothing renews
    fetching = createRedis(d.settings, { name: 'feedsync-test-fetch' });
    fetching.on('error', () => {});
    fetcher = new Worker(d.queues.sync.name, null, {
      connection: fetching,
      prefix: d.queues.sync.opts.prefix!,
      autorun: false,
      lockDuration: 500,
      stalledInterval: 200,
      maxStalledCount: 10,
    });
    // The later attempts take the job with a lock of a minute, as a worker that renews it holds it: with
    // the 0.5 s one, a loaded machine's second attempt was found stalled before it could delay itself
    // behind the first ("Missing lock for job … moveToDelayed"), and the test saw that, not the wait.
    const later = (taker = new Worker(d.queues.sync.name, null, {
      connection: fetching,
      prefix: d.queues.sync.opts.prefix!,
      autorun: false,
      lockDuration: 60_000,
    }));
    const take = (token: string, by: Worker = later) =>
      until(`the job taken (${token})`, async () => (await by.getNextJob(token, { block: false })) as Job);

    const { jobId } = await enqueueJob(redis, d.queues, 'sync', FEED, { feed: FEED });
    const first = await take('attempt-1', fetcher);
    expect(first.id).toBe(jobId);
    const firstRun = processor(first, 'attempt-1', new AbortController().signal);
    await until('the first attempt to write', async () => (await emu.listings(d.chatbot)).length > 20);

    // its job lock expires unrenewed; the stalled check puts the job back, and it is taken again
    void fetcher.startStalledCheckTimer();
    const second = await take('attempt-2');
    expect(second.id).toBe(jobId);
    const secondRun = await processor(second, 'attempt-2', new AbortController().signal).then(
      (report: unknown) => ({ report }),
      (error: unknown) => ({ error }),
    );
    await firstRun;

    const stored = await emu.listings(d.chatbot);
    expect(new Set(stored.map((l) => l.MLSNumber)).size).toBe(ROWS);
    expect(stored).toHaveLength(ROWS);
    // it did not run beside the first: it waited behind it, as behind any run of its chatbot, and
    // the first one's release woke it: run again, it finds nothing left to do
    expect(secondRun).toEqual({ error: expect.any(DelayedError) });
    const third = await take('attempt-3');
    expect(third.id).toBe(jobId);
    expect(await processor(third, 'attempt-3', new AbortController().signal)).toMatchObject({
      outcome: 'ok',
      counts: { created: 0, deleted: 0 },
    });
    expect(await emu.listings(d.chatbot)).toHaveLength(ROWS);
  } finally {
    emu.emulator.configure({ latencyMs: 0 });
    await fetcher?.close();
    await taker?.close();
    if (fetching) await closeRedis(fetching);
    await runtime?.close();
    await d.close();
    const redis = testRedis();
    await dropPrefix(redis, prefix);
    await redis.quit();
  }
}, 60_000);
