// Operator controls from another process: `feedsync cancel` stops a sync running in a worker process
// (the job ends `cancelled`, the remote holds only whole listings, and the next run picks up exactly
// what was not written); `feedsync pause` keeps a schedule from starting anything until `resume`;
// `enqueue --wait` says when no worker consumes the queue and gives up after --timeout.
import { hostname, userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { row } from '../sync/helpers/feed.js';
import { useDeployment } from './use-deployment.js';
import { until } from './helpers.js';

const d = useDeployment();

const deploy = (feeds: Parameters<typeof d.deploy>[0], api = 'concurrency: 2, retries: 2') => d.deploy(feeds, { api });

// A sync that lasts 12 s at least (120 writes at 10 a second), whatever the machine's load: the
// `feedsync cancel` process (a node start) must reach it while it runs.
const SLOW_API = 'concurrency: 2, retries: 2, ratePerSecond: 10';

describe('operator controls', () => {
  it('cancel stops a sync running on a worker process: it ends cancelled, nothing half-written, a rerun completes it', async () => {
    d.emu = await startTestEmulator({ latencyMs: 80 });
    const file = await deploy([{ name: 'big', chatbot: 'SN-C', rows: 120 }], SLOW_API);
    await d.start(file);
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'big', { feed: 'big' });
    await until('the sync to be under way', async () => (await d.emu!.listings('SN-C')).length >= 5);

    const out = await feedsync(['cancel', '--feed', 'big', '--config', file, '--timeout', '30']);
    // by the account that asked, also where no USER is set (a container's `docker compose exec`)
    expect(out.stderr).toMatch(
      new RegExp(`^cancelled: listing-sync big cancelled by ${userInfo().username}@${hostname()}:`, 'm'),
    );
    expect(out.code).toBe(0);
    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done).toMatchObject({ state: 'completed', returnvalue: { outcome: 'cancelled', retryable: false } });
    const [recorded] = await listRuns(d.redis, d.prefix, { feed: 'big', limit: 1 });
    expect(recorded).toMatchObject({ jobId, outcome: 'cancelled' });
    // The run's changes say what stopped it, as its history does: the cancel, by whom (not "a signal").
    const shown = await feedsync(['runs', 'show', `${jobId}.1`, '--config', file]);
    expect(shown.stdout).toMatch(/^ {2}cancelled by \S+: calls in flight were finished, nothing new was sent/m);
    // ... and names its outcome with the history's word: the change log's record and the run history's agree
    expect(shown.stdout).toMatch(new RegExp(`^run ${jobId}\\.1 \\(job ${jobId}\\): big → SN-C, cancelled$`, 'm'));
    const listed = await feedsync(['runs', '--config', file]);
    expect(listed.stdout).toMatch(new RegExp(`\\bcancelled\\b.*\\b${jobId}\\b`));

    // Every listing on the remote is whole (as the feed has it), none twice, and not all were sent.
    const left = await d.emu.listings('SN-C');
    expect(left.length).toBeLessThan(120);
    expect(new Set(left.map((l) => l.MLSNumber)).size).toBe(left.length);
    for (const l of left) {
      const i = Number(l.MLSNumber!.slice(3));
      expect(l).toMatchObject({
        SalePrice: Number(row(i).SalePrice),
        BuildingArea: Number(row(i).BuildingArea),
        City: 'Austin',
      });
    }

    // The next run writes exactly what the cancelled one did not: its writes were recorded.
    const again = await enqueueJob(d.redis, d.queues, 'sync', 'big', { feed: 'big' });
    const second = await waitForJob(d.redis, d.queues, 'sync', again.jobId);
    expect(second).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'ok', counts: { created: 120 - left.length, updated: 0 } },
    });
    expect(await d.emu.listings('SN-C')).toHaveLength(120);
  }, 90_000);

  it('cancel --feed stops the job that runs the feed with others (a scheduler group): each feed of it ends cancelled', async () => {
    d.emu = await startTestEmulator({ latencyMs: 80 });
    const file = await deploy(
      [
        { name: 'g1', chatbot: 'SN-G', rows: 60 },
        { name: 'g2', chatbot: 'SN-G', rows: 60, from: 101 },
      ],
      SLOW_API,
    );
    await d.start(file);
    // the job a scheduler of the two feeds adds
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'group', { feeds: ['g1', 'g2'] });
    await until('the sync to be under way', async () => (await d.emu!.listings('SN-G')).length >= 5);

    const out = await feedsync(['cancel', '--feed', 'g2', '--config', file, '--timeout', '30']);
    expect(out.stderr).toMatch(/^cancelled: listing-sync feeds g1, g2 cancelled by /m);
    expect(out.code).toBe(0);
    expect(await waitForJob(d.redis, d.queues, 'sync', jobId)).toMatchObject({
      state: 'completed',
      returnvalue: { outcome: 'cancelled' },
    });
    for (const feed of ['g1', 'g2']) {
      const [recorded] = await listRuns(d.redis, d.prefix, { feed, limit: 1 });
      expect(recorded).toMatchObject({ jobId, feed, outcome: 'cancelled' });
      expect(recorded!.summary).toMatch(new RegExp(`^listing-sync ${feed} cancelled by `));
    }
    expect((await d.emu.listings('SN-G')).length).toBeLessThan(120);
  }, 90_000);

  it('pause keeps a schedule from starting runs (runs shows it), resume lets it run again', async () => {
    d.emu = await startTestEmulator();
    const file = await deploy([{ name: 'tick', chatbot: 'SN-T', rows: 3, schedule: '* * * * * *' }]);
    const paused = await feedsync(['pause', '--feed', 'tick', '--config', file]);
    expect(paused.code).toBe(0);
    expect(paused.stderr).toMatch(/paused tick/);
    // the command it names undoes it as it is (`resume` alone is a usage error: --feed or --all)
    expect(paused.stderr).toMatch(/start nothing until `(npx )?feedsync resume --feed tick`/);
    await d.start(file);

    // Scheduler ticks come and complete as skipped; nothing reaches the service.
    await until('three scheduler ticks', async () => (await d.queues.sync.getJobCounts('completed')).completed! >= 3);
    const ticks = await d.queues.sync.getCompleted();
    expect(ticks.every((j) => (j.returnvalue as { outcome: string }).outcome === 'paused')).toBe(true);
    expect((await d.emu.stats()).total).toBe(0);
    expect(await listRuns(d.redis, d.prefix, { feed: 'tick', limit: 5 })).toEqual([]);
    const runs = await feedsync(['runs', '--config', file]);
    expect(runs.stderr).toMatch(/paused: feed tick since .* \(npx feedsync resume --feed tick\)/);

    expect((await feedsync(['resume', '--feed', 'tick', '--config', file])).stderr).toMatch(
      /resumed tick[\s\S]*nothing is paused/,
    );
    await until('a run after resume', async () =>
      (await listRuns(d.redis, d.prefix, { feed: 'tick', limit: 5 })).find((r) => r.outcome === 'ok'),
    );
    expect(await d.emu.listings('SN-T')).toHaveLength(3);
  }, 60_000);

  it('pause --all skips every scheduled run', async () => {
    d.emu = await startTestEmulator();
    const file = await deploy([
      { name: 'a', chatbot: 'SN-A', rows: 1, schedule: '* * * * * *' },
      { name: 'b', chatbot: 'SN-B', rows: 1, schedule: '* * * * * *' },
    ]);
    expect((await feedsync(['pause', '--all', '--config', file])).code).toBe(0);
    await d.start(file);
    await until('ticks of both', async () => (await d.queues.sync.getJobCounts('completed')).completed! >= 4);
    expect((await d.emu.stats()).total).toBe(0);
  }, 60_000);

  it('enqueue --wait warns that no worker consumes the queue and stops waiting at --timeout', async () => {
    d.emu = await startTestEmulator();
    const file = await deploy([{ name: 'lonely', chatbot: 'SN-L', rows: 1 }]);
    const out = await feedsync(['enqueue', 'sync', '--feed', 'lonely', '--wait', '--timeout', '2', '--config', file]);
    expect(out.stderr).toMatch(
      /warning: no worker is consuming queue listing-sync on Redis redis:\/\/.* \(prefix fstest-/,
    );
    expect(out.stderr).toMatch(/gave up waiting after 2 s; job .* is waiting and goes on/);
    expect(out.code).toBe(1);
  }, 30_000);
});
