// Pushed EntityEvents (RESO RCP-028) waiting for their feed's job, coalesced in Redis. The worker's
// push listener (server/push-route.ts) accepts a batch and answers at once; a batch is kept in the
// feed's waiting hash (one field per record named: `k:<key>` of the feed's resource, `m:<MediaKey>`
// of a Media record; its value the events that named it), and one listing-sync job per feed and
// generation (`push-<feed>-<gen>`) fetches them: delayed push.coalesceMs so a burst coalesces, and
// never started sooner than push.minIntervalMs after the feed's previous push job started.
// - accept (one Lua script): the records waiting and those a job took and has not done with count
//   toward push.maxQueued; past it nothing of the batch is kept (the endpoint answers 429 with
//   Retry-After); else each is added and the generation read;
// - take (one Lua script, at the job's start): at most push.maxKeysPerJob records move from the
//   waiting hash into the feed's one taken hash (tagged with the job's generation), and the
//   generation moves on, so events accepted after the take get a job of their own (it waits behind
//   this one for the chatbot locks). The records left waiting get a job once this one ends
//   (followPushed). A retried job takes its taken hash again; a later generation's job finds a taken
//   hash an earlier job left (its retry still to come) and takes it over with the new events: one
//   taken hash a feed, whatever fails. It is deleted once the run ended without a retry to come
//   (`done`: ok, not retryable, or its last attempt), and expires after TAKEN_TTL_S in any case;
// - a job of the current generation that ended without taking (its feed was paused) is stale: the
//   next accept moves the generation on and queues a new job, so events never wait for a job that
//   will not come while pushes arrive.
import { Queue } from 'bullmq';
import type { PushedKeys } from '../feeds/reso/reso-asks.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import { QUEUE_NAMES } from './names.js';
import type { Queues } from './queues.js';

/** how long a job's taken events are kept for its retries at most */
const TAKEN_TTL_S = 24 * 3600;
/** the taken hash's field naming the generation that took it */
const GEN_FIELD = '#gen';

const ACCEPT = `
local n = redis.call('HLEN', KEYS[1])
local taken = redis.call('HLEN', KEYS[3])
if taken > 0 then taken = taken - 1 end
local new = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then new = new + 1 end
end
if n + taken + new > tonumber(ARGV[1]) then return {-1, n + taken} end
for i = 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
return {tonumber(redis.call('GET', KEYS[2]) or '0'), n + taken + new}
`;

// KEYS: waiting, gen, taken, started; ARGV: gen, max keys, ttl, now
const TAKE = `
local tg = redis.call('HGET', KEYS[3], '${GEN_FIELD}')
if tg == ARGV[1] then return redis.call('HGETALL', KEYS[3]) end
if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[1]) then return {} end
redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[4], ARGV[4], 'EX', ARGV[3])
local room = tonumber(ARGV[2])
if tg then room = room - (redis.call('HLEN', KEYS[3]) - 1) end
local w = redis.call('HGETALL', KEYS[1])
for i = 1, #w, 2 do
  if room <= 0 then break end
  redis.call('HINCRBY', KEYS[3], w[i], w[i + 1])
  redis.call('HDEL', KEYS[1], w[i])
  room = room - 1
end
if redis.call('EXISTS', KEYS[3]) == 0 then return {} end
redis.call('HSET', KEYS[3], '${GEN_FIELD}', ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return redis.call('HGETALL', KEYS[3])
`;

