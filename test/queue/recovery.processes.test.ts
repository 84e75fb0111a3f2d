// Recovery in seconds with the default lock settings (issue 55 point 3), on `feedsync worker`
// processes and the real Redis: a worker SIGKILLed mid-job has its job handed back at once by a
// sibling on its host (src/queue/job-holders.ts; test/queue/sibling-died.processes.test.ts for the
// writes), or, from another host, resumed by another worker once its lock expires and a stalled
// check finds it (worker.lockDurationMs + worker.stalledIntervalMs at most); a worker SIGTERMed
// mid-job hands it back at once and another takes it straight away. Each prints the delay it
// measured (docs/runbook.md quotes them); the assertions are generous bounds, not the typical
// figure. Who ran what is read back the ways an operator reads it: the job's `processedBy` (Bull
// Board), its log lines, the run history's `worker`, `feedsync runs` and /status.
import '../setup/needs-redis.js';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Job } from 'bullmq';
import { parseConfig } from '../../src/config/load.js';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { parseWorkerName } from '../../src/queue/worker-identity.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { until } from './helpers.js';
import { startedOn as startedOnIn, useDeployment } from './use-deployment.js';
import type { WorkerProcess } from './worker-process.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const d = useDeployment();

/** The config's defaults, which these tests run with. */
const DEFAULTS = parseConfig('api: { baseUrl: embedded, secretKey: s, sessionKey: k }\n', 'defaults.yaml', {}).worker;
/** the config's lock settings: written as undefined, so the deployment leaves them to their defaults */
const DEFAULT_LOCKS = { lockDurationMs: undefined, stalledIntervalMs: undefined, maxStalledCount: undefined };

/** The pid of the worker a job is on now (BullMQ's processedBy, written by the worker's name). */
const runningOn = (job: Job | undefined) => parseWorkerName(job?.processedBy)?.pid;

/** When the job's log says it started running on this worker process (noteWorker's line). */
const startedOn = (jobId: string, w: WorkerProcess) => startedOnIn(d.queues, jobId, w);

async function slowFeed(rows: number) {
  d.emu = await startTestEmulator({ latencyMs: 50 });
  return d.deploy([{ name: 'slow', chatbot: 'SN-SLOW', rows }], {
    api: 'concurrency: 1, retries: 2',
    worker: { ...DEFAULT_LOCKS, shutdownTimeoutMs: 10_000 },
  });
}

/** A slow sync under way on worker A, with worker B started beside it, idle. */
async function underWayOnA(): Promise<{ a: WorkerProcess; b: WorkerProcess; jobId: string; file: string }> {
  const file = await slowFeed(300);
  const a = await d.start(file);
  const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'slow', { feed: 'slow' });
  await until('the job to run on A', async () => runningOn(await d.queues.sync.getJob(jobId)) === a.proc.pid);
  const b = await d.start(file);
  await until('the sync to be under way', async () => (await d.emu!.listings('SN-SLOW')).length >= 5, 60_000);
  return { a, b, jobId, file };
}

/**
 * Who runs what, while the job runs on `a`, as an operator finds it (issue 55 point 4): `feedsync
 * runs` (JSON and table), the /status page and the queue UI's API (Bull Board's processedBy), each
 * asked of the other worker `via`.
 */
async function expectShownRunningOn(a: WorkerProcess, o: { via: WorkerProcess; jobId: string; file: string }) {
  const pid = a.proc.pid!;
  const json = JSON.parse((await feedsync(['runs', '--config', o.file, '--json'])).stdout) as {
    running: Array<{ jobId: string; feeds: string[]; worker?: { host: string; pid: number } }>;
  };
  expect(json.running).toEqual([
    expect.objectContaining({ jobId: o.jobId, feeds: ['slow'], worker: { host: hostname(), pid } }),
  ]);
  const text = await feedsync(['runs', '--config', o.file, '--feed', 'slow']);
  expect(text.stdout).toMatch(
    new RegExp(`^running now:\\n.*worker\\n.*listing-sync\\s+slow\\s+1/\\d+\\s+${o.jobId}\\s+.+ pid ${pid}\\n`),
  );
  const status = await (await freshFetch(`http://127.0.0.1:${o.via.port}/status`)).text();
  // (its progress, when it has sent one, between the state and the worker)
  expect(status).toMatch(
    new RegExp(
      `<span class="state running">running</span>( <span class="progress">[^<]*</span>)? <small class="worker">on ${hostname()} pid ${pid}</small>`,
    ),
  );
  const ui = (await (
    await freshFetch(`http://127.0.0.1:${o.via.port}/ui/api/queues?activeQueue=listing-sync&status=active&page=1`)
  ).json()) as { queues: Array<{ name: string; jobs: Array<{ id: string; processedBy?: string }> }> };
  const jobs = ui.queues.find((q) => q.name === 'listing-sync')?.jobs ?? [];
  expect(jobs.find((j) => j.id === o.jobId)?.processedBy).toBe(`${hostname()}:${pid}`);
}

