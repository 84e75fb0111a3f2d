// feedsync on a real Redis Cluster (three masters started by the test): the worker runs the listing
// sync, the settings push and the smoke job; what the commands read (run history, the change log,
// pauses, cancels, /status) reads back; every key of the deployment sits in one slot; and a sync
// goes on through a restart of the node that holds that slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisBackend } from '../../src/budget/backend.js';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { ALL, listRuns, pausedFeeds, pauseFeeds, requestCancel, resumeFeeds } from '../../src/queue/index.js';
import { hashTagOf } from '../../src/redis/keys.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startCluster, type TestCluster } from '../helpers/redis-topology.js';
import { until } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';
import { deploy, FEED, type Deployment } from './deployment.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let cluster: TestCluster;
let emu: TestEmulator;
beforeAll(async () => {
  [cluster, emu] = await Promise.all([startCluster(), startTestEmulator()]);
}, 60_000);
afterAll(async () => {
  await emu?.close();
  await cluster?.stop();
});

const clusterRedis = (prefix: string) => ['cluster:', ...cluster.urls.map((u) => `  - ${u}`), `prefix: ${prefix}`];

/** Every key of every master, by node port. */
async function keysByNode(d: Deployment): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (!('nodes' in d.ops)) throw new Error('not a cluster connection');
  for (const node of d.ops.nodes('master')) {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    out.set(Number(node.options.port), keys);
  }
  return out;
}

