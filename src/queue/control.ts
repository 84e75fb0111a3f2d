// Operator controls that reach every worker through Redis, from any machine:
// - pause/resume: a hash of paused feeds (`*` = all schedules); a scheduled run of a paused target
//   starts nothing (the processor asks `pausedFor` before it takes the lock); a scheduled run of a
//   group of feeds (queue/schedules.ts) runs those not paused (`pausedAmong`). Runs asked for by
//   hand (`enqueue`) still run: the operator asked for them.
// - cancel: a key per job to cancel; each worker looks for its running jobs' keys every
//   CANCEL_POLL_MS and aborts the job's signal. The sync then starts no new call, waits for the
//   calls in flight and records what they wrote, and the run ends `cancelled`.
import { hostname, userInfo } from 'node:os';
import { chatbotsOf } from '../config/feed-chatbots.js';
import type { FeedConfig } from '../config/schema.js';
import { CancelRequest } from '../errors.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { RunTarget } from './job-definition.js';

const CANCEL_POLL_MS = 500;
/** a cancel request outlives the job it names by at most this long */
const CANCEL_TTL_MS = 10 * 60_000;
export const ALL = '*';

const pausedKey = (prefix: string) => keysOf(prefix).paused;
const cancelKey = (prefix: string, jobId: string) => keysOf(prefix).cancel(jobId);

export interface Paused {
  /** feed name (or ALL) → ISO time it was paused */
  since: Map<string, string>;
}

/** who asked, for messages: user@host (the account's name where USER is not set: a container's `docker compose exec`) */
export function operator(): string {
  return `${process.env.USER ?? process.env.USERNAME ?? accountName() ?? 'someone'}@${hostname()}`;
}

/** The process's account name; undefined where it has none (a uid with no passwd entry: userInfo throws). */
function accountName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

export async function pauseFeeds(redis: RedisClient, prefix: string, feeds: string[] | typeof ALL): Promise<void> {
  const at = new Date().toISOString();
  const names = feeds === ALL ? [ALL] : feeds;
  await redis.hset(pausedKey(prefix), Object.fromEntries(names.map((n) => [n, at])));
}

/** `ALL` resumes everything: the all-schedules pause and every feed's own. */
export async function resumeFeeds(redis: RedisClient, prefix: string, feeds: string[] | typeof ALL): Promise<void> {
  if (feeds === ALL) await redis.del(pausedKey(prefix));
  else if (feeds.length) await redis.hdel(pausedKey(prefix), ...feeds);
}

export async function pausedFeeds(redis: RedisClient, prefix: string): Promise<Paused> {
  return { since: new Map(Object.entries(await redis.hgetall(pausedKey(prefix)))) };
}

/** Why a scheduled run of `target` must not start ("paused since …"), or undefined. */
export async function pausedFor(redis: RedisClient, prefix: string, target: RunTarget): Promise<string | undefined> {
  const [all, feed] = await redis.hmget(pausedKey(prefix), ALL, target.feed ?? '\0');
  if (feed) return `feed ${target.feed} is paused since ${feed}`;
  if (all) return `every schedule is paused since ${all}`;
  return undefined;
}

/** Which of `feeds` are paused on their own, each with why ("feed … is paused since …"). */
export async function pausedAmong(
  redis: RedisClient,
  prefix: string,
  feeds: readonly string[],
): Promise<Map<string, string>> {
  if (!feeds.length) return new Map();
  const since = await redis.hmget(pausedKey(prefix), ...feeds);
  return new Map(feeds.flatMap((f, i) => (since[i] ? [[f, `feed ${f} is paused since ${since[i]}`] as const] : [])));
}

/**
 * The feeds a sync job runs, from its data: its `feed`, its group's `feeds` (a scheduler of feeds due
 * together, schedules.ts), or every feed of its `chatbot` (`enqueue sync --chatbot`).
 */
export function feedsOfSyncJob(
  data: unknown,
  feeds: readonly Pick<FeedConfig, 'name' | 'chatbot' | 'chatbots'>[],
): string[] {
  const d = (data ?? {}) as { feed?: unknown; feeds?: unknown; chatbot?: unknown };
  if (typeof d.feed === 'string') return [d.feed];
  if (Array.isArray(d.feeds)) return d.feeds.filter((f): f is string => typeof f === 'string');
  const sn = d.chatbot;
  if (typeof sn === 'string') return feeds.filter((f) => chatbotsOf(f).includes(sn)).map((f) => f.name);
  return [];
}

export async function requestCancel(redis: RedisClient, prefix: string, jobId: string, by: string): Promise<void> {
  await redis.set(cancelKey(prefix, jobId), JSON.stringify({ by, at: new Date().toISOString() }), 'PX', CANCEL_TTL_MS);
}

export interface CancelWatch {
  /** aborts (reason CancelRequest) when an operator cancels the job */
  readonly signal: AbortSignal;
  done(): void;
}

/** This process's running jobs, looked up together every CANCEL_POLL_MS (one MGET) while any runs. */
export function createCancelWatcher(redis: RedisClient, prefix: string, onError: (err: unknown) => void = () => {}) {
  const running = new Map<string, AbortController>();
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    const ids = [...running.keys()];
    if (!ids.length) return;
    const values = await redis.mget(ids.map((id) => cancelKey(prefix, id)));
    values.forEach((v, i) => {
      if (!v) return;
      const by = (JSON.parse(v) as { by?: string }).by ?? 'an operator';
      running.get(ids[i]!)?.abort(new CancelRequest(by));
    });
  };
  return {
    watch(jobId: string): CancelWatch {
      const controller = new AbortController();
      running.set(jobId, controller);
      if (!timer) {
        timer = setInterval(() => void poll().catch(onError), CANCEL_POLL_MS);
        timer.unref();
      }
      return {
        signal: controller.signal,
        done() {
          running.delete(jobId);
          if (!running.size && timer) {
            clearInterval(timer);
            timer = undefined;
          }
        },
      };
    },
  };
}
export type CancelWatcher = ReturnType<typeof createCancelWatcher>;
