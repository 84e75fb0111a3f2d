// A worker's stop (src/cli/worker.ts): every closer runs whatever one before it did, and one that
// fails is a warning naming what it closes and the error, not nothing; the rest still close (the
// queue workers gone from Redis, the Redis connection ended).
import '../setup/needs-redis.js';
import { Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startWorker } from '../../src/cli/worker.js';
import { closeQueues, createQueues, workerJob, type JobDefinition } from '../../src/queue/index.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { captureLogs, dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix, until } from '../queue/helpers.js';

afterEach(() => void vi.restoreAllMocks());

const idle: JobDefinition<{ feed: string }> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: z.strictObject({ feed: z.string() }),
  target: (p) => ({ feed: p.feed, chatbot: 'SN-1' }),
  process: async () => ({ outcome: 'ok', summary: 'nothing', retryable: false }),
};

describe("a worker's stop", () => {
  it('warns of a closer that fails (what, and the error), and still closes the others', async () => {
    const prefix = uniquePrefix();
    const redis = testRedis();
    const queues = createQueues(redis, prefix);
    try {
      const { logger, warnings } = captureLogs();
      const w = await startWorker(
        loadedConfig(
          `api: { baseUrl: "http://127.0.0.1:9", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 2000 }
feeds: []
`,
        ),
        { port: 0, logger, jobs: { sync: workerJob(idle) } },
      );
      await until('the queue workers connected', async () => (await queues.sync.getWorkersCount()) > 0);
      // the HTTP listener's close fails (after closing it): the first closer run, the last opened
      const close = Server.prototype.close;
      vi.spyOn(Server.prototype, 'close').mockImplementationOnce(function (this: Server, ...args) {
        close.apply(this, args);
        throw new Error('EBADF: the listener is gone');
      });
      await w.close();
      expect(warnings()).toEqual([
        expect.objectContaining({
          closing: "the worker's HTTP listener",
          err: expect.objectContaining({ message: 'EBADF: the listener is gone' }),
          msg: "the worker's HTTP listener not closed: EBADF: the listener is gone",
        }),
      ]);
      expect(await queues.sync.getWorkersCount()).toBe(0);
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, prefix);
      await redis.quit();
    }
  });
});
