// The worker's HTTP face is closed by default: it listens on 127.0.0.1, the queue UI is read-only, and
// the unauthenticated POST that once forced a sync (deleting 18 of 20 listings past the guard) is
// refused — the listings are all still there. With admin access from the environment, the UI asks for
// it and then acts. /healthz and /metrics stay open.
import '../setup/needs-redis.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { silentLogger } from '../../src/log.js';
import {
  closeQueues,
  createQueues,
  workerJob,
  type JobDefinition,
  type RunReport,
  type WorkerJob,
} from '../../src/queue/index.js';
import {
  sampleListing,
  startTestEmulator,
  TEST_SECRET_KEY,
  TEST_SESSION_KEY,
  type TestEmulator,
} from '../helpers/emulator.js';
import { dropPrefix, loadedConfig, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { COLUMNS, csv, rows, SN } from '../sync/helpers/feed.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(jobs?: { sync: WorkerJob }) {
  const te: TestEmulator = await startTestEmulator();
  cleanups.push(() => te.close());
  for (let i = 1; i <= 20; i++) {
    await te.api.createListing(
      sampleListing({
        SerialNumber: SN,
        MLSNumber: `MLS${String(i).padStart(4, '0')}`,
        Url: `https://homes.test/l/${i}`,
      }),
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-ui-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'feed.csv'), csv(rows(2)));
  const prefix = uniquePrefix();
  const redis = testRedis();
  cleanups.push(async () => {
    await dropPrefix(redis, prefix);
    await redis.quit();
  });
  const loaded = loadedConfig(
    `api: { baseUrl: "${te.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { shutdownTimeoutMs: 2000 }
feeds:
  - name: homes
    chatbot: ${SN}
    source: { kind: csv, path: feed.csv }
    mapping:
      fields:
${COLUMNS.map((c) => `        ${c}: ${c}`).join('\n')}
`,
    dir,
  );
  const w: RunningWorker = await startWorker(loaded, { port: 0, logger: silentLogger, ...(jobs && { jobs }) });
  cleanups.push(() => w.close());
  const queues = createQueues(redis, prefix);
  cleanups.push(() => closeQueues(queues));
  return { te, w, queues };
}

const forceAdd = (port: number, headers: Record<string, string> = {}) =>
  freshFetch(`http://127.0.0.1:${port}/ui/api/queues/listing-sync/add`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ name: 'listing-sync', data: { feed: 'homes', force: true } }),
  });

function withEnv(vars: Record<string, string>) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  cleanups.push(async () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

describe('the worker HTTP face, closed by default', () => {
  it('refuses the unauthenticated forced sync: no job is added and every listing is still there', async () => {
    const { te, w, queues } = await setup();
    const res = await forceAdd(w.port);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/read-only.*FEEDSYNC_UI_TOKEN/);
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      expect(
        (await freshFetch(`http://127.0.0.1:${w.port}/ui/api/queues/listing-sync/clean/completed`, { method })).status,
      ).toBe(403);
    }
    // a job that slipped through would be in the queue now, in some state (the UI adds before it answers)
    const counts = await queues.sync.getJobCounts();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    expect(await te.listings(SN)).toHaveLength(20);
    // the UI itself, health and metrics still answer
    expect((await freshFetch(`http://127.0.0.1:${w.port}/ui/`)).status).toBe(200);
    expect((await freshFetch(`http://127.0.0.1:${w.port}/healthz`)).status).toBe(200);
    expect((await freshFetch(`http://127.0.0.1:${w.port}/metrics`)).status).toBe(200);
  }, 30_000);

  it('listens on 127.0.0.1 only unless worker.host says otherwise', async () => {
    const { w } = await setup();
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    expect((await freshFetch(`http://127.0.0.1:${w.port}/healthz`)).status).toBe(200);
    if (external) {
      const err = await freshFetch(`http://${external.address}:${w.port}/healthz`).then(
        () => undefined,
        (e: Error) => e,
      );
      expect((err?.cause as { code?: string } | undefined)?.code).toBe('ECONNREFUSED');
    }
  }, 30_000);

  it('with FEEDSYNC_UI_TOKEN set, /ui asks for it and then acts; health and metrics stay open', async () => {
    withEnv({ FEEDSYNC_UI_TOKEN: 'ui-admin-token-1-0123456789abcdef0123' });
    const ran: unknown[] = [];
    const fake: JobDefinition<{ feed: string; force?: boolean }> = {
      name: 'listing-sync',
      kind: 'sync',
      payload: z.looseObject({ feed: z.string(), force: z.boolean().optional() }),
      target: (p) => ({ feed: p.feed, chatbot: SN }),
      process: async (p): Promise<RunReport> => {
        ran.push(p);
        return { outcome: 'ok', summary: 'fake', retryable: false };
      },
    };
    const { w } = await setup({ sync: workerJob(fake) });
    expect((await freshFetch(`http://127.0.0.1:${w.port}/ui/`)).status).toBe(401);
    expect((await forceAdd(w.port)).status).toBe(401);
    expect((await forceAdd(w.port, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await freshFetch(`http://127.0.0.1:${w.port}/healthz`)).status).toBe(200);
    expect((await freshFetch(`http://127.0.0.1:${w.port}/metrics`)).status).toBe(200);
    const ok = await forceAdd(w.port, { authorization: 'Bearer ui-admin-token-1-0123456789abcdef0123' });
    expect(ok.status).toBe(200);
    const basic = `Basic ${Buffer.from('anyone:ui-admin-token-1-0123456789abcdef0123').toString('base64')}`;
    expect((await freshFetch(`http://127.0.0.1:${w.port}/ui/`, { headers: { authorization: basic } })).status).toBe(
      200,
    );
    for (let i = 0; i < 100 && ran.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(ran).toEqual([{ feed: 'homes', force: true }]);
  }, 30_000);
});
