// Shutdown hands the running jobs back at once (issue 55; it used to wait for them until its
// deadline): a running job is aborted through its AbortSignal, which reaches the in-flight HTTP
// call, and the job goes back to the queue, waiting, no attempt spent (not lost, not failed).
import '../setup/needs-redis.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import { closeQueues, createQueues, enqueueJob, type JobDefinition, workerJob } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { dropPrefix, expectHandedBack, loadedConfig, REDIS_URL, testRedis, uniquePrefix, until } from './helpers.js';

const slowSync: JobDefinition<{ feed: string }> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: z.strictObject({ feed: z.string() }),
  target: (p) => ({ feed: p.feed, chatbot: 'SN-SLOW' }),
  process: async (p, ctx) => {
    await ctx.runtime.api.listListings(
      { SerialNumber: 'SN-SLOW', PageNumber: 1, PageSize: 10 },
      { signal: ctx.signal, retry: false },
    );
    return { outcome: 'ok', summary: `synced ${p.feed}` };
  },
};

describe('shutdown hands running jobs back', () => {
  it('aborts a running job at once, long before the deadline; the abort reaches its HTTP call and the job waits again', async () => {
    const emu = await startTestEmulator({ latencyMs: 15_000 });
    const prefix = uniquePrefix();
    const redis = testRedis();
    const queues = createQueues(redis, prefix);
    try {
      const loaded = loadedConfig(
        `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, timeoutMs: 60000 }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 60000 }
`,
      );
      const worker = await startWorker(loaded, {
        port: 0,
        logger: silentLogger,
        jobs: { sync: workerJob(slowSync) },
      });
      const { jobId } = await enqueueJob(redis, queues, 'sync', 'slow', { feed: 'slow' });
      // its run started (the job's log names the worker running it): a job the shutdown catches
      // before its run starts goes back with no run to record
      await until('the run to start', async () => (await queues.sync.getJobLogs(jobId)).count > 0);
      const closing = Date.now();
      await worker.close();
      // the HTTP call would answer in 15 s and the deadline is a minute: the abort stopped it
      expect(Date.now() - closing).toBeLessThan(10_000);

      const run = await expectHandedBack(redis, queues, prefix, jobId, 'handed-back');
      expect(run.summary).toMatch(/abort/i);
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, prefix);
      await redis.quit();
      await emu.close();
    }
  });
});
