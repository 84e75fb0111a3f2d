// `feedsync enqueue undo RUN --wait`: the undo runs on a worker (its own queue, the chatbot's sync
// lock), goes into run history, and puts the chatbot back. Without a login configured for the UI,
// the status page's run shows the undo commands and refuses the action.
import '../setup/needs-redis.js';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { listRuns } from '../../src/queue/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';
import { SN } from '../sync/helpers/feed.js';
import { badRows, createStory, goodRows, inProcess, listingsAsText, type Story } from './helpers.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const prefix = uniquePrefix();
const redis = testRedis();
let te: TestEmulator;
let s: Story;
let worker: RunningWorker;

beforeAll(async () => {
  te = await startTestEmulator();
  s = await createStory(te.url, [
    `redis: { url: "${REDIS_URL}", prefix: ${prefix} }`,
    'worker: { shutdownTimeoutMs: 2000 }',
  ]);
  worker = await startWorker(await loadConfig(s.config), { port: 0, logger: silentLogger });
});
afterAll(async () => {
  await worker?.close();
  await te?.close();
  await rm(s.dir, { recursive: true, force: true });
  await dropPrefix(redis, prefix);
  await redis.quit();
});

it(
  'enqueue undo RUN --wait undoes the run on a worker; the status page without a login shows the command',
  { timeout: 90_000 },
  async () => {
    const { before, bad } = await inProcess(s.config, async (ops) => {
      await s.writeFeed(goodRows());
      await ops.sync();
      const before = listingsAsText(await te.listings(SN));
      await s.writeFeed(badRows());
      return { before, bad: (await ops.sync()).runId };
    });

    // the status page of the run, no login configured: the commands, and no action
    const page = await (await freshFetch(`http://127.0.0.1:${worker.port}/status/runs/${bad}`)).text();
    expect(page).toContain(`feedsync undo ${bad} --dry-run --config ${s.config}`);
    expect(page).not.toContain('undo this run…');
    const refused = await freshFetch(`http://127.0.0.1:${worker.port}/status/runs/${bad}/undo`, {
      method: 'POST',
      body: new URLSearchParams({ confirm: bad }),
    });
    expect(refused.status).toBe(403);
    expect(listingsAsText(await te.listings(SN))).not.toEqual(before);

    const out = await feedsync(['enqueue', 'undo', bad, '--wait', '--config', s.config]);
    expect(out.code).toBe(0);
    // what was queued, in words ("undo undo:RUN" before: the job's key)
    expect(out.stderr).toMatch(
      new RegExp(`^undo of run ${bad.replaceAll('.', '\\.')}: queued job \\S+ in Redis `, 'm'),
    );
    expect(out.stderr).toContain(`undid run ${bad} of homes → ${SN}: 2 deleted, 7 updated back, 2 created again`);
    expect(listingsAsText(await te.listings(SN))).toEqual(before);
    // run history has the undo beside the syncs
    const runs = await listRuns(redis, prefix, { feed: 'homes', limit: 10 });
    expect(runs.map((r) => r.job)).toContain('listing-undo');
  },
);
