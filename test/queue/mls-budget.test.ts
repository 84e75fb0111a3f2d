// Three worker processes read twelve feeds from one MLS with one bearer token; the MLS suspends a
// token past 2 requests/s (test/helpers/fake-mls.ts). With `source.limits.perSecond: 2` the budget
// is shared through Redis, so the token is never suspended and every feed is read.
import { describe, expect, it } from 'vitest';
import { enqueueJob, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { startFakeMls, type FakeMls } from '../helpers/fake-mls.js';
import { csv, rows } from '../sync/helpers/feed.js';
import { busiestWindow } from './deploy.js';
import { useDeployment } from './use-deployment.js';

const d = useDeployment();

describe('a feed source credential shared by three worker processes', () => {
  let mls: FakeMls | undefined;

  it('is never suspended by an MLS that allows 2 requests/s per token', async () => {
    d.emu = await startTestEmulator();
    mls = await startFakeMls({
      perSecond: 2,
      body: (path) => (/^\/feeds\/m\d+\.csv$/.test(path) ? csv(rows(2)) : undefined),
    });
    try {
      const feeds = Array.from({ length: 12 }, (_, i) => ({
        name: `m${i}`,
        chatbot: `SN-M${i}`,
        url: `${mls!.url}/feeds/m${i}.csv`,
        sourceExtra: 'bearerToken: mls-token-1, limits: { perSecond: 2, perHour: 7200, perDay: 40000 }',
      }));
      const file = await d.deploy(feeds);
      await Promise.all([d.start(file), d.start(file), d.start(file)]);
      const jobs = [];
      for (const f of feeds) jobs.push(await enqueueJob(d.redis, d.queues, 'sync', f.name, { feed: f.name }));
      for (const j of jobs) expect((await waitForJob(d.redis, d.queues, 'sync', j.jobId)).state).toBe('completed');

      if (mls.suspended.size) console.log(JSON.stringify(mls.log.map((r) => [r.at - mls!.log[0]!.at, r.status])));
      expect([...mls.suspended]).toEqual([]);
      expect(mls.log.map((r) => r.status).every((s) => s === 200)).toBe(true);
      expect(mls.log).toHaveLength(12);
      expect(
        busiestWindow(
          mls.log.map((r) => r.at),
          1000,
        ),
      ).toBeLessThanOrEqual(2);
      for (const f of feeds) expect(await d.emu.listings(f.chatbot)).toHaveLength(2);
      // all three took part
      for (const w of d.workers) expect(w.logs()).toMatch(/"msg":"synced m\d+/);
    } finally {
      await mls.close();
    }
  }, 90_000);
});
