// The status page in a real browser (headless Chromium, JavaScript off): a worker runs real syncs
// through its queue against the emulator — a first sync, then a price change and a listing gone —
// and /status shows the feed's last run, counts, freshness, next run and state, a chart of its
// runs, and links to each run's changes, which tell the story of both listings.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import { closeQueues, createQueues, enqueueJob, waitForJob, type Queues } from '../../src/queue/index.js';
import { pauseFeeds, resumeFeeds } from '../../src/queue/control.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { createSyncEnv, csv, homesConfigYaml, rows, type SyncEnv } from '../sync/helpers/feed.js';
import { ARTIFACTS, BROWSER_TESTS_RUN, launchChromium, requireChromium } from './chromium.js';

describe.skipIf(!BROWSER_TESTS_RUN)('status page', () => {
  const prefix = uniquePrefix();
  const redis = testRedis();
  let te: TestEmulator;
  let env: SyncEnv;
  let worker: RunningWorker;
  let queues: Queues;
  let browser: Browser;

  async function syncOnce(): Promise<void> {
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'homes', { feed: 'homes' });
    expect((await waitForJob(redis, queues, 'sync', jobId)).state).toBe('completed');
  }

  beforeAll(async () => {
    requireChromium();
    te = await startTestEmulator();
    env = await createSyncEnv();
    const yaml = homesConfigYaml(
      te.url,
      { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
      {
        deletes: '{ maxFraction: 0.3 }',
        top: [`redis: { url: "${REDIS_URL}", prefix: ${prefix} }`, 'worker: { shutdownTimeoutMs: 2000 }'],
      },
    ).replace(
      '    source: { kind: csv, path: homes.csv }',
      '    source: { kind: csv, path: homes.csv }\n    schedule: { cron: "0 2 * * *", tz: UTC }',
    );
    worker = await startWorker(loadedConfig(yaml, env.dir), { port: 0, logger: silentLogger });
    queues = createQueues(redis, prefix);

    await writeFile(join(env.dir, 'homes.csv'), csv(rows(10)));
    await syncOnce();
    const next = rows(10)
      .filter((r) => r.MLSNumber !== 'MLS0007')
      .map((r) => (r.MLSNumber === 'MLS0003' ? { ...r, SalePrice: 333333 } : r));
    await writeFile(join(env.dir, 'homes.csv'), csv(next));
    await syncOnce();
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    // setup may have stopped anywhere: close only what was opened
    await browser?.close();
    await worker?.close();
    if (queues) await closeQueues(queues);
    await te?.close();
    await env?.cleanup();
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it('shows each feed at a glance without JavaScript, with a chart and the runs’ changes', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const res = await page.goto(`http://127.0.0.1:${worker.port}/status`);
    expect(res?.status()).toBe(200);

    const row = page.locator('tr[data-feed="homes"]');
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).toContain('homes');
    expect(cells[1]).toMatch(/^ok \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/); // last run: outcome, when
    expect(cells[2]).toBe('0 / 1 / 1 / 0'); // created / updated / deleted / rejected
    expect(cells[3]).toMatch(/^\d+(\.\d)? (ms|s)$/); // duration
    expect(cells[4]).toMatch(/^\d+ s ago$|^\d+ min ago$/); // freshness
    expect(await row.locator('td.freshness .fresh').count()).toBe(1); // not highlighted
    expect(cells[5]).toMatch(/ 02:00:00$/); // next run, from the job scheduler
    expect(cells[6]).toBe('idle');

    // the chart: one stack per run (10 created; then 1 updated + 1 deleted), and the duration line
    const chart = page.locator('#chart-homes svg.chart');
    expect(await chart.locator('rect.bar').count()).toBe(3);
    expect(await chart.locator('rect.bar.created').count()).toBe(1);
    expect(await chart.locator('rect.bar.deleted').count()).toBe(1);
    expect(await chart.locator('polyline.duration').count()).toBe(1);
    const box = await chart.boundingBox();
    expect(box!.width).toBeGreaterThan(300);
    expect(await page.locator('#chart-homes table.runs tr').count()).toBe(3); // header + 2 runs
    await page.screenshot({ path: `${ARTIFACTS}/feedsync-status.png`, fullPage: true });

    // paused by an operator: the state says so
    await pauseFeeds(redis, prefix, ['homes']);
    await page.reload();
    expect(await row.locator('td .state').innerText()).toBe('paused');
    await resumeFeeds(redis, prefix, ['homes']);
    await page.reload();

    // the last run's link: its changes, listing by listing
    await row.locator('td').nth(1).locator('a').click();
    await page.waitForURL(/\/status\/runs\//);
    const changes = await page.locator('ul.changes li').allInnerTexts();
    expect(changes).toEqual(
      expect.arrayContaining([
        '~ MLS0003 update: SalePrice 303000 → 333333',
        '- MLS0007 delete (no longer in the feed)',
      ]),
    );
    expect(await page.locator('h2').first().innerText()).toBe('changes (2)');
    await page.screenshot({ path: `${ARTIFACTS}/feedsync-status-run.png`, fullPage: true });

    const missing = await page.goto(`http://127.0.0.1:${worker.port}/status/runs/no-such-run`);
    expect(missing?.status()).toBe(404);
    await context.close();
  });
});
