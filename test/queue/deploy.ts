// A deployment on disk for multi-process tests: CSV (or URL) feeds and a feedsync.yaml pointing at a
// test emulator and a unique Redis prefix, ready for `spawnWorker`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { closeQueues, createQueues, type Queues } from '../../src/queue/index.js';
import type { LoggedRequest } from '../../src/emulator/stats.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from './helpers.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

export interface DeployFeed {
  name: string;
  chatbot: string;
  /** rows of a CSV file written beside the config */
  rows?: number;
  /** a feed read from this URL instead (CSV) */
  url?: string;
  /** more YAML of the source, e.g. `limits: { perSecond: 2 }` */
  sourceExtra?: string;
  schedule?: string;
}

export interface DeployOptions {
  dir: string;
  prefix: string;
  apiUrl: string;
  secretKey: string;
  sessionKey: string;
  api?: string;
  worker?: string;
}

export async function writeDeployment(feeds: DeployFeed[], o: DeployOptions): Promise<string> {
  const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
  const parts: string[] = [];
  for (const f of feeds) {
    if (!f.url) await writeFile(join(o.dir, `${f.name}.csv`), csv(rows(f.rows ?? 1)));
    const where = f.url ? `url: "${f.url}"` : `path: ${f.name}.csv`;
    parts.push(`  - name: ${f.name}
    chatbot: ${f.chatbot}
    source: { kind: csv, ${where}${f.sourceExtra ? `, ${f.sourceExtra}` : ''} }
    mapping: ${mapping}
${f.schedule ? `    schedule: { cron: "${f.schedule}" }\n` : ''}`);
  }
  const file = join(o.dir, 'feedsync.yaml');
  await writeFile(
    file,
    `api: { baseUrl: "${o.apiUrl}", secretKey: ${o.secretKey}, sessionKey: ${o.sessionKey}${o.api ? `, ${o.api}` : ''} }
redis: { url: "${REDIS_URL}", prefix: ${o.prefix} }
worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, concurrency: 2, watchdogSeconds: 60, minScheduleIntervalSeconds: 1${o.worker ? `, ${o.worker}` : ''} }
feeds:
${parts.join('')}`,
  );
  return file;
}

/** The most requests whose arrival falls in one `windowMs` window (sliding, any start). */
export function busiestWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (j < t.length && t[j]! < t[i]! + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

/**
 * A test's deployment: a temp folder, a unique Redis prefix with its queues, the worker processes
 * it starts and the emulator it sets; all cleaned up after each test.
 */
export interface Deployment {
  dir: string;
  prefix: string;
  redis: Redis;
  queues: Queues;
  workers: WorkerProcess[];
  emu?: TestEmulator;
  start(file: string): Promise<WorkerProcess>;
}

export function useDeployment(): Deployment {
  const d = { workers: [] as WorkerProcess[] } as unknown as Deployment;
  d.start = async (file) => {
    const w = await spawnWorker(file);
    d.workers.push(w);
    return w;
  };
  beforeEach(async () => {
    d.dir = await mkdtemp(join(tmpdir(), 'feedsync-deploy-'));
    d.prefix = uniquePrefix();
    d.redis = testRedis();
    d.queues = createQueues(d.redis, d.prefix);
  });
  afterEach(async () => {
    for (const w of d.workers.splice(0)) await w.kill('SIGKILL');
    await closeQueues(d.queues);
    await dropPrefix(d.redis, d.prefix);
    await d.redis.quit();
    await d.emu?.close();
    d.emu = undefined;
    await rm(d.dir, { recursive: true, force: true });
  });
  return d;
}

/** The emulator's request log: each request's arrival time, path and status. */
export async function requestLog(emu: TestEmulator): Promise<LoggedRequest[]> {
  const res = await fetch(`${emu.url}/__emulator/requests`);
  return ((await res.json()) as { requests: LoggedRequest[] }).requests;
}
