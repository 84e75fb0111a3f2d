// Pushed EntityEvents (RESO RCP-028) waiting for their feed's job, coalesced in Redis. The worker's
// endpoint (server/push-route.ts) accepts a batch and answers at once; a batch is kept in the feed's
// waiting hash (one field per record named: `k:<key>` of the feed's resource, `m:<MediaKey>` of a
// Media record; its value the events that named it), and one listing-sync job per feed and
// generation (`push-<feed>-<gen>`, delayed push.coalesceMs so a burst coalesces) fetches them.
// - accept (one Lua script): past push.maxQueued distinct records waiting, nothing of the batch is
//   kept (the endpoint answers 429 with Retry-After); else each is added and the generation read;
// - take (one Lua script, at the job's start): the waiting hash becomes the generation's taken hash
//   and the generation moves on, so events accepted after the take get a job of their own (it waits
//   behind this one for the chatbot locks). A retried job takes its taken hash again; it is deleted
//   once the run ended without a retry to come (`done`), and expires after TAKEN_TTL_S in any case;
// - a job of the current generation that ended without taking (its feed was paused) is stale: the
//   next accept moves the generation on and queues a new job, so events never wait for a job that
//   will not come while pushes arrive.
import type { Queue } from 'bullmq';
import type { PushedKeys } from '../feeds/types.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';

/** how long a job's taken events are kept for its retries */
const TAKEN_TTL_S = 24 * 3600;

const ACCEPT = `
local n = redis.call('HLEN', KEYS[1])
local new = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then new = new + 1 end
end
if n + new > tonumber(ARGV[1]) then return {-1, n} end
for i = 2, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
return {tonumber(redis.call('GET', KEYS[2]) or '0'), n + new}
`;

const TAKE = `
if redis.call('EXISTS', KEYS[3]) == 1 then return redis.call('HGETALL', KEYS[3]) end
if tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[1]) then return {} end
redis.call('INCR', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('RENAME', KEYS[1], KEYS[3])
redis.call('EXPIRE', KEYS[3], ARGV[2])
return redis.call('HGETALL', KEYS[3])
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
}

const field = (r: PushedRef) => `${r.kind === 'media' ? 'm' : 'k'}:${r.key}`;
export const pushJobId = (feed: string, gen: number) => `push-${feed}-${gen}`;

/** Keeps a batch's events (all or, past maxQueued, none) and makes sure a job will fetch them. */
export async function acceptPushed(redis: RedisClient, queues: Queues, prefix: string, feed: string, refs: readonly PushedRef[], limits: PushLimits): Promise<Accepted> {
  const keys = keysOf(prefix);
  const counts = new Map<string, number>();
  for (const r of refs) counts.set(field(r), (counts.get(field(r)) ?? 0) + 1);
  const args = [...counts].flatMap(([f, n]) => [f, String(n)]);
  const [gen, waiting] = (await redis.eval(ACCEPT, 2, keys.pushWaiting(feed), keys.pushGeneration(feed), String(limits.maxQueued), ...args)) as [number, number];
  if (gen < 0) return { status: 'full', waiting };
  const jobId = await ensureJob(redis, queues.sync, { feed, gen, delayMs: limits.coalesceMs, genKey: keys.pushGeneration(feed) });
  return { status: 'queued', waiting, jobId };
}

/** The job of this generation, waiting or running; a new one when it is missing; the next generation's when it ended without taking. */
async function ensureJob(redis: RedisClient, queue: Queue, at: { feed: string; gen: number; delayMs: number; genKey: string }): Promise<string> {
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
    if (state === 'unknown') await queue.add(queue.name, { feed: at.feed, push: gen }, { jobId, delay: at.delayMs });
    return jobId;
  }
}

/** What a job of generation `gen` fetches: the events waiting when it starts (or, retried, those it took before). */
export async function takePushed(redis: RedisClient, prefix: string, feed: string, gen: number): Promise<PushedKeys> {
  const keys = keysOf(prefix);
  const flat = (await redis.eval(TAKE, 3, keys.pushWaiting(feed), keys.pushGeneration(feed), keys.pushTaken(feed, gen), String(gen), String(TAKEN_TTL_S))) as string[];
  const out = { keys: [] as string[], media: [] as string[], events: 0 };
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const f = flat[i]!;
    (f.startsWith('m:') ? out.media : out.keys).push(f.slice(2));
    out.events += Number(flat[i + 1]);
  }
  return out;
}

/** The run of generation `gen` ended with no retry to come: its taken events go. */
export async function donePushed(redis: RedisClient, prefix: string, feed: string, gen: number): Promise<void> {
  await redis.del(keysOf(prefix).pushTaken(feed, gen));
}

/** Distinct records waiting for a feed's next push job (metrics, tests). */
export async function waitingPushed(redis: RedisClient, prefix: string, feed: string): Promise<number> {
  return redis.hlen(keysOf(prefix).pushWaiting(feed));
}