function countsByMls(listings: Array<{ MLSNumber?: string }>): number[] {
  const m = new Map<string, number>();
  for (const l of listings) m.set(l.MLSNumber ?? '', (m.get(l.MLSNumber ?? '') ?? 0) + 1);
  return [...m.values()];
}

describe('recovery in seconds (default lock settings)', () => {
  it('a SIGKILLed worker: a sibling on its host hands its job back at once, and another resumes it', async () => {
    expect(DEFAULTS).toMatchObject({ lockDurationMs: 8000, stalledIntervalMs: 3000, maxStalledCount: 2 });
    const { a, b, jobId } = await underWayOnA();
    const killedAt = Date.now();
    await a.kill('SIGKILL');

    const resumedAt = await until('B to resume the job', () => startedOn(jobId, b), 60_000);
    const delayMs = resumedAt - killedAt;
    const bound = DEFAULTS.lockDurationMs + DEFAULTS.stalledIntervalMs;
    process.stdout.write(
      `SIGKILL → resumed on a sibling on its host: ${(delayMs / 1000).toFixed(2)} s (BullMQ's own takeover: up to ${bound / 1000} s)\n`,
    );
    // generous (a loaded machine): the sweep is every second; the lock's expiry plus one stalled check is the bound either way
    expect(delayMs).toBeLessThan(bound + 10_000);
    expect(b.logs()).toContain(`job ${jobId} of listing-sync handed back to the queue at once`);

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    const job = await d.queues.sync.getJob(jobId);
    expect(job?.stalledCounter).toBe(1);
    expect(runningOn(job)).toBe(b.proc.pid);
    expect(countsByMls(await d.emu!.listings('SN-SLOW')).every((n) => n === 1)).toBe(true);
    const [run] = await listRuns(d.redis, d.prefix, { feed: 'slow', limit: 5 });
    expect(run).toMatchObject({ jobId, outcome: 'ok', worker: { pid: b.proc.pid } });
    const { logs } = await d.queues.sync.getJobLogs(jobId);
    expect(logs).toEqual([
      expect.stringMatching(new RegExp(`attempt 1/\\d+ running on .+ pid ${a.proc.pid}$`)),
      expect.stringMatching(
        new RegExp(
          `attempt 1/\\d+ running on .+ pid ${b.proc.pid} \\(taken over after its worker stopped: stalled 1×\\)$`,
        ),
      ),
    ]);
  }, 180_000);

  it('a worker SIGKILLed on another host: its job lock and chatbot lock expire, and the job taken over writes within lockDuration + stalledInterval', async () => {
    // The same host hands a dead worker's job back and frees its chatbot locks at once by their
    // holder records (job-holders.ts, lock-holder.ts); a worker elsewhere (another container or pod)
    // cannot tell the dead worker from one cut off from Redis that still writes, and waits for the
    // locks' TTL. The records are made another host's here (the job's before the kill, as its sibling
    // sweeps every second), so only the TTLs free the job and the lock.
    const { a, b, jobId } = await underWayOnA();
    const holders = `${d.prefix}:job-holders`;
    const records = Object.entries(await d.redis.hgetall(holders));
    expect(records).toHaveLength(1);
    const [token, jobRecord] = records[0]!;
    const anotherHost = JSON.stringify({ ...JSON.parse(jobRecord), host: 'another-host' });
    expect(await d.redis.hset(holders, token, anotherHost)).toBe(0);
    const [holderKey, ...more] = await d.redis.keys(`${d.prefix}:lock:chatbot:SN-SLOW:*:holder`);
    expect(more).toEqual([]);
    const killedAt = Date.now();
    await a.kill('SIGKILL');
    const record = JSON.parse((await d.redis.get(holderKey!))!) as { host: string };
    expect(await d.redis.set(holderKey!, JSON.stringify({ ...record, host: 'another-host' }), 'KEEPTTL', 'XX')).toBe(
      'OK',
    );
    // what the dead worker wrote, its calls in flight included
    await new Promise((r) => setTimeout(r, 1000));
    const before = (await d.emu!.listings('SN-SLOW')).length;

    const resumedAt = await until('B to resume the job', () => startedOn(jobId, b), 90_000);
    const wroteAt = await until(
      'B to write',
      async () => ((await d.emu!.listings('SN-SLOW')).length > before ? Date.now() : undefined),
      90_000,
    );
    const bound = DEFAULTS.lockDurationMs + DEFAULTS.stalledIntervalMs;
    process.stdout.write(
      `SIGKILL on another host → resumed ${((resumedAt - killedAt) / 1000).toFixed(1)} s, first write ${((wroteAt - killedAt) / 1000).toFixed(1)} s (bound ${bound / 1000} s)\n`,
    );
    // generous: the locks' expiry, one stalled check, a backstop delay, and slack for a loaded machine
    expect(wroteAt - killedAt).toBeLessThan(bound + 10_000);

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    expect(runningOn(await d.queues.sync.getJob(jobId))).toBe(b.proc.pid);
    expect(b.logs()).not.toContain('handed back to the queue at once');
    const listings = await d.emu!.listings('SN-SLOW');
    expect(listings).toHaveLength(300);
    expect(countsByMls(listings).every((n) => n === 1)).toBe(true);
  }, 180_000);

  it("a running job's lock is renewed before a quarter of it has passed (the 6-11 s the runbook quotes)", async () => {
    const { jobId } = await underWayOnA();
    const lockKey = `${d.queues.sync.toKey(jobId)}:lock`;
    // Sampled over several renewals: the least a killed worker would leave of its job's lock.
    let least = Infinity;
    for (const end = Date.now() + 12_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      const ttl = await d.redis.pttl(lockKey);
      if (ttl > 0) least = Math.min(least, ttl);
    }
    process.stdout.write(`least of the job's lock left between renewals: ${least} ms of ${DEFAULTS.lockDurationMs}\n`);
    // BullMQ's own renewal (every half of the lock, a tick of its timer often skipped) left 4 s of 8
    expect(least).toBeGreaterThan((DEFAULTS.lockDurationMs * 3) / 4 - 500);
    expect(least).toBeLessThanOrEqual(DEFAULTS.lockDurationMs);
  }, 180_000);

  it('a SIGTERMed worker hands its job back at once: another takes it straight away', async () => {
    const { a, b, jobId, file } = await underWayOnA();
    await expectShownRunningOn(a, { via: b, jobId, file });
    const termAt = Date.now();
    await a.kill('SIGTERM');
    const exitedMs = Date.now() - termAt;

    const resumedAt = await until('B to take the job', () => startedOn(jobId, b), 60_000);
    const delayMs = resumedAt - termAt;
    // (A's line saying its run stopped and was recorded handed back: its pino time, this host's clock)
    const backLine = a
      .logs()
      .split('\n')
      .find((l) => l.includes('handed back to the queue: its worker'));
    const backMs = Number(/"time":(\d+)/.exec(backLine ?? '')?.[1]) - termAt;
    process.stdout.write(
      `SIGTERM → run handed back: ${(backMs / 1000).toFixed(2)} s; → taken by another worker: ${(delayMs / 1000).toFixed(2)} s (A exited in ${(exitedMs / 1000).toFixed(2)} s)\n`,
    );
    // nowhere near a lock's expiry: handed back, not found stalled
    expect(delayMs).toBeLessThan(DEFAULTS.lockDurationMs);
    expect(a.logs()).toMatch(/handed back to the queue: its worker \(.+\) is shutting down/);

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    const job = await d.queues.sync.getJob(jobId);
    expect(job?.stalledCounter ?? 0).toBe(0);
    expect(job?.attemptsMade).toBe(1); // the hand-back spent no attempt
    expect(countsByMls(await d.emu!.listings('SN-SLOW')).every((n) => n === 1)).toBe(true);
    // the run history: A's run handed back, then B's, each naming its worker
    const runs = await listRuns(d.redis, d.prefix, { feed: 'slow', limit: 5 });
    expect(runs.map((r) => [r.outcome, r.worker?.pid])).toEqual([
      ['ok', b.proc.pid],
      ['handed-back', a.proc.pid],
    ]);
  }, 180_000);
});

