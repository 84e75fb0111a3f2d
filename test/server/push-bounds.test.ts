// Issue 49, points 4 and 5: pushed EntityEvents (RESO RCP-028; the producer: test/helpers/push-producer.ts)
// bounded end to end, and a push listener that answers nothing else. A worker started in-process with
// the real jobs, real HTTP into it, the RESO test server (test/helpers/reso-server.ts) as the source, the
// emulator as the Chatbot Service (its list endpoint's MLSNumber filter: the spec's "Filter by MLS
// number", endpoint 5), and the local Redis.
import '../setup/needs-redis.js';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { createLogger } from '../../src/log.js';
import {
  acceptPushed,
  closeQueues,
  createQueues,
  donePushed,
  enqueueJob,
  takePushed,
  waitForJob,
  type Queues,
} from '../../src/queue/index.js';
import {
  startTestEmulator,
  sampleListing,
  TEST_SECRET_KEY,
  TEST_SESSION_KEY,
  type TestEmulator,
} from '../helpers/emulator.js';
import { entityEvent, push, pushRaw, RESO_CONTEXT } from '../helpers/push-producer.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix, until } from '../queue/helpers.js';
import { keyedResoRecords } from '../sync/helpers/reso-records.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const TOKEN = 'push-token-7c1e9a3f5b2d4e6a8c0f1b3d5e7a9c2e';
const WRONG = 'push-token-7c1e9a3f5b2d4e6a8c0f1b3d5e7a9c2f';

let prefix: string;
let redis: Redis;
let queues: Queues;
let emu: TestEmulator;
let server: ResoServer;
let worker: RunningWorker;
let logs = '';
/** an address of this machine that is not loopback (the peer of a request from "elsewhere") */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && !a.internal && a.family === 'IPv4')?.address;

function feed(name: string, sn: string, push: string, extra = ''): string {
  return `  - name: ${name}
    chatbot: ${sn}
    source: { kind: reso, url: "${server.url}", incremental: true, changes: timestamps, retries: 0, timeoutMs: 10000, photosTimestampField: null${extra} }
    mapping: { preset: reso, fields: { MLSNumber: { from: ListingKey }, Url: { template: "https://broker.test/l/{ListingKey}" } } }
    deletes: { maxFraction: 0.5, maxCount: 100 }
    push: { token: ${TOKEN}, coalesceMs: 100, minIntervalMs: 0, ${push} }
`;
}

beforeAll(async () => {
  prefix = uniquePrefix();
  redis = testRedis();
  queues = createQueues(redis, prefix);
  emu = await startTestEmulator();
  server = await startResoServer({ records: keyedResoRecords(12, 491), maxPageSize: 10 });
  const yaml = `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, pageSize: 20 }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { host: 0.0.0.0, shutdownTimeoutMs: 2000, watchdogSeconds: 60 }
push: { port: 0, host: 0.0.0.0 }
feeds:
${feed('mls', 'SN-B1', 'maxQueued: 50')}${feed('grace', 'SN-B2', 'maxQueued: 50').replace('maxCount: 100 }', 'maxCount: 100, graceHours: 1 }')}${feed('capped', 'SN-B3', 'maxKeysPerJob: 3')}${feed('urls', 'SN-B4', '').replace('chatbot: SN-B4', 'chatbot: SN-B4\n    keyBy: URL')}`;
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  worker = await startWorker(loadedConfig(yaml), { port: 0, logger: createLogger({ level: 'info', destination }) });
  for (const name of ['mls', 'grace', 'urls']) {
    const first = await enqueueJob(redis, queues, 'sync', name, { feed: name });
    expect((await finished(first.jobId)).outcome).toBe('ok');
  }
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await closeQueues(queues);
  await dropPrefix(redis, prefix);
  await redis.quit();
  await emu?.close();
  await server?.close();
});

const endpoint = (name: string, port = worker.pushPort ?? worker.port) =>
  `http://127.0.0.1:${port}/reso/events/${name}`;
