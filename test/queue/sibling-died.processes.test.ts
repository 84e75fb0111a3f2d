// Issue 55, "a worker killed mid-tick → the tick ends within 2× its budget bound": three `feedsync
// worker` processes on this host, the one running a sync job SIGKILLed in the middle of its
// updates. A sibling notices at once that the process is gone (its job's holder record, the rule of
// src/locks/lock-holder.ts) and hands the job back to the queue; another worker reruns it, its
// chatbot lock freed the same way, and sends only the updates the dead run had not had acknowledged
// (at most api.concurrency more). The job lock is set to a minute here: BullMQ's own takeover
// (the lock's expiry, then a stalled check) would leave the job for at least three quarters of it,
// so a rerun started before that was handed back by its sibling. On the real Redis and emulator;
// the delay from the kill to the rerun's start is printed, not judged against a wall clock.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { csv, requests, row, total } from '../sync/helpers/feed.js';
import { until } from './helpers.js';
import { runningOn, startedOn, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-SIBLING';
const FEED = 200;
const CONCURRENCY = 4;
/** updates the killed worker has had answered (at least) when it is killed */
const KILL_AFTER = 60;
const LATENCY_MS = 40;
/** the job lock: a killed worker's job waits at least three quarters of it for BullMQ's stalled check */
const LOCK_MS = 60_000;
/** the least of the lock a killed worker leaves (it is renewed every quarter of it at most: workers.ts) */
const LOCK_LEFT_MS = (LOCK_MS * 3) / 4;

describe('a worker SIGKILLed mid-job beside others on its host', () => {
  it('a sibling hands its job back at once; another reruns it, sending only what was not acknowledged', async () => {
    const emu = (d.emu = await startTestEmulator({ chatbots: [SN] }));
    const updates = async () => total(await requests(emu, 'RealEstateUpdate'));
    const creates = async () => total(await requests(emu, 'RealEstateCreate'));
    const file = await d.deploy([{ name: 'homes', chatbot: SN, rows: FEED }], {
      api: `concurrency: ${CONCURRENCY}, ratePerSecond: 1000`,
      worker: { lockDurationMs: LOCK_MS, stalledIntervalMs: 1000, concurrency: 1 },
    });
    const workers = [await d.start(file), await d.start(file), await d.start(file)];
    const first = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes', { feed: 'homes' });
    expect((await waitForJob(d.redis, d.queues, 'sync', first.jobId)).state).toBe('completed');

    // every listing's price changes: FEED updates to make
    await writeFile(
      join(d.dir, 'homes.csv'),
      csv(Array.from({ length: FEED }, (_, i) => row(i + 1, { SalePrice: 900000 + i }))),
    );
    const createsBefore = await creates();
    const updatesBefore = await updates();
    emu.emulator.configure({ latencyMs: LATENCY_MS });
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes-2', { feed: 'homes' });
    const pid = await until('the job to run', async () => runningOn(await d.queues.sync.getJob(jobId)));
    const dead = workers.find((w) => w.proc.pid === pid)!;
    await until('KILL_AFTER updates answered', async () => (await updates()) - updatesBefore >= KILL_AFTER, 60_000);
    const killedAt = Date.now();
    await dead.kill('SIGKILL');
    emu.emulator.configure({ latencyMs: 0 });

    const siblings = workers.filter((w) => w !== dead);
    // (the wait ends before the lock could have expired: on BullMQ's takeover alone it times out)
    const rerun = await until(
      'a sibling to start the job again',
      async () => {
        for (const w of siblings) {
          const at = await startedOn(d.queues, jobId, w);
          if (at) return { w, at };
        }
        return undefined;
      },
      LOCK_LEFT_MS - 10_000,
    );
    process.stdout.write(
      `SIGKILL → rerun started on a sibling: ${((rerun.at - killedAt) / 1000).toFixed(2)} s (the job lock: ${LOCK_MS / 1000} s)\n`,
    );
    expect(rerun.at - killedAt).toBeLessThan(LOCK_LEFT_MS);

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    const job = (await d.queues.sync.getJob(jobId))!;
    // its chatbot lock (TTL the same minute) was freed by its holder record too, not waited out
    expect(job.finishedOn! - killedAt).toBeLessThan(LOCK_LEFT_MS);
    expect(runningOn(job)).toBe(rerun.w.proc.pid);
    // counted as BullMQ's stalled check counts it: worker.maxStalledCount still ends a job that kills its workers
    expect(job.stalledCounter).toBe(1);
    const { logs } = await d.queues.sync.getJobLogs(jobId);
    expect(logs).toEqual([
      expect.stringMatching(new RegExp(`attempt 1/\\d+ running on .+ pid ${pid}$`)),
      expect.stringMatching(
        new RegExp(
          `attempt 1/\\d+ running on .+ pid ${rerun.w.proc.pid} \\(taken over after its worker stopped: stalled 1×\\)$`,
        ),
      ),
    ]);
    // one sibling handed it back (the other found it claimed), and said why
    const said = siblings
      .flatMap((w) => w.logs().split('\n'))
      .filter((l) => l.includes('handed back to the queue at once'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`job ${jobId} of listing-sync`);
    expect(said[0]).toContain(`PID ${pid}`);
    expect(said[0]).toContain(`its process ${pid} is gone`);

    // the rerun sent only the updates not acknowledged: those the dead run had not sent, and of those
    // it had sent at most the ones in flight at the kill
    const report = job.returnvalue as { outcome: string; counts: { updated: number; created: number } };
    expect(report).toMatchObject({ outcome: 'ok', counts: { created: 0 } });
    expect(report.counts.updated).toBeLessThanOrEqual(FEED - KILL_AFTER + CONCURRENCY);
    expect((await updates()) - updatesBefore - FEED).toBeLessThanOrEqual(CONCURRENCY);
    expect(await creates()).toBe(createsBefore);
    const listings = await emu.listings(SN);
    expect(listings).toHaveLength(FEED);
    expect(new Set(listings.map((l) => l.SalePrice)).size).toBe(FEED);
    expect(Math.min(...listings.map((l) => Number(l.SalePrice)))).toBe(900000);
    const [run] = await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 1 });
    expect(run).toMatchObject({ jobId, outcome: 'ok', worker: { pid: rerun.w.proc.pid } });
  }, 180_000);
});
