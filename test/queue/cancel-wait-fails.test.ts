// `feedsync cancel` waits for the job it cancelled to end. Only its --timeout passing with the job
// seen still running means "still runs N s after the cancel"; Redis failing during the wait (gone,
// or refusing its commands) is said as what it is, with another exit status, since whether the job
// stopped is then unknown.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeQueues, createQueues, enqueueJob } from '../../src/queue/index.js';
import { keysOf } from '../../src/redis/keys.js';
import { throwawayRedis, type ThrowawayRedis } from '../server/redis-server.js';
import { feedsync } from '../settings/run-cli.js';
import { homesConfigYaml } from '../sync/helpers/feed.js';
import { until } from './helpers.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const prefix = 'test-cancel-wait';
const feed = 'homes';

let server: ThrowawayRedis | undefined;
let redis: Redis;
let dir: string | undefined;
beforeEach(async () => {
  server = await throwawayRedis();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
  redis.on('error', () => {}); // (Redis is stopped or refuses on purpose)
});
afterEach(async () => {
  redis.disconnect();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = dir = undefined;
});

/** A sync job of `feed` made active on the throwaway Redis (taken by a worker that never finishes it); its id. */
async function activeJob(): Promise<string> {
  const queues = createQueues(redis, prefix);
  const { jobId } = await enqueueJob(redis, queues, 'sync', feed, { feed });
  const connection = redis.duplicate();
  const worker = new Worker(queues.sync.name, undefined, { connection, prefix, autorun: false });
  worker.on('error', () => {});
  const job = await worker.getNextJob('test-token');
  expect(job?.id).toBe(jobId);
  await worker.close(true);
  connection.disconnect();
  await closeQueues(queues);
  return jobId;
}

/** A config of `feed` on the throwaway Redis; its path. */
async function writeConfig(): Promise<string> {
  dir ??= await mkdtemp(join(tmpdir(), 'feedsync-cancel-'));
  const config = join(dir, 'feedsync.yaml');
  const top = ['redis:', `  url: ${server!.url}`, `  prefix: ${prefix}`];
  await writeFile(
    config,
    homesConfigYaml('http://127.0.0.1:9', { secretKey: 'k', sessionKey: 's' }, { top, name: feed }),
  );
  return config;
}

/** Another command against the throwaway Redis, to its end. */
const feedsyncAt = async (args: string[]) => feedsync([...args, '--config', await writeConfig()]);

/** `feedsync cancel` started against the throwaway Redis, once it has asked for the cancel; `ended` when it exits. */
async function startCancel(jobId: string, timeoutS: number) {
  const config = await writeConfig();
  const child = spawn(
    process.execPath,
    [BIN, 'cancel', '--feed', feed, '--config', config, '--timeout', String(timeoutS)],
    {
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = once(child, 'exit').then(([code]) => ({ code: code as number, stdout, stderr }));
  await until('the cancel to be asked for', async () => (await redis.exists(keysOf(prefix).cancel(jobId))) === 1);
  return { ended }; // (in an object: an async function returning the promise would wait for it)
}

describe('feedsync cancel, Redis failing while it waits', () => {
  it('Redis gone mid-wait: says Redis stopped answering and that the end is unknown, not that the job still runs', async () => {
    const jobId = await activeJob();
    const { ended } = await startCancel(jobId, 6);
    await server!.stop();
    const out = await ended;
    expect(out.stderr).not.toMatch(/still runs/);
    expect(out.stderr).toMatch(
      new RegExp(`job ${jobId}.*Redis redis://127\\.0\\.0\\.1:${server!.port}.*did not answer`),
    );
    expect(out.code).toBe(1);
  });

  // With a password set and every connection dropped while the cancel waits, Redis refuses each
  // reconnect (NOAUTH): none is ever ready again. The cancel's next look at the job fails with that
  // answer (every 2 s), and every connection it opened ends: it exited in ~12 s in some runs and never
  // (a connection BullMQ's QueueEvents had copied reconnected every second for good) in others.
  it('Redis refusing mid-wait (NOAUTH): the cancel says what Redis answered, not that the job still runs', async () => {
    const jobId = await activeJob();
    const { ended } = await startCancel(jobId, 60);
    // a password set and every connection dropped: the cancel's reconnect is refused its commands
    await redis.config('SET', 'requirepass', 'now-needed');
    await redis.client('KILL', 'TYPE', 'normal').catch(() => undefined);
    const refused = Date.now();
    const out = await ended;
    expect(out.stderr).not.toMatch(/still runs/);
    expect(out.stderr).toMatch(new RegExp(`job ${jobId}.*NOAUTH`));
    expect(out.code).toBe(1);
    // long before its --timeout: a look every 2 s, then each connection's close (1 s at most)
    expect(Date.now() - refused).toBeLessThan(10_000);
    // what to check, in the words every other command uses for a Redis refusing its credentials
    const runs = await feedsyncAt(['runs', '--feed', feed]);
    expect(runs.code).toBe(1);
    // (the fix names where the URL is written: the config's redis.url, not REDIS_URL, which is not read beside it)
    const said = /Redis \S+ refuses the user name or password \(NOAUTH[^)]*\); [^\n]*in redis\.url \([^\n]*\)/.exec(
      runs.stderr,
    )?.[0];
    expect(said, runs.stderr).toBeDefined();
    expect(out.stderr).toContain(said);
  });

  it('the job still active at the deadline, Redis answering: still runs, exit 7', async () => {
    const jobId = await activeJob();
    const out = await (await startCancel(jobId, 2)).ended;
    expect(out.stderr).toMatch(new RegExp(`job ${jobId} still runs 2 s after the cancel`));
    expect(out.code).toBe(7);
  });
});
