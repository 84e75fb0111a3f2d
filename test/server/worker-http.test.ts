// The worker's HTTP face, with the worker started in-process and an injected sync job:
// /healthz follows Redis, /metrics counts a finished sync, its listings and its API calls.
import '../setup/needs-redis.js';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import {
  closeQueues,
  createQueues,
  enqueueJob,
  waitForJob,
  loadMallocTrim,
  type JobDefinition,
  workerJob,
  type RunReport,
} from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix, until } from '../queue/helpers.js';
import { throwawayRedis, type ThrowawayRedis } from './redis-server.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

/** whether this machine's workers trim after the idle collection (glibc, koffi installed) */
const glibcTrim = 'trim' in (await loadMallocTrim());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function config(apiUrl: string, redisUrl: string, prefix: string, worker = '') {
  return loadedConfig(
    `api: { baseUrl: "${apiUrl}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${redisUrl}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 2000, watchdogSeconds: 60${worker} }
feeds:
  - name: austin
    chatbot: SN-1
    source: { kind: csv, path: feeds/austin.csv }
`,
  );
}

type Payload = { feed: string };
const fakeSync: JobDefinition<Payload> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: z.strictObject({ feed: z.string() }),
  target: (p) => ({ feed: p.feed, chatbot: 'SN-1' }),
  process: async (
    p,
    ctx,
  ): Promise<RunReport & { feed: string; finishedAt: string; counts: Record<string, number> }> => {
    await ctx.runtime.api.listListings({ SerialNumber: 'SN-1', PageNumber: 1, PageSize: 10 }, { signal: ctx.signal });
    return {
      outcome: 'ok',
      summary: `synced ${p.feed}`,
      retryable: false,
      feed: p.feed,
      finishedAt: new Date().toISOString(),
      counts: { created: 2, updated: 1, deleted: 3, failed: 0 },
    };
  },
};

async function emulator(): Promise<TestEmulator> {
  const emu = await startTestEmulator();
  cleanups.push(() => emu.close());
  return emu;
}

async function worker(loaded: ReturnType<typeof config>): Promise<RunningWorker> {
  const w = await startWorker(loaded, {
    port: 0,
    logger: silentLogger,
    jobs: { sync: workerJob(fakeSync) },
  });
  cleanups.push(() => w.close());
  return w;
}

/** a worker on the emulator and a Redis prefix of its own, with the queues to enqueue into it */
async function workerOnQueues(workerSettings = '') {
  const prefix = uniquePrefix();
  const redis = testRedis();
  cleanups.push(async () => {
    await dropPrefix(redis, prefix);
    await redis.quit();
  });
  const emu = await emulator();
  const w = await worker(config(emu.url, REDIS_URL, prefix, workerSettings));
  const queues = createQueues(redis, prefix);
  cleanups.push(() => closeQueues(queues));
  return { redis, queues, w };
}

/** A GET with its own Host header (fetch sends the URL's), as a page on another name would send it. */
const getAs = (port: number, path: string, host: string) =>
  new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });

const get = async (port: number, path: string) => {
  const res = await freshFetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, text: await res.text() };
};

