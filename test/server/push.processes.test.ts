// Issue 38, point 3: EntityEvents pushed to a `feedsync worker` process (RESO RCP-028; the producer and
// what the RCP says: test/helpers/push-producer.ts) reach the chatbot through one coalesced job per
// feed that fetches each named record from the source by key: no pull of any kind. Real HTTP into the
// worker, the RESO test server (test/helpers/reso-server.ts) as the source, the emulator as the
// Chatbot Service, and the local Redis.
import '../setup/needs-redis.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, createQueues, enqueueJob, waitForJob, type Queues } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { entityEvent, push, pushRaw } from '../helpers/push-producer.js';
import { startResoServer, type ResoRequest, type ResoServer } from '../helpers/reso-server.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix, until } from '../queue/helpers.js';
import { spawnWorker, type WorkerProcess } from '../queue/worker-process.js';
import { keyedResoRecords } from '../sync/helpers/reso-records.js';

const TOKEN = 'push-token-3f9a1c7e5b2d4a6f8e0c1d2e3f4a';
const WRONG = 'push-token-3f9a1c7e5b2d4a6f8e0c1d2e3f4b';

let dir: string;
let prefix: string;
let redis: Redis;
let queues: Queues;
let emu: TestEmulator;
let server: ResoServer;
let worker: WorkerProcess;

function feed(name: string, sn: string, push: string): string {
  return `  - name: ${name}
    chatbot: ${sn}
    source: { kind: reso, url: "${server.url}", incremental: true, changes: timestamps, retries: 0, timeoutMs: 10000, photosTimestampField: null }
    mapping: { preset: reso, fields: { MLSNumber: { from: ListingKey }, Url: { template: "https://broker.test/l/{ListingKey}" } } }
    deletes: { maxFraction: 0.5, maxCount: 100 }
    push: { token: ${TOKEN}, ${push} }
`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedsync-push-'));
  prefix = uniquePrefix();
  redis = testRedis();
  queues = createQueues(redis, prefix);
  emu = await startTestEmulator();
  server = await startResoServer({ records: keyedResoRecords(12, 382), maxPageSize: 10 });
  const yaml = `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 2000, watchdogSeconds: 60 }
push: { port: 0 }
feeds:
${feed('mls', 'SN-P1', 'coalesceMs: 200')}${feed('tight', 'SN-P2', 'maxQueued: 3, maxBodyBytes: 2048, coalesceMs: 600000, retryAfterSeconds: 45')}${feed('burst', 'SN-P3', 'coalesceMs: 10000')}`;
  await writeFile(join(dir, 'feedsync.yaml'), yaml);
  worker = await spawnWorker(join(dir, 'feedsync.yaml'));
}, 90_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await closeQueues(queues);
  await dropPrefix(redis, prefix);
  await redis.quit();
  await emu?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const endpoint = (name: string) => `http://127.0.0.1:${worker.pushPort}/reso/events/${name}`;
const held = async (sn: string) => new Map((await emu.listings(sn)).map((l) => [String(l.MLSNumber), l]));

interface PushReport {
  outcome: string;
  message?: string;
  counts: { created: number; updated: number; deleted: number };
  deletedByReason?: Record<string, number>;
  source: { mode?: string; events?: { read: number; keys: number; fetched: number; gone: number; pushed?: boolean } };
}

async function finished(jobId: string): Promise<PushReport> {
  const done = await waitForJob(redis, queues, 'sync', jobId, AbortSignal.timeout(60_000));
  if (done.state !== 'completed') throw new Error(`job ${jobId} failed: ${done.failedReason}`);
  return done.returnvalue as PushReport;
}

/** A request that asks the Property resource for records by key (the by-key lookup), and nothing else. */
function byKey(r: ResoRequest): boolean {
  const path = new URL(r.url, 'http://x').pathname;
  return (
    path.endsWith('/Property') &&
    /ListingKey eq '/.test(r.filter ?? '') &&
    !/ModificationTimestamp/.test(r.filter ?? '') &&
    r.orderby === undefined
  );
}