const held = async (sn: string) => new Map((await emu.listings(sn)).map((l) => [String(l.MLSNumber), l]));
const listCalls = async () =>
  Object.values((await emu.stats()).requests['/chat/Chatbot/RealEstateList'] ?? {}).reduce((a, b) => a + b, 0);

interface PushReport {
  outcome: string;
  message?: string;
  counts: { created: number; updated: number; deleted: number; waitingGrace: number };
  source: { events?: { read: number; keys: number; fetched: number; gone: number } };
}

async function finished(jobId: string): Promise<PushReport> {
  const done = await waitForJob(redis, queues, 'sync', jobId, AbortSignal.timeout(60_000));
  if (done.state !== 'completed') throw new Error(`job ${jobId} failed: ${done.failedReason}`);
  return done.returnvalue as PushReport;
}

describe('a push job reads only what was pushed', () => {
  it('one pushed event costs O(1) list calls, however many listings the chatbot holds', async () => {
    // 200 listings more than the feed's 12: paged whole at PageSize 20, 11 list calls or more
    for (let i = 0; i < 200; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          emu.api.createListing(
            sampleListing({ SerialNumber: 'SN-B1', MLSNumber: `O-${i + j}`, Url: `https://o.test/${i + j}` }),
          ),
        ),
      );
    }
    server.touch('K-03', { ListPrice: 313_131 });
    const before = await listCalls();
    const answer = await push(endpoint('mls'), TOKEN, entityEvent('K-03'));
    expect(answer.status).toBe(202);
    const report = await finished(String(answer.body.jobId));
    expect(report.outcome, report.message).toBe('ok');
    expect(report.counts).toMatchObject({ created: 0, updated: 1, deleted: 0 });
    expect((await held('SN-B1')).get('K-03')!.SalePrice).toBe(313_131);
    // the key's copies (one filtered call) and the chatbot's count (one call of one listing)
    expect((await listCalls()) - before).toBeLessThanOrEqual(2);
  }, 120_000);

  it('a forged push deletes nothing: not a listing this feed never wrote, and under graceHours not at once', async () => {
    await emu.api.createListing(
      sampleListing({ SerialNumber: 'SN-B1', MLSNumber: 'X-FOREIGN', Url: 'https://elsewhere.test/x' }),
    );
    const forged = await push(endpoint('mls'), TOKEN, entityEvent('X-FOREIGN'));
    const r1 = await finished(String(forged.body.jobId));
    expect(r1.outcome, r1.message).toBe('ok');
    expect(r1.counts.deleted).toBe(0);
    expect((await held('SN-B1')).has('X-FOREIGN')).toBe(true);
    expect(logs).toMatch(/never wrote \(X-FOREIGN\): left alone/);

    // a URL-keyed chatbot, paged whole (the list has no Url filter): the same
    await emu.api.createListing(
      sampleListing({ SerialNumber: 'SN-B4', MLSNumber: 'X-FOREIGN', Url: 'https://broker.test/l/X-FOREIGN' }),
    );
    const byUrl = await push(endpoint('urls'), TOKEN, entityEvent('X-FOREIGN'));
    const r3 = await finished(String(byUrl.body.jobId));
    expect(r3.outcome, r3.message).toBe('ok');
    expect(r3.counts.deleted).toBe(0);
    expect((await held('SN-B4')).has('X-FOREIGN')).toBe(true);

    // a listing the feed wrote, said gone by a push: its first-missing mark, no delete (graceHours 1)
    server.remove('K-07');
    const gone = await push(endpoint('grace'), TOKEN, entityEvent('K-07'));
    const r2 = await finished(String(gone.body.jobId));
    expect(r2.outcome, r2.message).toBe('ok');
    expect(r2.counts).toMatchObject({ deleted: 0, waitingGrace: 1 });
    expect((await held('SN-B2')).has('K-07')).toBe(true);
  }, 120_000);

  it('at most push.maxKeysPerJob records a job; the rest get the next job, which follows by itself', async () => {
    const keys = ['K-01', 'K-02', 'K-04', 'K-06', 'K-08'];
    const answer = await push(
      endpoint('capped'),
      TOKEN,
      keys.map((k) => entityEvent(k)),
    );
    expect(answer.status).toBe(202);
    const first = await finished(String(answer.body.jobId));
    expect(first.source.events).toMatchObject({ keys: 3, fetched: 3 });
    const jobs = await until(
      'the follow-up job done',
      async () => {
        const done = (await queues.sync.getJobs(['completed'])).filter((j) => j.id?.startsWith('push-capped-'));
        return done.length === 2 && done;
      },
      60_000,
    );
    expect(jobs.map((j) => (j.returnvalue as PushReport).source.events?.keys).sort()).toEqual([2, 3]);
    expect([...(await held('SN-B3')).keys()].sort()).toEqual(keys);
  }, 120_000);
});