describe('a job that kills its worker', () => {
  it('a scheduled job found stalled more than worker.maxStalledCount times fails, recorded as failed (not run again forever)', async () => {
    d.emu = await startTestEmulator({ latencyMs: 50 });
    // A cron not due during the test, its scheduler's one job promoted: one scheduled run. (On a cron
    // of every second a run a second was taken and waited for the chatbot's lock; once the killed
    // worker's lapsed, one of them took it, and the killed run waited behind it and the dozens piled
    // up after it: past a minute on a loaded machine before it ran on the second worker.)
    const file = await d.deploy([{ name: 'slow', chatbot: 'SN-SLOW', rows: 300, schedule: '0 0 1 1 *' }], {
      api: 'concurrency: 1, retries: 2',
      worker: { maxStalledCount: 1 },
    });
    let w = await d.start(file);
    const job = await until('the scheduler’s job', async () =>
      (await d.queues.sync.getDelayed()).find((j) => j.repeatJobKey),
    );
    await job.promote();
    const jobId = job.id!;
    // Its run killed twice (its worker SIGKILLed mid-run: out of memory, say), each time once it
    // runs on the worker (its log line), not when it is only taken.
    for (let k = 0; k < 2; k++) {
      if (k > 0) w = await d.start(file);
      await until('the scheduled job to run on the worker', () => startedOn(jobId, w), 60_000);
      await w.kill('SIGKILL');
    }
    const last = await d.start(file);
    const failed = await until(
      'the job to fail',
      async () => (await d.queues.sync.getJob(jobId))?.failedReason,
      60_000,
    );
    expect(failed).toMatch(/its worker stopped while running it 2 times/);
    const [run] = await listRuns(d.redis, d.prefix, { feed: 'slow', limit: 1 });
    expect(run).toMatchObject({ jobId, outcome: 'failed', worker: { pid: last.proc.pid } });
    expect(run!.summary).toMatch(/worker\.maxStalledCount/);
    expect(jobId).toMatch(/^repeat:/);
  }, 240_000);
});
