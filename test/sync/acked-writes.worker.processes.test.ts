// Issue 55, point 1, on the queue: a `feedsync worker` SIGKILLed in the middle of a sync job's
// updates. Another worker takes the job over (started after the kill, it finds the job's holder
// gone) and sends only the updates the killed one had not had acknowledged: of those it had sent,
// at most the ones in flight when it died (≤ api.concurrency: an update's slot is freed only once
// its acknowledgement is in Redis, settle/acked.ts). No listing is created twice. Counted at the
// emulator, on worker processes and the real Redis; nothing is timed.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enqueueJob, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { REDIS_URL, until } from '../queue/helpers.js';
import { runningOn, takenOver, useDeployment } from '../queue/use-deployment.js';
import { COLUMNS, csv, requests, row, rows, settledCount, total } from './helpers/feed.js';

const d = useDeployment();

const SN = 'SN-ACKED';
const FEED = 200;
const CONCURRENCY = 4;
/** updates the killed worker has had answered (at least) when it is killed */
const KILL_AFTER = 100;
const LATENCY_MS = 40;

describe('a worker killed in the middle of a sync job’s updates', () => {
  it('the worker that takes the job over sends only the updates not acknowledged, and at most api.concurrency more', async () => {
    const emu = (d.emu = await startTestEmulator({ chatbots: [SN] }));
    const updates = async () => total(await requests(emu, 'RealEstateUpdate'));
    const creates = async () => total(await requests(emu, 'RealEstateCreate'));
    const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
    const feedFile = join(d.dir, 'homes.csv');
    await writeFile(feedFile, csv(rows(FEED)));
    const file = join(d.dir, 'feedsync.yaml');
    await writeFile(
      file,
      `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: ${CONCURRENCY}, ratePerSecond: 1000 }
redis: { url: "${REDIS_URL}", prefix: ${d.prefix} }
worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, concurrency: 1, watchdogSeconds: 60, minScheduleIntervalSeconds: 1 }
feeds:
  - name: homes
    chatbot: ${SN}
    source: { kind: csv, path: homes.csv }
    mapping: ${mapping}
`,
    );
    const a = await d.start(file);
    const first = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes', { feed: 'homes' });
    expect((await waitForJob(d.redis, d.queues, 'sync', first.jobId)).state).toBe('completed');
    expect(await emu.listings(SN)).toHaveLength(FEED);

    // every listing's price changes: FEED updates to make
    await writeFile(feedFile, csv(Array.from({ length: FEED }, (_, i) => row(i + 1, { SalePrice: 900000 + i }))));
    const createsBefore = await creates();
    const updatesBefore = await updates();
    emu.emulator.configure({ latencyMs: LATENCY_MS });
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes-2', { feed: 'homes' });
    await until('the job to run on A', async () => runningOn(await d.queues.sync.getJob(jobId)) === a.proc.pid);
    await until(
      'A to have KILL_AFTER updates answered',
      async () => (await updates()) - updatesBefore >= KILL_AFTER,
      60_000,
    );
    await a.kill('SIGKILL');
    emu.emulator.configure({ latencyMs: 0 });
    // updates the killed worker sent, once those still in the emulator's latency are answered
    const sent = (await settledCount(updates)) - updatesBefore;
    expect(sent).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(sent).toBeLessThan(FEED);

    const job = await takenOver(d, file, jobId);
    const resent = (await updates()) - updatesBefore - sent;
    expect(job.returnvalue).toMatchObject({ outcome: 'ok', counts: { updated: resent, created: 0 } });
    // every update the killed worker had not sent, and of those it sent at most the ones in flight
    expect(resent).toBeGreaterThanOrEqual(FEED - sent);
    expect(resent - (FEED - sent)).toBeLessThanOrEqual(CONCURRENCY);
    // no listing created again: every one once, at its new price
    expect(await creates()).toBe(createsBefore);
    const listings = await emu.listings(SN);
    expect(listings).toHaveLength(FEED);
    expect(new Set(listings.map((l) => l.SalePrice)).size).toBe(FEED);
    expect(Math.min(...listings.map((l) => Number(l.SalePrice)))).toBe(900000);
  }, 180_000);
});
