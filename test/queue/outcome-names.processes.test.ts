// One vocabulary, over a worker process and the CLI: a guard hold and a rejected feed are what the
// run found, not failed jobs. Each completes its BullMQ job with its outcome as the return value
// (the queue UI shows it there; the failed list stays empty), `enqueue --wait` prints the report and
// exits with the outcome's status (3, 6) without a word of "failed", and names the run id that
// `runs show` takes; /metrics counts runs by that outcome and /status shows it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, rows } from '../sync/helpers/feed.js';
import { useDeployment } from './use-deployment.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const d = useDeployment();

describe('outcome names through the queue', () => {
  it('a guard hold and a rejected feed complete their jobs named by their outcome, in enqueue, the queue, /metrics and /status', async () => {
    d.emu = await startTestEmulator();
    const file = await d.deploy([{ name: 'homes', chatbot: 'SN-V', rows: 10 }]);
    const w = await d.start(file);
    const enqueue = () =>
      feedsync(['enqueue', 'sync', '--feed', 'homes', '--wait', '--timeout', '60', '--config', file]);

    const first = await enqueue();
    expect(first.code).toBe(0);
    const firstJob = first.stdout.trim();
    expect(first.stderr).toContain(`  changes: npx feedsync runs show ${firstJob}.1 --config ${file}\n`);

    // six rows of ten: 4 deletes (40%) are over deletes.maxFraction (25%): the guard holds them
    await writeFile(join(d.dir, 'homes.csv'), csv(rows(6)));
    const guard = await enqueue();
    expect(guard.code).toBe(3);
    const guardJob = guard.stdout.trim();
    expect(guard.stderr).toMatch(/homes → chatbot SN-V: guard/);
    expect(guard.stderr).not.toMatch(/failed:/);
    expect(guard.stderr).toContain(`  changes: npx feedsync runs show ${guardJob}.1 --config ${file}\n`);
    const shown = await feedsync(['runs', 'show', `${guardJob}.1`, '--config', file]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`run ${guardJob}.1 (job ${guardJob}): homes → SN-V, guard`);
    expect(await d.emu.listings('SN-V')).toHaveLength(10);

    // every row rejected: the run is `rejected` (exit 6), nothing deleted
    await writeFile(join(d.dir, 'homes.csv'), csv(rows(10).map((r) => ({ ...r, Bedrooms: 'lots' }))));
    const rejected = await enqueue();
    expect(rejected.code).toBe(6);
    expect(rejected.stderr).toMatch(/homes → chatbot SN-V: rejected/);
    expect(rejected.stderr).not.toMatch(/failed:/);
    expect(await d.emu.listings('SN-V')).toHaveLength(10);

    // the queue: completed, each with its outcome as the return value; none failed
    for (const [jobId, outcome] of [
      [guardJob, 'guard'],
      [rejected.stdout.trim(), 'rejected'],
    ] as const) {
      const job = await d.queues.sync.getJob(jobId);
      expect(await job!.getState()).toBe('completed');
      expect(job!.returnvalue).toMatchObject({ outcome, feed: 'homes' });
    }
    expect(await d.queues.sync.getJobCounts('failed', 'completed')).toEqual({ failed: 0, completed: 3 });

    const metrics = await (await freshFetch(`http://127.0.0.1:${w.port}/metrics`)).text();
    for (const outcome of ['ok', 'guard', 'rejected'])
      expect(metrics).toContain(`feedsync_runs_total{job="listing-sync",outcome="${outcome}"} 1`);
    expect(metrics).toContain('feedsync_queue_jobs{queue="listing-sync",state="failed"} 0');
    const status = await (await freshFetch(`http://127.0.0.1:${w.port}/status`)).text();
    expect(status).toContain('rejected');
    expect(status).toContain('guard');
  }, 120_000);
});
