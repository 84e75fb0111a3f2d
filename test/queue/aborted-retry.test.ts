// Invariant 5 with the real listing-sync job: a sync stopped by its worker's shutdown reports
// `handed-back` (no failed run: it counts toward no failing streak), retryable, and the job goes back to the queue at once (never failed for good; issue 55:
// handed back, no attempt spent, where it used to be drained until the deadline and retried).
import '../setup/needs-redis.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { startWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import { closeQueues, createQueues, enqueueJob } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { csv, rows } from '../sync/helpers/feed.js';
import { dropPrefix, expectHandedBack, loadedConfig, REDIS_URL, testRedis, uniquePrefix, until } from './helpers.js';

describe('an aborted sync is handed back', () => {
  it('the real listing-sync job, stopped by a shutdown, reports handed-back and goes back to the queue', async () => {
    const emu = await startTestEmulator({ latencyMs: 400 });
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-abort-'));
    const prefix = uniquePrefix();
    const redis = testRedis();
    const queues = createQueues(redis, prefix);
    try {
      await writeFile(join(dir, 'a.csv'), csv(rows(30)));
      const fields = [
        'MLSNumber',
        'Url',
        'SaleType',
        'Status',
        'CurrencySymbol',
        'PropertyType',
        'Bedrooms',
        'Bathrooms',
        'City',
        'SalePrice',
      ];
      const loaded = loadedConfig(
        `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, timeoutMs: 60000, concurrency: 1 }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 300 }
feeds:
  - name: slow
    chatbot: SN-SLOW
    source: { kind: csv, path: a.csv }
    mapping: { fields: { ${fields.map((f) => `${f}: ${f}`).join(', ')} } }
`,
        dir,
      );
      const worker = await startWorker(loaded, { port: 0, logger: silentLogger });
      const { jobId } = await enqueueJob(redis, queues, 'sync', 'slow', { feed: 'slow' });
      // its run started (the job's log names the worker running it): a job the shutdown catches
      // before its run starts goes back with no run to record
      await until('the run to start', async () => (await queues.sync.getJobLogs(jobId)).count > 0);
      await worker.close();

      await expectHandedBack(redis, queues, prefix, jobId, 'handed-back');
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, prefix);
      await redis.quit();
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
