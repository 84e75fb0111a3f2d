// A sync job under way on one `feedsync worker` process whose lanes alert at the first failed run
// (alerts.rules.failedRuns: 1, a webhook to `hookUrl`), writing slowly enough to act on it meanwhile:
// for tests of how a run stopped under its worker is recorded and alerted on.
import { appendFile } from 'node:fs/promises';
import { enqueueJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { until } from './helpers.js';
import { runningOn, type Deployment } from './use-deployment.js';
import type { WorkerProcess } from './worker-process.js';

/** The feed `homes` of `rows` into `chatbot`, its job running and its first writes made. */
export async function alertedSyncUnderWay(
  d: Deployment,
  o: { chatbot: string; rows: number; hookUrl: string },
): Promise<{ file: string; w: WorkerProcess; jobId: string }> {
  d.emu = await startTestEmulator({ chatbots: [o.chatbot], latencyMs: 30 });
  const file = await d.deploy([{ name: 'homes', chatbot: o.chatbot, rows: o.rows }], {
    api: 'concurrency: 2, ratePerSecond: 1000',
    // (no stalled check within the test: what happens to the job is the test's)
    worker: { lockDurationMs: 4000, stalledIntervalMs: 60_000, concurrency: 1 },
  });
  await appendFile(
    file,
    `alerts: { channels: [{ kind: webhook, url: "${o.hookUrl}", secret: whsec-test-alerted-sync }], rules: { failedRuns: 1 } }\n`,
  );
  const w = await d.start(file);
  const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes', { feed: 'homes' });
  await until('the job to run', async () => runningOn(await d.queues.sync.getJob(jobId)) === w.proc.pid);
  await until('the sync to write', async () => (await d.emu!.listings(o.chatbot)).length >= 10, 60_000);
  return { file, w, jobId };
}
