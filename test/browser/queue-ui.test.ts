// The queue UI in a real browser: headless Chromium (Debian's package) opens /ui, sees the three
// queues, and opens the finished sync job with its report.
import '../setup/needs-redis.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import {
  closeQueues,
  createQueues,
  enqueueJob,
  waitForJob,
  type JobDefinition,
  workerJob,
  type Queues,
} from '../../src/queue/index.js';
import { dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { ARTIFACTS, BROWSER_TESTS_RUN, launchChromium, requireChromium } from './chromium.js';

const fakeSync: JobDefinition<{ feed: string }> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: z.strictObject({ feed: z.string() }),
  target: (p) => ({ feed: p.feed, chatbot: 'SN-UI' }),
  process: async (p) => ({
    outcome: 'ok',
    retryable: false,
    summary: `synced ${p.feed} → SN-UI: 4 created, 0 updated, 0 deleted, 0 failed in 12 ms (attempt 1/3)`,
    counts: { created: 4, updated: 0, deleted: 0, failed: 0 },
  }),
};

describe.skipIf(!BROWSER_TESTS_RUN)('queue UI', () => {
  const prefix = uniquePrefix();
  const redis = testRedis();
  let worker: RunningWorker;
  let queues: Queues;
  let browser: Browser;
  let jobId: string;

  beforeAll(async () => {
    requireChromium();
    const loaded = loadedConfig(
      `api: { baseUrl: "http://127.0.0.1:9", secretKey: k1234, sessionKey: s1234 }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 2000 }
feeds:
  - name: ui-feed
    chatbot: SN-UI
    source: { kind: csv, path: feeds/ui.csv }
`,
    );
    worker = await startWorker(loaded, {
      port: 0,
      logger: silentLogger,
      jobs: { sync: workerJob(fakeSync) },
    });
    queues = createQueues(redis, prefix);
    ({ jobId } = await enqueueJob(redis, queues, 'sync', 'ui-feed', { feed: 'ui-feed' }));
    expect((await waitForJob(redis, queues, 'sync', jobId)).state).toBe('completed');
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    // Setup may have stopped anywhere (no Chromium, no Redis): close only what was opened.
    await browser?.close();
    await worker?.close();
    if (queues) await closeQueues(queues);
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it('lists the three queues and opens the finished sync job', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const base = `http://127.0.0.1:${worker.port}`;
    await page.goto(`${base}/ui`);
    for (const name of ['listing-sync', 'settings-push', 'message-smoke']) {
      // waitFor throws when the queue never shows: that is the assertion.
      await page.getByText(name, { exact: true }).first().waitFor({ state: 'visible', timeout: 15_000 });
    }
    // The overview cards (one per queue, with its job count) replace the loading placeholder.
    await page
      .getByText(/^\d+ Jobs?$/)
      .nth(2)
      .waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${ARTIFACTS}/feedsync-ui-queues.png` });

    // Into the sync queue's completed jobs, then the job itself.
    await page.getByText('listing-sync', { exact: true }).first().click();
    await page.waitForURL(/\/ui\/queue\/listing-sync/);
    await page.locator('a[href="/ui/queue/listing-sync?status=completed"]').first().click();
    const jobLink = page.locator(`a[href*="/ui/queue/listing-sync/${jobId}"]`).first();
    await jobLink.waitFor({ timeout: 15_000 });
    await jobLink.click();
    await page.waitForURL(new RegExp(`/ui/queue/listing-sync/${jobId}`));
    await page.getByText(jobId).first().waitFor({ timeout: 15_000 });
    // The job page's Data tab shows the payload and the return value: the run report.
    await page.getByText('SN-UI: 4 created', { exact: false }).first().waitFor({ timeout: 15_000 });
    const body = await page.locator('body').innerText();
    expect(body).toContain('returnValue');
    expect(body).toMatch(/feed:\s*"ui-feed"/);
    await page.screenshot({ path: `${ARTIFACTS}/feedsync-ui-job.png`, fullPage: true });
  });
});
