// The status page's "undo this run" in a real browser (headless Chromium, JavaScript off), behind the
// UI's login (FEEDSYNC_UI_TOKEN): a worker runs the good feed and the bad export through its queue;
// the bad run's page links to the undo's dry-run plan, whose form queues the undo; the job puts the
// chatbot back as it was before the bad run.
import '../setup/needs-redis.js';
import { rm } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { closeQueues, createQueues, enqueueJob, waitForJob, type Queues } from '../../src/queue/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { freshFetch } from '../helpers/fresh-fetch.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { SN } from '../sync/helpers/feed.js';
import { badRows, createStory, goodRows, listingsAsText, type Story } from '../undo/helpers.js';
import { ARTIFACTS, launchChromium, requireChromium } from './chromium.js';

const TOKEN = 'undo-ui-token-0123-456789abcdef0123456';
const prefix = uniquePrefix();
const redis = testRedis();
let te: TestEmulator;
let s: Story;
let worker: RunningWorker;
let queues: Queues;
let browser: Browser;
const saved = process.env.FEEDSYNC_UI_TOKEN;

/** one sync through the worker's queue: its change-log run id */
async function syncOnce(): Promise<string> {
  const { jobId } = await enqueueJob(redis, queues, 'sync', 'homes', { feed: 'homes' });
  const done = await waitForJob(redis, queues, 'sync', jobId);
  if (done.state !== 'completed') throw new Error(`sync failed: ${done.failedReason}`);
  return (done.returnvalue as { runId: string }).runId;
}

beforeAll(async () => {
  requireChromium();
  te = await startTestEmulator();
  s = await createStory(te.url, [
    `redis: { url: "${REDIS_URL}", prefix: ${prefix} }`,
    'worker: { shutdownTimeoutMs: 2000 }',
  ]);
  process.env.FEEDSYNC_UI_TOKEN = TOKEN;
  worker = await startWorker(await loadConfig(s.config), { port: 0, logger: silentLogger });
  queues = createQueues(redis, prefix);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  if (saved === undefined) delete process.env.FEEDSYNC_UI_TOKEN;
  else process.env.FEEDSYNC_UI_TOKEN = saved;
  await browser?.close();
  await worker?.close();
  if (queues) await closeQueues(queues);
  await te?.close();
  await rm(s.dir, { recursive: true, force: true });
  await dropPrefix(redis, prefix);
  await redis.quit();
});

it('shows the undo plan first, then queues the undo, which puts the listings back', { timeout: 90_000 }, async () => {
  await s.writeFeed(goodRows());
  await syncOnce();
  const before = listingsAsText(await te.listings(SN));
  await s.writeFeed(badRows());
  const bad = await syncOnce();

  const context = await browser.newContext({
    javaScriptEnabled: false,
    httpCredentials: { username: 'ops', password: TOKEN },
    viewport: { width: 1100, height: 900 },
  });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${worker.port}/status/runs/${bad}`);
  await page.locator('a.undo').click();
  await page.waitForURL(/\/undo$/);
  const plan = await page.locator('pre.undo-plan').innerText();
  expect(plan).toContain(`would undo run ${bad} of homes → ${SN}: 2 deleted, 7 updated back, 2 created again`);
  expect(plan).toContain('~ MLS0001 would update back: SalePrice 3010000 → 301000');
  expect(listingsAsText(await te.listings(SN))).not.toEqual(before); // the plan wrote nothing
  await page.screenshot({ path: `${ARTIFACTS}/feedsync-undo-plan.png`, fullPage: true });

  await page.locator('form button[type=submit]').click();
  const queued = await page.locator('p.undo-queued').innerText();
  const jobId = /job (\S+)/.exec(queued)?.[1];
  expect(jobId).toBeTruthy();
  const done = await waitForJob(redis, queues, 'undo', jobId!);
  expect(done).toMatchObject({ state: 'completed', returnvalue: { outcome: 'ok', undoOf: bad } });
  expect(listingsAsText(await te.listings(SN))).toEqual(before);
  await context.close();

  // without the login the page asks for it; a POST from another origin is refused even with it
  expect((await freshFetch(`http://127.0.0.1:${worker.port}/status/runs/${bad}/undo`)).status).toBe(401);
  const auth = `Bearer ${TOKEN}`;
  const cross = await freshFetch(`http://127.0.0.1:${worker.port}/status/runs/${bad}/undo`, {
    method: 'POST',
    headers: { authorization: auth, origin: 'https://evil.test', 'content-type': 'application/x-www-form-urlencoded' },
    body: `confirm=${encodeURIComponent(bad)}`,
  });
  expect(cross.status).toBe(403);
});
