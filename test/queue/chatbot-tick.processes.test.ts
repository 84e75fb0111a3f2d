// A worker tick that finds several feeds of one chatbot due (issue 26): three feeds of one chatbot
// on the same cron, in a real worker process on real Redis. The scheduler's due job is promoted (the
// tick, now rather than at its cron time); the chatbot's list is paged once for the three feeds (the
// emulator counts list calls), each feed keeps its own listings, run history, metrics, status
// page row and pause.
import { describe, expect, it } from 'vitest';
import { listRuns, pauseFeeds, type RunRecord } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { requests, rows, total } from '../sync/helpers/feed.js';
import { until } from './helpers.js';
import { useDeployment } from './use-deployment.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const d = useDeployment();

/** a cron that is not due during the test: each tick is the scheduler's next job, promoted */
const CRON = '0 0 1 1 *';
const SN = 'SN-TICK';

describe('a worker tick that finds three feeds of one chatbot due', () => {
  it('pages the chatbot once for the three, and keeps history, metrics, status and pause per feed', async () => {
    d.emu = await startTestEmulator();
    const feeds = [0, 1, 2].map((i) => ({ name: `f${i}`, chatbot: SN, rows: 30, from: 1 + i * 30, schedule: CRON }));
    const file = await d.deploy(
      [...feeds, { name: 'other', chatbot: 'SN-OTHER', rows: 2, from: 901, schedule: CRON }],
      { api: 'pageSize: 20' },
    );
    const worker = await d.start(file);
    const runsOf = async (feed: string) => listRuns(d.redis, d.prefix, { feed, limit: 50 });
    const listed = async () => total(await requests(d.emu!, 'RealEstateList'));

    /** Promote every scheduled sync job now (one tick), and wait until each feed in `ran` has `n` runs. */
    const tick = async (ran: string[], n: number) => {
      const due = await until('the schedulers’ next jobs', async () => {
        const delayed = (await d.queues.sync.getDelayed()).filter((j) => j.repeatJobKey);
        return delayed.length >= 2 && delayed;
      });
      for (const job of due) await job.promote();
      for (const feed of ran) await until(`run ${n} of ${feed}`, async () => (await runsOf(feed)).length >= n, 60_000);
    };

    await tick(['f0', 'f1', 'f2', 'other'], 1);
    // each feed created its own listings, and its history row says so
    const mls = (await d.emu.listings(SN)).map((l) => Number(l.MLSNumber)).sort((a, b) => a - b);
    expect(mls).toEqual(rows(90).map((r) => Number(r.MLSNumber)));
    expect(await d.emu.listings('SN-OTHER')).toHaveLength(2);
    for (const f of ['f0', 'f1', 'f2']) {
      const [run] = await runsOf(f);
      expect(run).toMatchObject({ feed: f, chatbot: SN, outcome: 'ok' });
      expect((run!.report as { counts: { created: number } }).counts.created).toBe(30);
    }

    // a no-change tick: 90 listings at 20 a page are five list calls, once for the three feeds; the other chatbot's one page
    const before = await listed();
    await tick(['f0', 'f1', 'f2', 'other'], 2);
    const tickCalls = (await listed()) - before;
    expect(tickCalls).toBe(5 + 1);
    for (const f of ['f0', 'f1', 'f2']) {
      const [run] = await runsOf(f);
      expect(run).toMatchObject({ feed: f, chatbot: SN, outcome: 'ok' });
      expect((run!.report as { counts: { unchanged: number } }).counts.unchanged).toBe(30);
    }

    // per-feed metrics: each feed's created listings under its own label
    const metrics = await (await freshFetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
    for (const f of ['f0', 'f1', 'f2'])
      expect(metrics).toContain(`feedsync_listings_total{feed="${f}",op="created"} 30`);

    // the status page: each feed's next run is its group's scheduler's
    const status = await (await freshFetch(`http://127.0.0.1:${worker.port}/status`)).text();
    const schedulers = new Map((await d.queues.sync.getJobSchedulers()).map((s) => [s.key, s.next]));
    expect([...schedulers.keys()].sort()).toEqual(['sync:f0+f1+f2', 'sync:other']);
    const next = (id: string) => new Date(schedulers.get(id)!).toISOString().replace('T', ' ').slice(0, 19);
    for (const [f, id] of [...['f0', 'f1', 'f2'].map((f) => [f, 'sync:f0+f1+f2']), ['other', 'sync:other']])
      expect(status.split(`<tr id="feed-${f}"`)[1]?.split('</tr>')[0]).toContain(`<td>${next(id!)}</td>`);

    // a paused feed is skipped within its group's tick; the others run, the chatbot paged once
    await pauseFeeds(d.redis, d.prefix, ['f1']);
    const beforePaused = await listed();
    await tick(['f0', 'f2', 'other'], 3);
    expect((await listed()) - beforePaused).toBe(5 + 1);
    const f1: RunRecord[] = await runsOf('f1');
    expect(f1).toHaveLength(2);
    expect(await d.emu.listings(SN)).toHaveLength(90);
  }, 120_000);
});