const DONE = `
if redis.call('HGET', KEYS[1], '${GEN_FIELD}') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

const BUMP = `
if (redis.call('GET', KEYS[1]) or '0') == ARGV[1] then redis.call('INCR', KEYS[1]) end
return tonumber(redis.call('GET', KEYS[1]) or '0')
`;

/** One pushed event, as far as feedsync keeps it: which record of the feed it names. */
export interface PushedRef {
  kind: 'record' | 'media';
  key: string;
}

export type Accepted = { status: 'queued'; waiting: number; jobId: string } | { status: 'full'; waiting: number };

export interface PushLimits {
  maxQueued: number;
  coalesceMs: number;
  minIntervalMs: number;
}

const field = (r: PushedRef) => `${r.kind === 'media' ? 'm' : 'k'}:${r.key}`;
export const pushJobId = (feed: string, gen: number) => `push-${feed}-${gen}`;

/** Keeps a batch's events (all or, past maxQueued with those taken, none) and makes sure a job will fetch them. */
export async function acceptPushed(
  redis: RedisClient,
  queues: Queues,
  prefix: string,
  feed: string,
  refs: readonly PushedRef[],
  limits: PushLimits,
): Promise<Accepted> {
  const keys = keysOf(prefix);
  const counts = new Map<string, number>();
  for (const r of refs) counts.set(field(r), (counts.get(field(r)) ?? 0) + 1);
  const args = [...counts].flatMap(([f, n]) => [f, String(n)]);
  const [gen, waiting] = (await redis.eval(
    ACCEPT,
    3,
    keys.pushWaiting(feed),
    keys.pushGeneration(feed),
    keys.pushTaken(feed),
    String(limits.maxQueued),
    ...args,
  )) as [number, number];
  if (gen < 0) return { status: 'full', waiting };
  const jobId = await ensureJob(redis, queues.sync, {
    feed,
    gen,
    delayMs: await delayOf(redis, prefix, feed, limits, limits.coalesceMs),
    genKey: keys.pushGeneration(feed),
  });
  return { status: 'queued', waiting, jobId };
}

/** A new job's delay: at least `least`, and until push.minIntervalMs after the feed's last push job started. */
async function delayOf(
  redis: RedisClient,
  prefix: string,
  feed: string,
  limits: PushLimits,
  least: number,
): Promise<number> {
  const started = Number((await redis.get(keysOf(prefix).pushStarted(feed))) ?? 0);
  return Math.max(least, started + limits.minIntervalMs - Date.now());
}

/** The job of this generation, waiting or running; a new one when it is missing; the next generation's when it ended without taking. */
async function ensureJob(
  redis: RedisClient,
  queue: Queue,
  at: { feed: string; gen: number; delayMs: number; genKey: string },
): Promise<string> {
  let gen = at.gen;
  for (;;) {
    const jobId = pushJobId(at.feed, gen);
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') {
      const next = Number(await redis.eval(BUMP, 1, at.genKey, String(gen)));
      // (another accept moved it on meanwhile: its job is that generation's)
      if (next === gen) return jobId;
      gen = next;
      continue;
    }
    // (an add whose id exists is ignored by BullMQ: two accepts at once queue one job)
    if (state === 'unknown')
      await queue.add(queue.name, { feed: at.feed, push: gen }, { jobId, delay: Math.max(0, Math.round(at.delayMs)) });
    return jobId;
  }
}

/** What a job of generation `gen` fetches: up to `maxKeys` of the events waiting when it starts (or, retried, those it took before). */
export async function takePushed(
  redis: RedisClient,
  prefix: string,
  feed: string,
  gen: number,
  maxKeys: number,
): Promise<PushedKeys> {
  const keys = keysOf(prefix);
  const flat = (await redis.eval(
    TAKE,
    4,
    keys.pushWaiting(feed),
    keys.pushGeneration(feed),
    keys.pushTaken(feed),
    keys.pushStarted(feed),
    String(gen),
    String(maxKeys),
    String(TAKEN_TTL_S),
    String(Date.now()),
  )) as string[];
  const out = { keys: [] as string[], media: [] as string[], events: 0 };
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const f = flat[i]!;
    if (f === GEN_FIELD) continue;
    (f.startsWith('m:') ? out.media : out.keys).push(f.slice(2));
    out.events += Number(flat[i + 1]);
  }
  return out;
}

/** The run of generation `gen` ended with no retry to come: its taken events go (unless a later job took them over). */
export async function donePushed(redis: RedisClient, prefix: string, feed: string, gen: number): Promise<void> {
  await redis.eval(DONE, 1, keysOf(prefix).pushTaken(feed), String(gen));
}

/**
 * After a push job: records still waiting (past push.maxKeysPerJob, or come while it ran) get their
 * job now, push.minIntervalMs after this one started, rather than only when the next push arrives.
 */
export async function followPushed(
  redis: RedisClient,
  prefix: string,
  feed: string,
  limits: PushLimits,
): Promise<string | undefined> {
  const keys = keysOf(prefix);
  if ((await redis.hlen(keys.pushWaiting(feed))) === 0) return undefined;
  const gen = Number((await redis.get(keys.pushGeneration(feed))) ?? 0);
  const queue = new Queue(QUEUE_NAMES.sync, { connection: redis, prefix });
  try {
    return await ensureJob(redis, queue, {
      feed,
      gen,
      delayMs: await delayOf(redis, prefix, feed, limits, 0),
      genKey: keys.pushGeneration(feed),
    });
  } finally {
    await queue.close();
  }
}

/** Distinct records waiting for a feed's next push job (metrics, tests). */
export async function waitingPushed(redis: RedisClient, prefix: string, feed: string): Promise<number> {
  return redis.hlen(keysOf(prefix).pushWaiting(feed));
}
