// Reports stay small (issue 9.5): a 100 MB bad price yields a report of a few KB, and two worker runs
// whose reports list 100k rejected records leave Redis small (history and job return values capped).
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/log.js';
import {
  closeQueues,
  createProcessor,
  createQueues,
  enqueueJob,
  startWorkers,
  waitForJob,
  type JobDefinition,
  type RunReport,
} from '../../src/queue/index.js';
import { listRuns } from '../../src/queue/run-records.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, loadedConfig, processorDeps, redisAt, testRedis, uniquePrefix } from '../queue/helpers.js';
import { csv, rows, type SyncEnv, useEmulatorSync } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

describe('reports stay small', () => {
  it('a 100 MB bad price is reported as an excerpt', async () => {
    const text = csv(rows(3)).replace('301000', '9'.repeat(100 * 1024 * 1024));
    await writeFile(join(env.dir, 'feed.csv'), text);
    // by default a 100 MB row is past source.maxRecordBytes (1 MiB): the read fails, naming the line
    const refused = await env.sync(te);
    expect(refused.source.complete).toBe(false);
    expect(refused.source.error).toMatch(/line 2 is longer than source\.maxRecordBytes/);
    expect(await te.listings('SN-SYNC')).toHaveLength(0);
    // a feed that allows such rows: the value is rejected and reported as an excerpt
    const report = await env.sync(
      te,
      env.feed({ source: { kind: 'csv', path: 'feed.csv', maxRecordBytes: 128 * 1024 * 1024 } }),
    );
    expect(report.counts).toMatchObject({ created: 2, rejected: 1 });
    const json = JSON.stringify(report);
    expect(json.length).toBeLessThan(64 * 1024);
    expect(json).toMatch(/SalePrice/);
  }, 120_000);

  it('two worker runs with 100k rejected records each keep Redis small', async () => {
    const redis: Redis = testRedis();
    const prefix = uniquePrefix();
    const queues = createQueues(redis, prefix);
    const huge: JobDefinition<{ feed: string }> = {
      name: 'listing-sync',
      kind: 'sync',
      payload: z.strictObject({ feed: z.string() }),
      target: (p) => ({ feed: p.feed, chatbot: 'SN-1' }),
      process: async (): Promise<RunReport & { rejected: unknown[] }> => ({
        outcome: 'ok',
        summary: 'synced',
        retryable: false,
        rejected: Array.from({ length: 100_000 }, (_, i) => ({
          key: `K${i}`,
          reasons: [`SalePrice must be a number (got "${'y'.repeat(1000)}")`],
        })),
      }),
    };
    const config = loadedConfig(`api: { baseUrl: "http://127.0.0.1:1", secretKey: k, sessionKey: s }\n`);
    const workers = startWorkers(
      queues,
      { sync: createProcessor(huge, processorDeps(redis, prefix, config)) },
      {
        redis: redisAt(prefix),
        concurrency: 1,
        lockDurationMs: 5000,
        stalledIntervalMs: 5000,
        watchdogMs: 60_000,
        logger: silentLogger,
      },
    );
    try {
      for (let i = 0; i < 2; i++) {
        const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
        expect(await waitForJob(redis, queues, 'sync', jobId)).toMatchObject({ state: 'completed' });
      }
      let bytes = 0;
      for (const key of await redis.keys(`${prefix}:*`)) bytes += Number(await redis.memory('USAGE', key)) || 0;
      expect(bytes).toBeLessThan(1024 * 1024);
      const [run] = await listRuns(redis, prefix, { feed: 'austin', limit: 1 });
      expect((run!.report as { rejected: unknown[]; omitted: Record<string, number> }).rejected).toHaveLength(50);
      expect((run!.report as { omitted: Record<string, number> }).omitted).toEqual({ rejected: 99_950 });
    } finally {
      await workers.close(2000);
      await closeQueues(queues);
      await dropPrefix(redis, prefix);
      await redis.quit();
    }
  }, 120_000);
});
