// A worker process frozen mid-job (SIGSTOP: a debugger, a cgroup freeze, a host under swap) is alive:
// its siblings' sweep (src/queue/job-holders.ts) must not take its job for a dead one's, or the job
// would run twice. Two `feedsync worker` processes on this host, the job lock a minute (so only the
// sweep could take the job within the test); the one running a sync stopped for several sweeps, then
// continued: the job completes on it, never handed back nor counted stalled, each listing written once.
import '../setup/needs-redis.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { requests, total } from '../sync/helpers/feed.js';
import { until } from './helpers.js';
import { runningOn, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-FROZEN';
const FEED = 200;

describe('a worker frozen mid-job beside a sibling on its host', () => {
  it('keeps its job: the sibling sweeps past it, the job completes on it once, each listing created once', async () => {
    const emu = (d.emu = await startTestEmulator({ chatbots: [SN], latencyMs: 20 }));
    const file = await d.deploy([{ name: 'homes', chatbot: SN, rows: FEED }], {
      api: 'concurrency: 2, ratePerSecond: 1000',
      worker: { lockDurationMs: 60_000, stalledIntervalMs: 1000, concurrency: 1 },
    });
    const workers = [await d.start(file), await d.start(file)];
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes', { feed: 'homes' });
    const pid = await until('the job to run', async () => runningOn(await d.queues.sync.getJob(jobId)));
    const frozen = workers.find((w) => w.proc.pid === pid)!;
    const sibling = workers.find((w) => w !== frozen)!;
    await until('the sync to write', async () => (await emu.listings(SN)).length >= 10, 60_000);

    frozen.proc.kill('SIGSTOP');
    try {
      expect(await d.queues.sync.getJobState(jobId)).toBe('active'); // (stopped mid-job)
      await sleep(4000); // several of the sibling's sweeps (one a second)
    } finally {
      frozen.proc.kill('SIGCONT');
    }

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    const job = (await d.queues.sync.getJob(jobId))!;
    expect(runningOn(job)).toBe(pid);
    expect(job.stalledCounter ?? 0).toBe(0);
    expect(sibling.logs()).not.toContain('handed back to the queue at once');
    const runs = (await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 10 })).filter((r) => r.jobId === jobId);
    expect(runs.map((r) => r.outcome)).toEqual(['ok']);
    expect(total(await requests(emu, 'RealEstateCreate'))).toBe(FEED);
    expect(await emu.listings(SN)).toHaveLength(FEED);
  }, 180_000);
});