describe('Redis Cluster', () => {
  it('a worker on redis.cluster runs sync, settings and smoke; history, change log, pause and /status read back; every key in one slot', async () => {
    const prefix = `fsc-${Date.now().toString(36)}`;
    const d = await deploy(emu, clusterRedis(prefix), { rows: 6 });
    try {
      expect(d.settings.prefix).toBe(`{${prefix}}`);
      const w = await d.startWorker();

      const sync = await d.run('sync', { feed: FEED }, FEED);
      expect(sync).toMatchObject({ state: 'completed', returnvalue: { outcome: 'ok', counts: { created: 6 } } });
      expect(await emu.listings(d.chatbot)).toHaveLength(6);
      expect(await d.run('settings', { chatbot: d.chatbot }, d.chatbot)).toMatchObject({ state: 'completed' });
      expect(await d.run('smoke', { chatbot: d.chatbot }, d.chatbot)).toMatchObject({ state: 'completed' });

      // one slot: every key of the deployment (queues, history, change log, state, budgets, alerts)
      // is on the node that serves {prefix}, and there are keys of each kind. The jobs' API budget
      // logs expire a second after their last call, so one take of a minute's window is made here
      // (the same script the jobs' calls ran: a pause, the leases and a log, at once).
      expect(
        await redisBackend(d.ops, d.settings.prefix).take('api:test', {
          id: 'c1',
          lease: { limit: 2, ttlMs: 60_000 },
          sliding: [{ window: 'perMinute', points: 10, durationSec: 60 }],
          heldMs: 60_000,
        }),
      ).toEqual({ ok: true });
      const owner = await cluster.nodeOf(d.settings.prefix);
      const byNode = await keysByNode(d);
      const ours = [...byNode].flatMap(([port, keys]) =>
        keys.filter((k) => k.includes(prefix)).map((k) => ({ port, k })),
      );
      expect(ours.filter((x) => x.port !== owner.port)).toEqual([]);
      expect(new Set(ours.map((x) => hashTagOf(x.k)))).toEqual(new Set([prefix]));
      for (const kind of [
        ':listing-sync:',
        ':runs:all',
        ':changes:feed:',
        ':state:fp:',
        ':state:alerts',
        ':budget:',
        ':settings-push:',
        ':message-smoke:',
      ]) {
        expect(
          ours.some((x) => x.k.includes(kind)),
          `a key with ${kind}`,
        ).toBe(true);
      }
      // `feedsync runs`: the run history of the feed and of the chatbot
      const runs = await listRuns(d.ops, d.settings.prefix, { feed: FEED, limit: 10 });
      expect(runs.map((r) => [r.jobId, r.outcome])).toEqual([[sync.jobId, 'ok']]);
      expect((await listRuns(d.ops, d.settings.prefix, { limit: 10 })).map((r) => r.job).sort()).toEqual([
        'listing-sync',
        'message-smoke',
        'settings-push',
      ]);
      // `feedsync runs show` and `history`: the change log
      const log = createRedisChangeLog(d.ops, d.settings.prefix);
      const [run] = await log.runs(FEED, 5);
      expect(run).toMatchObject({ feed: FEED, outcome: 'ok', recorded: 6 });
      expect((await log.run(run!.runId, 100)).changes).toHaveLength(6);
      expect(await log.history(FEED, 'MLS0001', 5)).toHaveLength(1);
      // two commands as a user runs them on the cluster config: `runs show` (the change log's
      // connection, as `history`), and a foreground `sync` (its state, the chatbot lock, its budgets
      // and its run history on the cluster): it finds nothing to do and is recorded beside the jobs
      const [showCli, syncCli] = await Promise.all([
        feedsync(['runs', 'show', run!.runId, '--config', d.file, '--json']),
        feedsync(['sync', '--config', d.file, '--json']),
      ]);
      expect(JSON.parse(showCli.stdout).changes).toHaveLength(6);
      expect(syncCli.code).toBe(0);
      expect(JSON.parse(syncCli.stdout).reports[0]).toMatchObject({
        outcome: 'ok',
        counts: { created: 0, updated: 0, deleted: 0 },
      });
      expect((await listRuns(d.ops, d.settings.prefix, { feed: FEED, limit: 10 })).map((r) => r.queue)).toEqual([
        'foreground',
        'listing-sync',
      ]);
      // `feedsync pause` / `resume`
      await pauseFeeds(d.ops, d.settings.prefix, [FEED]);
      expect([...(await pausedFeeds(d.ops, d.settings.prefix)).since.keys()]).toEqual([FEED]);
      await resumeFeeds(d.ops, d.settings.prefix, ALL);
      expect((await pausedFeeds(d.ops, d.settings.prefix)).since.size).toBe(0);
      // the status page reads queues, state and the change log
      const status = await freshFetch(`http://127.0.0.1:${w.port}/status`);
      expect(status.status).toBe(200);
      expect(await status.text()).toContain(FEED);
      const health = await freshFetch(`http://127.0.0.1:${w.port}/healthz`);
      expect(await health.json()).toEqual({ ok: true, redis: 'ok', workers: 'running' });
    } finally {
      await d.close();
    }
  });

  it('an operator cancel reaches a running sync on a cluster', async () => {
    const d = await deploy(emu, clusterRedis(`fsc-${Date.now().toString(36)}`), { rows: 400 });
    emu.emulator.configure({ latencyMs: 20 });
    try {
      await d.startWorker();
      const { jobId } = await import('../../src/queue/index.js').then((q) =>
        q.enqueueJob(d.ops, d.queues, 'sync', FEED, { feed: FEED }),
      );
      await until('the sync to write', async () => (await emu.listings(d.chatbot)).length > 0);
      await requestCancel(d.ops, d.settings.prefix, jobId, 'tester@test');
      const done = await import('../../src/queue/index.js').then((q) => q.waitForJob(d.ops, d.queues, 'sync', jobId));
      expect(done).toMatchObject({ state: 'completed', returnvalue: { outcome: 'cancelled' } });
      expect((await emu.listings(d.chatbot)).length).toBeLessThan(400);
    } finally {
      emu.emulator.configure({ latencyMs: 0 });
      await d.close();
    }
  });

  it('a restart of the node holding the deployment slot during a sync: the run finishes or is retried, and a rerun changes nothing', async () => {
    const d = await deploy(emu, clusterRedis(`fsc-${Date.now().toString(36)}`), { rows: 300 });
    emu.emulator.configure({ latencyMs: 5 });
    try {
      await d.startWorker();
      const owner = await cluster.nodeOf(d.settings.prefix);
      const running = d.run('sync', { feed: FEED }, FEED);
      await until('the sync to write', async () => (await emu.listings(d.chatbot)).length > 20);
      await owner.restart();
      const first = await running;
      expect(first.state).toBe('completed');
      const stored = await emu.listings(d.chatbot);
      expect(stored).toHaveLength(300);
      expect(new Set(stored.map((l) => l.MLSNumber)).size).toBe(300);
      emu.emulator.configure({ latencyMs: 0 });
      const rerun = await d.run('sync', { feed: FEED }, FEED);
      expect(rerun).toMatchObject({
        state: 'completed',
        returnvalue: { outcome: 'ok', counts: { created: 0, deleted: 0 } },
      });
      expect(await emu.listings(d.chatbot)).toHaveLength(300);
    } finally {
      emu.emulator.configure({ latencyMs: 0 });
      await d.close();
    }
  });
});
