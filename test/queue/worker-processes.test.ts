// Worker processes (`node bin/feedsync.js worker`) against a test emulator and the real Redis:
// a schedule fires a real sync; a worker SIGKILLed mid-sync has its job taken over by another (the
// holder record swept, src/queue/job-holders.ts) with no duplicate on the remote; two workers share
// ten feeds, each run once.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { REDIS_URL, until } from './helpers.js';
import { useDeployment } from './use-deployment.js';

const d = useDeployment();

interface FeedSpec {
  name: string;
  chatbot: string;
  rows: number;
  schedule?: string;
}

/**
 * Locks of 10 s renewed every 5 s by default: with 2 s ones a loaded machine let a lock lapse between
 * renewals and the job ran twice. `worker` sets them for a test that kills a worker (its job is taken
 * over once its short lock lapses); `name` is the config file's.
 */
const LONG_LOCKS = 'lockDurationMs: 10000, stalledIntervalMs: 5000';
async function writeConfig(
  feeds: FeedSpec[],
  api: { concurrency: number },
  worker = LONG_LOCKS,
  name = 'feedsync.yaml',
): Promise<string> {
  const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
  const feedYaml = await Promise.all(
    feeds.map(async (f) => {
      await writeFile(join(d.dir, `${f.name}.csv`), csv(rows(f.rows)));
      return `  - name: ${f.name}
    chatbot: ${f.chatbot}
    source: { kind: csv, path: ${f.name}.csv }
    mapping: ${mapping}
${f.schedule ? `    schedule: { cron: "${f.schedule}" }\n` : ''}`;
    }),
  );
  const file = join(d.dir, name);
  await writeFile(
    file,
    `api: { baseUrl: "${d.emu!.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: ${api.concurrency}, retries: 2 }
redis: { url: "${REDIS_URL}", prefix: ${d.prefix} }
worker: { ${worker}, shutdownTimeoutMs: 3000, concurrency: 2, watchdogSeconds: 60, minScheduleIntervalSeconds: 1 }
feeds:
${feedYaml.join('')}`,
  );
  return file;
}

function mlsCounts(listings: Array<{ MLSNumber?: string }>): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of listings) m.set(l.MLSNumber ?? '', (m.get(l.MLSNumber ?? '') ?? 0) + 1);
  return m;
}

describe('worker processes', () => {
  it('a job scheduler from config fires and runs a real sync', async () => {
    const emu = (d.emu = await startTestEmulator());
    const file = await writeConfig([{ name: 'tick', chatbot: 'SN-TICK', rows: 3, schedule: '* * * * * *' }], {
      concurrency: 2,
    });
    const w = await d.start(file);
    // its ready line names every page of its port, the status page too (runbook "The status page")
    expect(w.logs()).toMatch(
      /worker ready: http:\/\/127\.0\.0\.1:\d+\/ui \(queue UI[^)]*\), \/status \([^)]*\), \/metrics, \/healthz/,
    );
    const run = await until('a scheduled run', async () =>
      (await listRuns(d.redis, d.prefix, { feed: 'tick', limit: 10 })).find((r) => r.outcome === 'ok'),
    );
    expect(run.jobId).toMatch(/^repeat:sync:tick:/);
    expect((await emu.listings('SN-TICK')).map((l) => l.MLSNumber).sort()).toEqual(['MLS0001', 'MLS0002', 'MLS0003']);
  });

  it('a worker SIGKILLed mid-sync: another takes the job over, the remote converges with no duplicate', async () => {
    const emu = (d.emu = await startTestEmulator({ latencyMs: 60 }));
    const feeds = [{ name: 'big', chatbot: 'SN-KILL', rows: 40 }];
    // the killed worker's lock lapses 2 s after the kill; the one that takes over holds its own lock long.
    // (Both look for stalled jobs every second: BullMQ skips a look for the interval of the last one,
    // whichever worker made it.)
    const file = await writeConfig(
      feeds,
      { concurrency: 1 },
      'lockDurationMs: 2000, stalledIntervalMs: 1000',
      'killed.yaml',
    );
    const takesOver = await writeConfig(
      feeds,
      { concurrency: 1 },
      'lockDurationMs: 10000, stalledIntervalMs: 1000',
      'takes-over.yaml',
    );
    const a = await d.start(file);
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'big', { feed: 'big' });
    await until('the sync to be under way', async () => (await emu.listings('SN-KILL')).length >= 5);
    await a.kill('SIGKILL');
    const leftByA = (await emu.listings('SN-KILL')).length;
    expect(leftByA).toBeLessThan(40);

    await d.start(takesOver);
    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done.state).toBe('completed');
    const listings = await emu.listings('SN-KILL');
    const counts = mlsCounts(listings);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const job = await d.queues.sync.getJob(jobId);
    expect(job?.stalledCounter).toBe(1);
    const [run] = await listRuns(d.redis, d.prefix, { feed: 'big', limit: 5 });
    expect(run).toMatchObject({ jobId, outcome: 'ok' });
    // The second worker created only what the first had not.
    expect((run!.report as { counts: { created: number } }).counts.created).toBeLessThanOrEqual(40 - leftByA);
  }, 180_000); // (worker processes: over 40 s on a loaded machine)

  it('two workers share ten feeds and each feed runs exactly once', async () => {
    const emu = (d.emu = await startTestEmulator({ latencyMs: 5 }));
    const feeds = Array.from({ length: 10 }, (_, i) => ({ name: `f${i}`, chatbot: `SN-F${i}`, rows: 4 }));
    const file = await writeConfig(feeds, { concurrency: 2 });
    await Promise.all([d.start(file), d.start(file)]);
    const jobs = [];
    for (const f of feeds) jobs.push(await enqueueJob(d.redis, d.queues, 'sync', f.name, { feed: f.name }));
    expect(jobs.every((j) => j.status === 'queued')).toBe(true);
    for (const j of jobs) expect((await waitForJob(d.redis, d.queues, 'sync', j.jobId)).state).toBe('completed');
    for (const f of feeds) {
      const runs = await listRuns(d.redis, d.prefix, { feed: f.name, limit: 10 });
      expect(runs.map((r) => r.outcome)).toEqual(['ok']);
      const listings = await emu.listings(f.chatbot);
      expect(listings).toHaveLength(4);
    }
    const stats = await emu.stats();
    expect(stats.requests['/chat/Chatbot/RealEstateCreate']).toEqual({ '200': 40 });
    // Both processes worked: each logged runs of its own.
    const ran = d.workers.map((w) => (w.logs().match(/"msg":"synced f\d/g) ?? []).length);
    expect(ran.reduce((a, b) => a + b, 0)).toBe(10);
  }, 180_000); // (worker processes: over 40 s on a loaded machine)
});
