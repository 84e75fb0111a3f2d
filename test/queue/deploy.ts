// A deployment on disk for multi-process tests: CSV (or URL) feeds and a feedsync.yaml pointing at a
// test emulator and a unique Redis prefix, ready for `spawnWorker`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { LoggedRequest } from '../../src/emulator/stats.js';
import { closeQueues, createQueues } from '../../src/queue/queues.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { redisSettings } from '../../src/redis/settings.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { emulatorAdmin, startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { REDIS_URL, uniquePrefix } from './helpers.js';

export interface DeployFeed {
  name: string;
  chatbot: string;
  /** rows of a CSV file written beside the config */
  rows?: number;
  /** number of the first row (MLS numbers differ between feeds of one chatbot) */
  from?: number;
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
  /** the fields of the config's `redis` section but the prefix (YAML): the shared test Redis's `url` by default */
  redis?: string;
  /** worker settings over the test defaults (short locks: a killed worker's job is taken over fast); undefined: the config's default */
  worker?: Record<string, number | undefined>;
}

export async function writeDeployment(feeds: DeployFeed[], o: DeployOptions): Promise<string> {
  const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
  const parts: string[] = [];
  for (const f of feeds) {
    if (!f.url) await writeFile(join(o.dir, `${f.name}.csv`), csv(rows(f.rows ?? 1, f.from)));
    const where = f.url ? `url: "${f.url}"` : `path: ${f.name}.csv`;
    parts.push(`  - name: ${f.name}
    chatbot: ${f.chatbot}
    source: { kind: csv, ${where}${f.sourceExtra ? `, ${f.sourceExtra}` : ''} }
    mapping: ${mapping}
${f.schedule ? `    schedule: { cron: "${f.schedule}" }\n` : ''}`);
  }
  const worker = {
    lockDurationMs: 2000,
    stalledIntervalMs: 1000,
    shutdownTimeoutMs: 3000,
    concurrency: 2,
    watchdogSeconds: 60,
    minScheduleIntervalSeconds: 1,
    ...o.worker,
  };
  const file = join(o.dir, 'feedsync.yaml');
  await writeFile(
    file,
    `api: { baseUrl: "${o.apiUrl}", secretKey: ${o.secretKey}, sessionKey: ${o.sessionKey}${o.api ? `, ${o.api}` : ''} }
redis: { ${o.redis ?? `url: "${REDIS_URL}"`}, prefix: ${o.prefix} }
worker: { ${Object.entries(worker)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')} }
feeds:
${parts.join('')}`,
  );
  return file;
}

/**
 * One feed of one row into `chatbot`, against a test emulator, on the Redis `redis` names (the
 * config's redis fields but the prefix, which is new), in a fresh folder; its cleanups go on
 * `cleanups`. Returns the config file.
 */
export async function oneFeedDeployment(
  redis: string,
  cleanups: Array<() => Promise<unknown>>,
  o: { name: string; chatbot: string; worker?: DeployOptions['worker'] },
): Promise<string> {
  const emu = await startTestEmulator();
  cleanups.push(() => emu.close());
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-deploy-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return writeDeployment([{ name: o.name, chatbot: o.chatbot, rows: 1 }], {
    dir,
    prefix: uniquePrefix(),
    apiUrl: emu.url,
    secretKey: TEST_SECRET_KEY,
    sessionKey: TEST_SESSION_KEY,
    redis,
    ...(o.worker && { worker: o.worker }),
  });
}

/** A connection to the Redis a deployment's config names and its queues, for a test to enqueue and look through; `close` closes both. */
export async function deploymentQueues(file: string) {
  const settings = redisSettings(await loadConfig(file));
  const ops = createRedis(settings, { name: 'feedsync-test-ops' });
  ops.on('error', () => {});
  const queues = createQueues(ops, settings.prefix);
  const close = async () => {
    await closeQueues(queues);
    await closeRedis(ops);
  };
  return { ops, queues, prefix: settings.prefix, close };
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

/** The emulator's request log: each request's arrival time, path and status. */
export async function requestLog(emu: { url: string }): Promise<LoggedRequest[]> {
  return (await emulatorAdmin<{ requests: LoggedRequest[] }>(emu.url, 'GET', '/__emulator/requests')).requests;
}