describe('what the push endpoint takes', () => {
  it('a ResourceRecordKey is a string of at most 255 characters: a number (never rounded) or a longer key is refused, nothing kept', async () => {
    const big = `{"@reso.context":"${RESO_CONTEXT}","EntityEventSequence":1,"ResourceName":"Property","ResourceRecordKey":12345678901234567891}`;
    const number = await pushRaw(endpoint('capped'), TOKEN, big);
    expect(number.status).toBe(400);
    expect(String(number.body.error)).toMatch(/ResourceRecordKey is a JSON number/);
    const long = await push(endpoint('capped'), TOKEN, entityEvent('K'.repeat(256)));
    expect(long.status).toBe(400);
    expect(await redis.hlen(`${prefix}:push:capped:waiting`)).toBe(0);
  });

  it('a token shorter than 32 characters is a config error naming the field', () => {
    const yaml = `api: { baseUrl: "http://127.0.0.1:1", secretKey: k, sessionKey: s }
feeds:
${feed('short', 'SN-S', '').replace(TOKEN, 'sixteen-chars-ok')}`;
    expect(() => loadedConfig(yaml)).toThrow(/feeds\[0\]\.push\.token.*at least 32 characters/s);
  });

  it('refusals: 401 for a wrong token and an unknown feed alike, one log line a minute per address, the rest counted', async () => {
    const before = (logs.match(/push refused/g) ?? []).length;
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, () => push(endpoint('mls'), WRONG, entityEvent('K-01'))),
      ...Array.from({ length: 20 }, () => push(endpoint('nosuchfeed'), TOKEN, entityEvent('K-01'))),
    ]);
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(401));
    expect((logs.match(/push refused/g) ?? []).length - before).toBe(1);
    expect(logs).not.toContain(WRONG);
  });
});

