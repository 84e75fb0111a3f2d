// A feedsync deployment on one of the test topologies: a CSV feed and a chatbot (settings, a smoke
// session) on a test emulator, a config whose `redis` section is the topology's, an in-process
// worker running the real jobs, and an ops connection made the way the commands make theirs.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWorker, type RunningWorker } from '../../src/cli/worker.js';
import { loadConfig } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import {
  closeQueues,
  closeRedis,
  createQueues,
  createRedis,
  enqueueJob,
  redisSettings,
  waitForJob,
  type Finished,
  type JobKind,
  type Queues,
  type RedisClient,
  type RedisSettings,
} from '../../src/queue/index.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';

export const FEED = 'homes';

export interface Deployment {
  dir: string;
  file: string;
  loaded: LoadedConfig;
  settings: RedisSettings;
  chatbot: string;
  /** the ops connection (as `feedsync runs` makes it) and the queues on it */
  ops: RedisClient;
  queues: Queues;
  worker?: RunningWorker;
  startWorker(): Promise<RunningWorker>;
  /** enqueue a job as `feedsync enqueue` does and wait for its end */
  run(kind: JobKind, data: Record<string, unknown>, target: string): Promise<Finished & { jobId: string }>;
  writeFeed(n: number): Promise<void>;
  close(): Promise<void>;
}

/** `redis` is the YAML of the config's redis section (its lines, indented under `redis:`). */
export async function deploy(
  emu: TestEmulator,
  redis: string[],
  opts: { rows?: number; worker?: string } = {},
): Promise<Deployment> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-topology-'));
  const chatbot = `SN-${randomUUID().slice(0, 8)}`;
  const session = await emu.session(chatbot);
  const d = { dir, chatbot } as Deployment;
  d.writeFeed = (n) => writeFile(join(dir, `${FEED}.csv`), csv(rows(n)));
  await d.writeFeed(opts.rows ?? 5);
  d.file = join(dir, 'feedsync.yaml');
  await writeFile(
    d.file,
    [
      `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, retries: 2, ratePerSecond: 2000 }`,
      'redis:',
      ...redis.map((l) => `  ${l}`),
      `worker: { lockDurationMs: 3000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, watchdogSeconds: 60, ${opts.worker ?? ''} }`,
      'chatbots:',
      `  - serialNumber: ${chatbot}`,
      '    settings: { Name: Topology Test Realty }',
      `    smoke: { sessionId: ${session}, message: "Any homes in Austin?", stream: false }`,
      'feeds:',
      `  - name: ${FEED}`,
      `    chatbot: ${chatbot}`,
      `    source: { kind: csv, path: ${FEED}.csv, limits: { perSecond: 500 } }`,
      `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
      '',
    ].join('\n'),
  );
  d.loaded = await loadConfig(d.file);
  d.settings = redisSettings(d.loaded);
  d.ops = createRedis(d.settings, { name: 'feedsync-test-ops' });
  d.ops.on('error', () => {});
  d.queues = createQueues(d.ops, d.settings.prefix);
  d.startWorker = async () =>
    (d.worker = await startWorker(d.loaded, {
      port: 0,
      logger: process.env.TOPO_LOG
        ? (await import('../../src/log.js')).createLogger({
            level: 'debug',
            destination: (await import('node:fs')).createWriteStream(process.env.TOPO_LOG),
            pretty: false,
          })
        : silentLogger,
    }));
  d.run = async (kind, data, target) => {
    const { jobId } = await enqueueJob(d.ops, d.queues, kind, target, data);
    return { jobId, ...(await waitForJob(d.ops, d.queues, kind, jobId)) };
  };
  d.close = async () => {
    await d.worker?.close();
    await closeQueues(d.queues);
    await closeRedis(d.ops);
    await rm(dir, { recursive: true, force: true });
  };
  return d;
}
