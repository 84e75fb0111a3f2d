// Queue test helpers: a unique Redis prefix per test, cleaned up after; a config from YAML; a fake
// runtime for injected processors.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parseConfig } from '../../src/config/load.js';
import { RedisConfig, type LoadedConfig } from '../../src/config/schema.js';
import { redisSettingsOf, type RedisSettings } from '../../src/redis/settings.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { afterEach, beforeEach, expect } from 'vitest';
import {
  closeQueues,
  createQueues,
  listRuns,
  QUEUE_NAMES,
  type JobRuntime,
  type PlannedSchedule,
  type ProcessorDeps,
  type Queues,
  type RunRecord,
} from '../../src/queue/index.js';
import { createMemoryStore } from '../../src/state/memory-store.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniquePrefix(): string {
  return `fstest-${randomUUID().slice(0, 8)}`;
}

/** The shared test Redis under a prefix, as the worker's settings name it. */
export function redisAt(prefix: string, url = REDIS_URL): RedisSettings {
  return redisSettingsOf(RedisConfig.parse({ url, prefix }), '/tmp');
}

export function testRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** Delete every key under a prefix. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

export function feedsYaml(names: string[], extra = ''): string {
  return names
    .map((n) => `  - name: ${n}\n    chatbot: SN-${n}\n    source: { kind: csv, path: feeds/${n}.csv }\n${extra}`)
    .join('');
}

export function loadedConfig(yaml: string, dir = '/tmp'): LoadedConfig {
  return { config: parseConfig(yaml, 'test.yaml', {}), file: `${dir}/test.yaml`, dir };
}

export const fakeRuntime: JobRuntime = {
  api: new Proxy({} as JobRuntime['api'], {
    get: () => () => Promise.reject(new Error('no API in this test')),
  }),
  store: createMemoryStore(),
};

export function processorDeps(
  redis: Redis,
  prefix: string,
  config: LoadedConfig,
  extra: Partial<ProcessorDeps> = {},
): ProcessorDeps {
  return {
    config,
    runtime: fakeRuntime,
    redis,
    prefix,
    logger: silentLogger,
    historySize: 50,
    lockTtlMs: 5000,
    busyDelayMs: 200,
    ...extra,
  };
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A job a worker's shutdown stopped, as it must be left (src/queue/hand-back.ts): its run recorded
 * with `outcome`, retryable and handed back, the job back in line, waiting, with no attempt spent
 * (a shutdown is not the job's failure). Returns the run.
 */
export async function expectHandedBack(
  redis: Redis,
  queues: Queues,
  prefix: string,
  jobId: string,
  outcome: string,
): Promise<RunRecord> {
  const [run] = await listRuns(redis, prefix, { feed: 'slow', limit: 1 });
  expect(run).toMatchObject({ jobId, outcome });
  expect(run!.summary).toMatch(/handed back to the queue: its worker \(.+ pid \d+\) is shutting down/);
  expect((run!.report as { retryable?: boolean }).retryable).toBe(true);
  const job = await queues.sync.getJob(jobId);
  expect(await job!.getState()).toBe('waiting');
  expect(job!.attemptsMade).toBe(0);
  return run!;
}

/** A unique prefix and its queues on the real Redis for each test of the file (vitest hooks), dropped after. */
export function useQueues(): { redis: Redis; prefix: string; queues: Queues } {
  const q = {} as { redis: Redis; prefix: string; queues: Queues };
  beforeEach(() => {
    q.redis = testRedis();
    q.prefix = uniquePrefix();
    q.queues = createQueues(q.redis, q.prefix, {});
  });
  afterEach(async () => {
    await closeQueues(q.queues);
    await dropPrefix(q.redis, q.prefix);
    await q.redis.quit();
  });
  return q;
}

/** A nightly sync scheduler of one feed. */
export const NIGHTLY: PlannedSchedule = {
  kind: 'sync',
  id: 'sync:austin',
  pattern: '0 3 * * *',
  name: QUEUE_NAMES.sync,
  data: { feed: 'austin' },
};
/** The same, due every second (as a nightly sync is once a night). */
export const EVERY_SECOND: PlannedSchedule = { ...NIGHTLY, pattern: '* * * * * *' };

// Loses a job scheduler's next job as a partial key loss would, in one script while it is delayed
// (its id `repeat:<scheduler>:<millis>`, the millis its score in the queue's `repeat` set): `hash`
// deletes the job's hash (a key deleted by hand or evicted; its `delayed` entry stays), `entry` its
// entry in `delayed` (the hash stays, in no list), `failed` and `completed` move it to that set (as
// when the worker that took it could not make the next one). BullMQ's own calls do not: Job.remove refuses the
// scheduler's next job, clean and drain pass it over.
const LOSE_NEXT_JOB = `
local millis = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not millis then return false end
local base = string.sub(KEYS[1], 1, #KEYS[1] - #'repeat')
local jobId = 'repeat:' .. ARGV[1] .. ':' .. millis
if not redis.call('ZSCORE', base .. 'delayed', jobId) then return false end
if ARGV[2] == 'hash' then redis.call('DEL', base .. jobId) end
if ARGV[2] ~= 'hash' then redis.call('ZREM', base .. 'delayed', jobId) end
if ARGV[2] == 'failed' or ARGV[2] == 'completed' then redis.call('ZADD', base .. ARGV[2], millis, jobId) end
return jobId`;

export type LoseHow = 'hash' | 'entry' | 'failed' | 'completed';

/** Loses the scheduler's next job (LOSE_NEXT_JOB) once it is delayed; the lost job's id. */
export async function loseNextJob(
  redis: Pick<Redis, 'eval'>,
  queue: Queue,
  scheduler: string,
  how: LoseHow,
): Promise<string> {
  return until(`${scheduler}'s next job delayed, then lost`, async () => {
    const lost = (await redis.eval(LOSE_NEXT_JOB, 1, queue.toKey('repeat'), scheduler, how)) as string | null;
    return lost ?? undefined;
  });
}

/** A logger at info whose lines are kept: `warnings()`, those at warn or above, parsed. */
export function captureLogs() {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }),
  });
  const warnings = () =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => (l.level as number) >= 40);
  return { logger, warnings };
}