describe('pushed events held in Redis', () => {
  it('taken events count toward maxQueued; one taken hash a feed, taken over by the next job; gone once done', async () => {
    const p = uniquePrefix();
    const limits = { maxQueued: 3, coalesceMs: 600_000, minIntervalMs: 0 };
    const ref = (key: string) => ({ kind: 'record' as const, key });
    // (queues of its own prefix: no worker takes its jobs)
    const queues = createQueues(redis, p);
    try {
      expect((await acceptPushed(redis, queues, p, 'f', [ref('a'), ref('b')], limits)).status).toBe('queued');
      expect([...(await takePushed(redis, p, 'f', 0, 10)).keys].sort()).toEqual(['a', 'b']);
      // a and b are taken, not done: 2 of 3
      expect((await acceptPushed(redis, queues, p, 'f', [ref('c'), ref('d')], limits)).status).toBe('full');
      expect((await acceptPushed(redis, queues, p, 'f', [ref('c')], limits)).status).toBe('queued');
      // job 0 stopped retryable and its retry has not come: job 1 takes its events over with c
      expect([...(await takePushed(redis, p, 'f', 1, 10)).keys].sort()).toEqual(['a', 'b', 'c']);
      expect(await redis.keys(`${p}:push:f:taken*`)).toHaveLength(1);
      // job 0's retry finds nothing; its done leaves job 1's events
      expect((await takePushed(redis, p, 'f', 0, 10)).keys).toEqual([]);
      await donePushed(redis, p, 'f', 0);
      expect(await redis.hlen(`${p}:push:f:taken`)).toBe(4);
      await donePushed(redis, p, 'f', 1);
      expect(await redis.exists(`${p}:push:f:taken`)).toBe(0);
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, p);
    }
  });

  it("a feed's next push job is queued push.minIntervalMs after the last one started, not push.coalesceMs after its event", async () => {
    const p = uniquePrefix();
    const limits = { maxQueued: 10, coalesceMs: 100, minIntervalMs: 600_000 };
    // (queues of its own prefix: no worker takes its jobs)
    const queues = createQueues(redis, p);
    try {
      const first = await acceptPushed(redis, queues, p, 'g', [{ kind: 'record', key: 'a' }], limits);
      expect((await queues.sync.getJob(first.status === 'queued' ? first.jobId : ''))!.opts.delay).toBe(100);
      await takePushed(redis, p, 'g', 0, 10);
      const next = await acceptPushed(redis, queues, p, 'g', [{ kind: 'record', key: 'b' }], limits);
      expect(next).toMatchObject({ status: 'queued', jobId: 'push-g-1' });
      // (the delay is what the config says, less the moments between the take and this accept)
      expect((await queues.sync.getJob('push-g-1'))!.opts.delay).toBeGreaterThan(500_000);
    } finally {
      await closeQueues(queues);
      await dropPrefix(redis, p);
    }
  });

  it("a job's events are dropped after its last attempt, even when it stopped retryable", async () => {
    // the source answers 503 to everything: the run stops retryable; this job has one attempt
    const down = await startResoServer({ records: keyedResoRecords(2, 7), failFirst: Array(50).fill(503) });
    const p = uniquePrefix();
    const yaml = `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${REDIS_URL}", prefix: ${p} }
worker: { shutdownTimeoutMs: 2000, watchdogSeconds: 60 }
push: { port: 0 }
feeds:
${feed('down', 'SN-D', '').replace(server.url, down.url)}`;
    const q = createQueues(redis, p);
    const w = await startWorker(loadedConfig(yaml), { port: 0, logger: createLogger({ level: 'silent' }) });
    try {
      await q.sync.add(q.sync.name, { feed: 'down', push: 0 }, { jobId: 'push-down-0', attempts: 1, delay: 500 });
      expect((await push(endpoint('down', w.pushPort ?? w.port), TOKEN, entityEvent('K-01'))).body.jobId).toBe(
        'push-down-0',
      );
      const done = await waitForJob(redis, q, 'sync', 'push-down-0', AbortSignal.timeout(60_000));
      expect(done.state).toBe('failed');
      expect(await redis.exists(`${p}:push:down:taken`)).toBe(0);
      expect(await redis.keys(`${p}:push:down:taken*`)).toEqual([]);
    } finally {
      await w.close();
      await closeQueues(q);
      await dropPrefix(redis, p);
      await down.close();
    }
  }, 90_000);
});

describe('the push listener answers nothing else; the pages answer loopback, worker.allowFrom or a login', () => {
  it('/status, /ui and /metrics are not on the push port; pushes are not on the main port', async () => {
    for (const path of ['/status', '/ui', '/metrics', '/healthz']) {
      const res = await freshFetch(`http://127.0.0.1:${worker.pushPort}${path}`);
      expect(res.status, path).toBe(404);
    }
    const main = await push(endpoint('mls', worker.port), TOKEN, entityEvent('K-01'));
    expect(main.status).toBe(404);
    expect((await freshFetch(`http://127.0.0.1:${worker.port}/status`)).status).toBe(200);
  });

  it.skipIf(!outside)(
    'a peer that is not loopback gets 403 for /status, /ui and /metrics, whatever Host it sends; /healthz answers it',
    async () => {
      for (const path of ['/status', '/ui', '/metrics']) {
        const res = await get(outside!, worker.port, path, { host: 'localhost' });
        expect(res.status, path).toBe(403);
        expect(res.body).toMatch(/worker\.allowFrom/);
      }
      expect((await freshFetch(`http://${outside}:${worker.port}/healthz`)).status).toBe(200);
    },
  );
});

/** A GET with the headers given as they are (fetch may not send a Host of the caller's choosing). */
function get(
  host: string,
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
