// feedsync on a primary + replica watched by a Sentinel (started by the test): the worker runs the
// listing sync, the settings push and the smoke job through `redis.sentinel`; and when the primary
// is killed (SIGKILL, by pid) in the middle of a sync, the Sentinel promotes the replica, the
// worker follows it by itself, /healthz says Redis is away and then back, the run finishes or is
// retried, and the rerun finds nothing to do: no listing twice, none deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listRuns } from '../../src/queue/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startSentinel, type TestSentinel } from '../helpers/redis-topology.js';
import { until } from '../queue/helpers.js';
import { deploy, FEED } from './deployment.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let group: TestSentinel;
let emu: TestEmulator;
beforeAll(async () => {
  [group, emu] = await Promise.all([startSentinel(), startTestEmulator()]);
}, 60_000);
afterAll(async () => {
  await emu?.close();
  await group?.stop();
});

const sentinelRedis = (prefix: string) => [
  `sentinel: { name: ${group.name}, sentinels: [${group.sentinels.map((s) => `"${s}"`).join(', ')}] }`,
  `prefix: ${prefix}`,
];

describe('Redis Sentinel', () => {
  it('a worker on redis.sentinel runs sync, settings and smoke, and its history reads back', async () => {
    const prefix = `fss-${Date.now().toString(36)}`;
    const d = await deploy(emu, sentinelRedis(prefix), { rows: 5 });
    try {
      await d.startWorker();
      const sync = await d.run('sync', { feed: FEED }, FEED);
      expect(sync).toMatchObject({ state: 'completed', returnvalue: { outcome: 'ok', counts: { created: 5 } } });
      expect(await d.run('settings', { chatbot: d.chatbot }, d.chatbot)).toMatchObject({ state: 'completed' });
      expect(await d.run('smoke', { chatbot: d.chatbot }, d.chatbot)).toMatchObject({ state: 'completed' });
      expect((await listRuns(d.ops, d.settings.prefix, { limit: 10 })).map((r) => r.job).sort()).toEqual([
        'listing-sync',
        'message-smoke',
        'settings-push',
      ]);
    } finally {
      await d.close();
    }
  });

  it('the primary killed during a sync: the worker follows the promoted replica, /healthz is 200 again after it, nothing lost or doubled, the rerun is clean', async () => {
    const rows = 600;
    const d = await deploy(emu, sentinelRedis(`fss-${Date.now().toString(36)}`), { rows });
    emu.emulator.configure({ latencyMs: 5 });
    try {
      const w = await d.startWorker();
      const health: number[] = [];
      let watching = true;
      const watch = (async () => {
        while (watching) {
          // (a probe as an orchestrator's: no answer within its timeout is a failed check too, 0 here)
          const res = await freshFetch(`http://127.0.0.1:${w.port}/healthz`, {
            signal: AbortSignal.timeout(1000),
          }).catch(() => undefined);
          health.push(res?.status ?? 0);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const running = d.run('sync', { feed: FEED }, FEED);
      await until('the sync to write', async () => (await emu.listings(d.chatbot)).length > 30);
      const before = await group.primaryPort();
      await group.failover();
      expect(await group.primaryPort()).not.toBe(before);

      const first = await running;
      expect(first.state).toBe('completed');
      await until('/healthz to be 200 again', async () => health.at(-1) === 200);
      watching = false;
      await watch;
      // a dip (503: Redis not answering its PING; 0: no answer within the probe's second) is seen only
      // when the failover outlasts a probe's 50 ms: the worker's commands wait in its client's queue
      // while it follows the promoted replica, so a quick one shows none (14 probes all 200, once);
      // that /healthz turns 503 while Redis is away is test/server/worker-http.test.ts's
      expect(
        health.filter((s) => s !== 200 && s !== 503 && s !== 0),
        `/healthz statuses: ${health.join(',')}`,
      ).toEqual([]);

      const stored = await emu.listings(d.chatbot);
      expect(stored).toHaveLength(rows);
      expect(new Set(stored.map((l) => l.MLSNumber)).size).toBe(rows);
      emu.emulator.configure({ latencyMs: 0 });
      const rerun = await d.run('sync', { feed: FEED }, FEED);
      expect(rerun).toMatchObject({
        state: 'completed',
        returnvalue: { outcome: 'ok', counts: { created: 0, deleted: 0 } },
      });
      expect(await emu.listings(d.chatbot)).toHaveLength(rows);
      // both runs are in the history kept on the promoted replica
      expect((await listRuns(d.ops, d.settings.prefix, { feed: FEED, limit: 10 })).map((r) => r.jobId)).toContain(
        rerun.jobId,
      );
    } finally {
      emu.emulator.configure({ latencyMs: 0 });
      await d.close();
    }
  });
});
