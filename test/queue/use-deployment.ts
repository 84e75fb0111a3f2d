// A deployment per test for multi-process tests (vitest hooks): see deploy.ts for the config.
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, expect } from 'vitest';
import { parseDocument } from 'yaml';
import { closeQueues, createQueues, enqueueJob, waitForJob, type Queues } from '../../src/queue/index.js';
import { parseWorkerName } from '../../src/queue/worker-identity.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { writeDeployment, type DeployFeed, type DeployOptions } from './deploy.js';
import { dropPrefix, testRedis, uniquePrefix, until } from './helpers.js';
import { spawnWorker, type WorkerProcess } from './worker-process.js';

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
  /** the config of `feeds` in this deployment (its folder, prefix and emulator, the test keys); its path */
  deploy(feeds: DeployFeed[], extra?: Pick<DeployOptions, 'api' | 'worker'>): Promise<string>;
}

export function useDeployment(): Deployment {
  const d = { workers: [] as WorkerProcess[] } as unknown as Deployment;
  d.start = async (file) => {
    const w = await spawnWorker(file);
    d.workers.push(w);
    return w;
  };
  d.deploy = (feeds, extra = {}) => {
    if (!d.emu) throw new Error('deploy: set d.emu (the emulator the config points at) first');
    return writeDeployment(feeds, {
      dir: d.dir,
      prefix: d.prefix,
      apiUrl: d.emu.url,
      secretKey: TEST_SECRET_KEY,
      sessionKey: TEST_SESSION_KEY,
      ...extra,
    });
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

/** The pid of the worker process a job runs (or ran) on, from its processedBy. */
export const runningOn = (job: Job | undefined): number | undefined => parseWorkerName(job?.processedBy)?.pid;

/** When the job's log says it started running on this worker process (processor.ts noteWorker's line). */
export async function startedOn(queues: Queues, jobId: string, w: WorkerProcess): Promise<number | undefined> {
  const { logs } = await queues.sync.getJobLogs(jobId);
  const line = logs.find((l) => l.includes(` pid ${w.proc.pid}`));
  return line ? Date.parse(line.slice(0, line.indexOf(' '))) : undefined;
}

/** the job lock of the worker that takes a killed worker's job over: long, so a loaded machine cannot lapse it */
const TAKER_LOCK_MS = 10_000;

/**
 * The sync job `jobId` of a worker killed mid-run, taken over by a worker started now (which finds
 * its holder record's process gone: src/queue/job-holders.ts) and completed: the job, found stalled once and run to its end by that worker.
 * That worker runs `file`'s config with a long job lock (TAKER_LOCK_MS): with the killed worker's
 * short one (2 s, renewed every 0.5 s) a machine at load 15 on 2 cores let its lock lapse mid-run, and
 * the job was found stalled a second time under the worker still running it (stalledCounter 2).
 */
export async function takenOver(d: Deployment, file: string, jobId: string): Promise<Job> {
  const config = parseDocument(await readFile(file, 'utf8'));
  config.setIn(['worker', 'lockDurationMs'], TAKER_LOCK_MS);
  const takerFile = join(dirname(file), `taker-${basename(file)}`);
  await writeFile(takerFile, config.toString());
  const b = await d.start(takerFile);
  const end = await waitForJob(d.redis, d.queues, 'sync', jobId);
  if (end.state !== 'completed') throw new Error(`the job did not complete: ${end.failedReason}`);
  const job = await d.queues.sync.getJob(jobId);
  // (the job's log names each worker that started it, and how often it was found stalled by then)
  const { logs } = await d.queues.sync.getJobLogs(jobId);
  expect(job?.stalledCounter, `the job's log:\n${logs.join('\n')}`).toBe(1);
  expect(runningOn(job)).toBe(b.proc.pid);
  return job!;
}

/**
 * A deployment of one feed, `homes`, of `rows` records into `chatbot` (its emulator started here, 30 ms
 * a call), whose alerts go to the webhook `hookUrl` after one failed run (alerts.rules.failedRuns: 1):
 * a stopped attempt counted as a failed run would alert at once. Returns the config's path.
 */
export async function deployAlerted(
  d: Deployment,
  o: { chatbot: string; rows: number; hookUrl: string; worker: DeployOptions['worker'] },
): Promise<string> {
  d.emu = await startTestEmulator({ chatbots: [o.chatbot], latencyMs: 30 });
  const file = await d.deploy([{ name: 'homes', chatbot: o.chatbot, rows: o.rows }], {
    api: 'concurrency: 2, ratePerSecond: 1000',
    worker: o.worker,
  });
  await appendFile(
    file,
    `alerts: { channels: [{ kind: webhook, url: "${o.hookUrl}", secret: whsec-test-alerted }], rules: { failedRuns: 1 } }\n`,
  );
  return file;
}

/** deployAlerted's deployment with one worker started and its sync under way on it (homesUnderWay). */
export async function alertedSyncUnderWay(
  d: Deployment,
  o: Parameters<typeof deployAlerted>[1],
): Promise<{ file: string; w: WorkerProcess; jobId: string }> {
  const file = await deployAlerted(d, o);
  const w = await d.start(file);
  return { file, w, jobId: await homesUnderWay(d, w, o.chatbot) };
}

/** A sync of deployAlerted's feed enqueued, run on `w` and under way (some listings written): its job id. */
export async function homesUnderWay(d: Deployment, w: WorkerProcess, chatbot: string): Promise<string> {
  const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:homes', { feed: 'homes' });
  await until('the job to run', async () => runningOn(await d.queues.sync.getJob(jobId)) === w.proc.pid);
  await until('the sync to write', async () => (await d.emu!.listings(chatbot)).length >= 10, 60_000);
  return jobId;
}