const keysAsked = (rs: readonly ResoRequest[]) =>
  rs.flatMap((r) => [...(r.filter ?? '').matchAll(/ListingKey eq '([^']+)'/g)].map((m) => m[1]!));

describe('POST /reso/events/<feed> on feedsync worker', () => {
  it('a pushed create and change reach the chatbot by key alone; a pushed delete of a key the source holds deletes nothing; a key the source no longer has is deleted; a forged key writes nothing', async () => {
    const first = await enqueueJob(redis, queues, 'sync', 'mls', { feed: 'mls' });
    expect((await finished(first.jobId)).outcome).toBe('ok');
    expect((await held('SN-P1')).size).toBe(12);

    const template = server.records[0]!;
    server.records = [
      ...server.records,
      { ...template, ListingKey: 'K-NEW', ListingId: 'L-NEW', ModificationTimestamp: new Date().toISOString() },
    ];
    server.touch('K-03', { ListPrice: 333_333 });
    let before = server.requests.length;
    const created = await push(endpoint('mls'), TOKEN, [entityEvent('K-NEW'), entityEvent('K-03')], {
      EntityEventSource: 'test MLS',
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ accepted: 2, ignored: 0 });
    const r1 = await finished(String(created.body.jobId));
    expect(r1.outcome, r1.message).toBe('ok');
    expect(r1.counts).toMatchObject({ created: 1, updated: 1, deleted: 0 });
    expect(r1.source.events).toMatchObject({ read: 2, keys: 2, fetched: 2, gone: 0, pushed: true });
    let now = await held('SN-P1');
    expect(now.has('K-NEW')).toBe(true);
    expect(now.get('K-03')!.SalePrice).toBe(333_333);
    // by key, and nothing else: no full or incremental pull, no EntityEvent poll
    let asked = server.requests.slice(before);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((r) => !byKey(r))).toEqual([]);
    expect(new Set(keysAsked(asked))).toEqual(new Set(['K-NEW', 'K-03']));

    // a "delete" pushed for a key the source still holds: an event is a hint, the record says it is there
    before = server.requests.length;
    const stale = await push(endpoint('mls'), TOKEN, entityEvent('K-04'));
    expect(stale.status).toBe(202);
    const r2 = await finished(String(stale.body.jobId));
    expect(r2.outcome, r2.message).toBe('ok');
    expect(r2.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect((await held('SN-P1')).size).toBe(13);
    expect(server.requests.slice(before).every(byKey)).toBe(true);

    // gone from the source: deleted under the guards (the source's word, `removed`); a forged key the source never had writes nothing
    server.remove('K-05');
    before = server.requests.length;
    const gone = await push(endpoint('mls'), TOKEN, [entityEvent('K-05'), entityEvent('K-FORGED')]);
    const r3 = await finished(String(gone.body.jobId));
    expect(r3.outcome, r3.message).toBe('ok');
    expect(r3.counts).toMatchObject({ created: 0, updated: 0, deleted: 1 });
    expect(r3.deletedByReason).toEqual({ removed: 1 });
    expect(r3.source.events).toMatchObject({ keys: 2, fetched: 0, gone: 2 });
    now = await held('SN-P1');
    expect(now.size).toBe(12);
    expect(now.has('K-05')).toBe(false);
    expect(now.has('K-FORGED')).toBe(false);
    asked = server.requests.slice(before);
    expect(asked.every(byKey)).toBe(true);
  }, 120_000);

  it('401 for a wrong, missing or malformed token and for a feed without push; the token is never logged', async () => {
    const wrong = await push(endpoint('mls'), WRONG, entityEvent('K-01'));
    expect(wrong.status).toBe(401);
    expect((await push(endpoint('mls'), undefined, entityEvent('K-01'))).status).toBe(401);
    expect((await push(endpoint('mls'), `${TOKEN} extra`, entityEvent('K-01'))).status).toBe(401);
    expect((await push(endpoint('nosuchfeed'), TOKEN, entityEvent('K-01'))).status).toBe(401);
    // the right token, another feed's path: that feed's token (the same here) is what counts, and it works
    expect((await push(endpoint('tight'), TOKEN, { ResourceName: 'Property' })).status).toBe(400);
    expect(worker.logs()).toMatch(/push refused/);
    expect(worker.logs()).not.toContain(TOKEN);
    expect(worker.logs()).not.toContain(WRONG);
  }, 60_000);

  it('429 with Retry-After once more than push.maxQueued records wait (nothing of that batch kept); an event for a record already waiting is coalesced; 413 past push.maxBodyBytes', async () => {
    const ok = await push(endpoint('tight'), TOKEN, [entityEvent('K-01'), entityEvent('K-02'), entityEvent('K-01')]);
    expect(ok.status).toBe(202);
    expect(ok.body.waiting).toBe(2);
    const full = await push(endpoint('tight'), TOKEN, [entityEvent('K-03'), entityEvent('K-04')]);
    expect(full.status).toBe(429);
    expect(full.retryAfter).toBe('45');
    // (K-03 was not kept: it fits alone, so the waiting count shows the refused batch left nothing)
    const fits = await push(endpoint('tight'), TOKEN, [entityEvent('K-03'), entityEvent('K-02')]);
    expect(fits.status).toBe(202);
    expect(fits.body.waiting).toBe(3);
    expect(fits.body.jobId).toBe(ok.body.jobId);
    expect((await push(endpoint('tight'), TOKEN, entityEvent('K-09'))).status).toBe(429);

    const big = JSON.stringify({ value: Array.from({ length: 40 }, (_, i) => entityEvent(`K-BIG-${i}`)) });
    expect(big.length).toBeGreaterThan(2048);
    const tooLarge = await pushRaw(endpoint('tight'), TOKEN, big);
    expect(tooLarge.status).toBe(413);
    expect((await pushRaw(endpoint('tight'), TOKEN, '{"value": [')).status).toBe(400);
    expect(
      (await pushRaw(endpoint('tight'), TOKEN, JSON.stringify(entityEvent('K-01')), { 'content-type': 'text/plain' }))
        .status,
    ).toBe(415);
  }, 60_000);

  it('a burst of 50 events for 5 keys makes one job, which fetches the 5 records by key', async () => {
    const keys = ['K-01', 'K-02', 'K-03', 'K-04', 'K-06'];
    const before = server.requests.length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => push(endpoint('burst'), TOKEN, entityEvent(keys[i % 5]!))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(202));
    const jobIds = new Set(answers.map((a) => a.body.jobId));
    expect(jobIds.size).toBe(1);
    const report = await finished(String([...jobIds][0]));
    expect(report.outcome, report.message).toBe('ok');
    expect(report.source.events).toMatchObject({ read: 50, keys: 5, fetched: 5, gone: 0 });
    expect(report.counts.created).toBe(5);
    expect([...(await held('SN-P3')).keys()].sort()).toEqual(keys);
    const asked = server.requests.slice(before);
    expect(asked.every(byKey)).toBe(true);
    expect(keysAsked(asked).sort()).toEqual(keys);
    const pushJobs = (await queues.sync.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter((j) =>
      j.id?.startsWith('push-burst-'),
    );
    expect(pushJobs).toHaveLength(1);
    await until('nothing waiting', async () => (await redis.hlen(`${prefix}:push:burst:waiting`)) === 0);
  }, 120_000);
});
