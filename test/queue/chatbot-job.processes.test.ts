// `enqueue sync --chatbot SN` in a real worker process on real Redis (issue 26): one job runs every
// feed of the chatbot, its list paged once for all of them (the emulator counts list calls), one
// report per feed in the job's return value, one row per feed in the run history; and `enqueue sync`
// of every feed makes one job of the feeds that share a chatbot.
import { describe, expect, it } from 'vitest';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { requests, total } from '../sync/helpers/feed.js';
import { feedsync } from '../settings/run-cli.js';
import { useDeployment } from './use-deployment.js';

const d = useDeployment();

describe('a sync job for a chatbot', () => {
  it('runs its three feeds with one paging of its list, and reports each', async () => {
    d.emu = await startTestEmulator();
    const sn = 'SN-JOB';
    const feeds = [0, 1, 2].map((i) => ({ name: `f${i}`, chatbot: sn, rows: 30, from: 1 + i * 30 }));
    const file = await d.deploy([...feeds, { name: 'other', chatbot: 'SN-OTHER', rows: 2 }], { api: 'pageSize: 20' });
    await d.start(file);
    const first = await enqueueJob(d.redis, d.queues, 'sync', `chatbot:${sn}`, { chatbot: sn });
    expect((await waitForJob(d.redis, d.queues, 'sync', first.jobId)).state).toBe('completed');
    expect(await d.emu.listings(sn)).toHaveLength(90);
    // only the chatbot's own feeds ran
    expect(await d.emu.listings('SN-OTHER')).toHaveLength(0);

    const listed = async () => total(await requests(d.emu!, 'RealEstateList'));
    const before = await listed();
    const rerun = await enqueueJob(d.redis, d.queues, 'sync', `chatbot:${sn}`, { chatbot: sn });
    const done = await waitForJob(d.redis, d.queues, 'sync', rerun.jobId);
    if (done.state !== 'completed') throw new Error(`the rerun failed: ${done.failedReason}`);
    // 90 listings at 20 a page: five list calls, once for the three feeds
    expect((await listed()) - before).toBe(5);
    const report = done.returnvalue as {
      outcome: string;
      lanes?: Array<{ feed: string; outcome: string; counts: { unchanged: number } }>;
    };
    expect(report.outcome).toBe('ok');
    expect(report.lanes?.map((l) => [l.feed, l.outcome, l.counts.unchanged])).toEqual([
      ['f0', 'ok', 30],
      ['f1', 'ok', 30],
      ['f2', 'ok', 30],
    ]);
    // the run history keeps a row per feed, each its own feed's report
    for (const f of ['f0', 'f1', 'f2']) {
      const [row] = await listRuns(d.redis, d.prefix, { feed: f, limit: 5 });
      expect(row).toMatchObject({ jobId: rerun.jobId, feed: f, chatbot: sn, outcome: 'ok' });
      expect((row!.report as { feed: string; counts: { unchanged: number } }).counts.unchanged).toBe(30);
    }
  }, 60_000);

  it('`enqueue sync` of every feed: the feeds that share a chatbot are one job, the chatbot paged once; --wait prints each feed', async () => {
    d.emu = await startTestEmulator();
    const file = await d.deploy(
      [
        { name: 'e0', chatbot: 'SN-E', rows: 25, from: 1 },
        { name: 'e1', chatbot: 'SN-E', rows: 25, from: 31 },
        { name: 'solo', chatbot: 'SN-S', rows: 2, from: 901 },
      ],
      { api: 'pageSize: 20' },
    );
    await d.start(file);
    const enqueue = () => feedsync(['enqueue', 'sync', '--wait', '--timeout', '60', '--config', file]);
    const first = await enqueue();
    expect(first.code).toBe(0);
    // two jobs: the two feeds of SN-E together, and solo
    expect(first.stdout.trim().split('\n')).toHaveLength(2);
    expect(await d.emu.listings('SN-E')).toHaveLength(50);

    const listed = async () => total(await requests(d.emu!, 'RealEstateList'));
    const before = await listed();
    const again = await enqueue();
    expect(again.code).toBe(0);
    // 50 listings at 20 a page: three list calls (the third short) for the two feeds; one for solo
    expect((await listed()) - before).toBe(3 + 1);
    for (const f of ['e0 → chatbot SN-E', 'e1 → chatbot SN-E', 'solo → chatbot SN-S'])
      expect(again.stderr).toContain(`feed ${f}: ok`);
    for (const f of ['e0', 'e1'])
      expect((await listRuns(d.redis, d.prefix, { feed: f, limit: 5 })).map((r) => r.outcome)).toEqual(['ok', 'ok']);
  }, 90_000);
});