describe('worker HTTP', () => {
  it('/healthz is 200 while Redis answers, 503 when it stops, 200 again when it is back', async () => {
    const redis: ThrowawayRedis = await throwawayRedis();
    cleanups.push(() => redis.stop());
    const emu = await emulator();
    const w = await worker(config(emu.url, redis.url, uniquePrefix()));

    const up = await get(w.port, '/healthz');
    expect(up.status).toBe(200);
    expect(JSON.parse(up.text)).toEqual({ ok: true, redis: 'ok', workers: 'running' });

    await redis.stop();
    const down = await until('healthz to turn 503', async () => {
      const r = await get(w.port, '/healthz');
      return r.status === 503 ? r : undefined;
    });
    expect(JSON.parse(down.text)).toMatchObject({ ok: false, workers: 'running' });
    expect(JSON.parse(down.text).redis).not.toBe('ok');

    await redis.start();
    await until('healthz to recover', async () => (await get(w.port, '/healthz')).status === 200);
  });

  it('/metrics counts a finished sync: run by job and outcome, listings, API latency, queue depths', async () => {
    const { redis, queues, w } = await workerOnQueues();

    const before = await get(w.port, '/metrics');
    expect(before.text).not.toMatch(/feedsync_runs_total\{/);
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect((await waitForJob(redis, queues, 'sync', jobId)).state).toBe('completed');

    const { status, text } = await get(w.port, '/metrics');
    expect(status).toBe(200);
    expect(text).toContain('feedsync_runs_total{job="listing-sync",outcome="ok"} 1');
    expect(text).toContain('feedsync_listings_total{feed="austin",op="created"} 2');
    expect(text).toContain('feedsync_listings_total{feed="austin",op="updated"} 1');
    expect(text).toContain('feedsync_listings_total{feed="austin",op="deleted"} 3');
    expect(text).toContain('feedsync_listings_total{feed="austin",op="failed"} 0');
    // the per-feed gauge Prometheus users alert on: time() - this > N hours
    const last = Number(/feedsync_feed_last_success_timestamp_seconds\{feed="austin"\} (\S+)/.exec(text)?.[1]);
    expect(Math.abs(last - Date.now() / 1000)).toBeLessThan(600);
    expect(text).toMatch(/feedsync_api_call_duration_seconds_count\{endpoint="list",outcome="ok"\} 1\n/);
    expect(text).toContain('feedsync_queue_jobs{queue="listing-sync",state="completed"} 1');
    expect(text).toContain('feedsync_queue_jobs{queue="settings-push",state="wait"} 0');
    // idle 2 s after its job, the worker ran one full collection (src/queue/idle-collection.ts),
    // then malloc_trim(0) where glibc and koffi are there (src/queue/malloc-trim.ts)
    const idle = await until(
      'the idle collection',
      async () => {
        const m = (await get(w.port, '/metrics')).text;
        return /^feedsync_idle_collections_total 1$/m.test(m) ? m : undefined;
      },
      10_000,
    );
    expect(idle).toMatch(new RegExp(`^feedsync_idle_trims_total ${glibcTrim ? 1 : 0}$`, 'm'));
    expect(Number(/^feedsync_idle_trim_released_bytes_total (\S+)$/m.exec(idle)?.[1])).toBeGreaterThanOrEqual(0);
  });

  it('with worker.idleCollectMs 0 collects nothing between jobs', async () => {
    const { redis, queues, w } = await workerOnQueues(', idleCollectMs: 0');
    const { jobId } = await enqueueJob(redis, queues, 'sync', 'austin', { feed: 'austin' });
    expect((await waitForJob(redis, queues, 'sync', jobId)).state).toBe('completed');
    // the default's 2 s, and as long again: a collection would have run by now
    await new Promise((r) => setTimeout(r, 4000));
    const { text } = await get(w.port, '/metrics');
    expect(text).toContain('feedsync_runs_total{job="listing-sync",outcome="ok"} 1');
    expect(text).toMatch(/^feedsync_idle_collections_total 0$/m);
    expect(text).toMatch(/^feedsync_idle_trims_total 0$/m);
  });

  it('answers its pages only to configured Host names (DNS rebinding), and forbids framing', async () => {
    const { w } = await workerOnQueues();
    const rebound = await getAs(w.port, '/status', 'evil.test:9464');
    expect(rebound.status).toBe(421);
    expect(rebound.text).not.toContain('austin');
    expect(rebound.text).toContain('worker.allowedHosts');
    expect((await getAs(w.port, '/ui', 'evil.test')).status).toBe(421);
    for (const host of [`localhost:${w.port}`, `127.0.0.1:${w.port}`, `[::1]:${w.port}`]) {
      const ok = await getAs(w.port, '/status', host);
      expect(ok.status, host).toBe(200);
      expect(ok.headers['x-frame-options']).toBe('DENY');
      expect(ok.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    }
    // probes and scrapers address the worker by IP or service name
    expect((await getAs(w.port, '/healthz', 'worker:9464')).status).toBe(200);
  });
});
