// Issue 55 point 2: a crash costs only the unfinished lanes. A routed feed is one job; its lanes
// (one per chatbot) settle one after another, each committing its state on its own. A worker
// SIGKILLed after K of the N lanes committed: another worker takes the job over (BullMQ's stalled
// check) and pages, reads for and writes into only the N − K chatbots whose lanes were not
// committed; each chatbot ends as the feed says, nothing deleted twice beyond the call in flight,
// and the job's report counts the lanes the earlier attempt had done instead of listing them as
// unchanged. Counted at the emulator (its list calls by SerialNumber), on `feedsync worker`
// processes and the real Redis; nothing is timed.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enqueueJob, waitForJob } from '../../src/queue/index.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { fingerprintNamespace } from '../../src/sync/model/state-names.js';
import { laneId } from '../../src/sync/read/lanes.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { REDIS_URL, until } from './helpers.js';
import { runningOn, takenOver, useDeployment } from './use-deployment.js';

const d = useDeployment();

/** chatbots of the routed feed (its lanes) */
const N = 6;
const CHATBOTS = Array.from({ length: N }, (_, i) => `SN-L${i + 1}`);
const ROWS = 20;
/** rows the second tick's feed no longer has: each lane deletes them one call at a time, in its settle step */
const GONE = 2;
/** the emulator's latency in the second tick: a lane's settle takes GONE of it, so the kill falls between lanes */
const LATENCY_MS = 250;

describe('a routed feed whose worker is killed after some of its lanes committed', () => {
  it('the job taken over pages and writes only the chatbots whose lanes were not committed', async () => {
    /** list calls per chatbot, and the time each arrived */
    const lists: Array<{ sn: string; at: number }> = [];
    const deletes: Array<{ sn: string; at: number }> = [];
    const emu = (d.emu = await startTestEmulator({
      onRequest: ({ path, body }) => {
        const sn = String((JSON.parse(body || '{}') as { SerialNumber?: string }).SerialNumber);
        if (path.endsWith('/RealEstateList')) lists.push({ sn, at: Date.now() });
        if (path.endsWith('/RealEstateDelete')) deletes.push({ sn, at: Date.now() });
      },
    }));
    const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
    const feedFile = join(d.dir, 'r.csv');
    await writeFile(feedFile, csv(rows(ROWS)));
    const file = join(d.dir, 'feedsync.yaml');
    await writeFile(
      file,
      `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: 1 }
redis: { url: "${REDIS_URL}", prefix: ${d.prefix} }
worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, concurrency: 1, watchdogSeconds: 60, minScheduleIntervalSeconds: 1 }
feeds:
  - name: r
    chatbots: [${CHATBOTS.map((sn) => `{ serialNumber: ${sn} }`).join(', ')}]
    source: { kind: csv, path: r.csv }
    mapping: ${mapping}
    deletes: { batchSize: 1 }
`,
    );
    const a = await d.start(file);
    const first = await enqueueJob(d.redis, d.queues, 'sync', 'feed:r', { feed: 'r' });
    expect((await waitForJob(d.redis, d.queues, 'sync', first.jobId)).state).toBe('completed');
    for (const sn of CHATBOTS) expect(await emu.listings(sn)).toHaveLength(ROWS);

    // the second tick: GONE listings to delete from each chatbot, slowly
    const gone = rows(ROWS)
      .slice(ROWS - GONE)
      .map((r) => String(r.MLSNumber));
    await writeFile(feedFile, csv(rows(ROWS - GONE)));
    emu.emulator.configure({ latencyMs: LATENCY_MS });
    const store = createRedisStore(d.redis, d.prefix);
    // a lane is committed once its state no longer holds the listings it deleted
    const committed = async () => {
      const out: string[] = [];
      for (const sn of CHATBOTS)
        if ((await store.get(fingerprintNamespace(laneId('r', sn)), gone[0]!)) === undefined) out.push(sn);
      return out;
    };
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:r2', { feed: 'r' });
    await until('the job to run on A', async () => runningOn(await d.queues.sync.getJob(jobId)) === a.proc.pid);
    await until('two lanes to commit', async () => (await committed()).length >= 2, 60_000);
    await a.kill('SIGKILL');
    const killedAt = Date.now();
    const done = await committed();
    expect(done.length).toBeGreaterThanOrEqual(2);
    // (the kill fell between lanes: some were left to do)
    expect(done.length).toBeLessThan(N);
    const unfinished = CHATBOTS.filter((sn) => !done.includes(sn));

    const job = await takenOver(d, file, jobId);

    // the rerun paged the unfinished chatbots, each of them, and none of those whose lanes were committed
    const rerunLists = lists.filter((l) => l.at >= killedAt);
    const paged = new Set(rerunLists.map((l) => l.sn));
    process.stdout.write(
      `killed after ${done.length} of ${N} lanes committed: the rerun made ${rerunLists.length} list calls, to ${paged.size} chatbots; ${deletes.length} deletes in all (${N * GONE} to make)\n`,
    );
    expect([...paged].sort()).toEqual(unfinished);
    // every chatbot as the feed says, each listing once
    const expected = rows(ROWS - GONE)
      .map((r) => String(r.MLSNumber))
      .sort();
    for (const sn of CHATBOTS) expect((await emu.listings(sn)).map((l) => l.MLSNumber).sort()).toEqual(expected);
    // each listing deleted once, beyond the one call in flight at the kill (api.concurrency 1)
    expect(deletes.length).toBeGreaterThanOrEqual(N * GONE);
    expect(deletes.length).toBeLessThanOrEqual(N * GONE + 1);
    // the report counts the lanes done before, and says what the earlier attempt did of each
    const report = job.returnvalue as {
      outcome: string;
      summary: string;
      lanes: Array<{ chatbot: string; outcome: string; doneBefore?: { deleted: number }; counts: { deleted: number } }>;
    };
    expect(report.outcome).toBe('ok');
    expect(report.summary).toContain(`${done.length} of ${N} lanes done by an earlier attempt of this job`);
    const before = report.lanes.filter((l) => l.doneBefore);
    expect(before.map((l) => l.chatbot).sort()).toEqual(done);
    for (const l of before)
      expect(l).toMatchObject({ outcome: 'ok', doneBefore: { deleted: GONE }, counts: { deleted: 0 } });
    for (const l of report.lanes.filter((x) => !x.doneBefore)) expect(l.outcome).toBe('ok');
  }, 180_000);
});
