// The marks of the job schedulers a worker's start removed, its config no longer planning them
// (`<prefix>:schedules-removed`, a sorted set: scheduler id → when it was removed, millis). The watch
// of a worker still running an older config that plans one (a rolling deploy) finds it missing and
// would write it back as lost, and run its tick; a mark tells it not to (schedule-watch.ts).
//
// A mark matters only while a worker of a config that plans the scheduler still runs: a rollout,
// minutes to hours. So it lasts a week (REMOVED_MARK_MS), and goes sooner when a config plans the
// scheduler again (its start unmarks it). Each start drops the marks past that age, so the set holds
// at most the schedulers removed in the last week, however many were ever removed; the watch reads
// the marks of the schedulers it finds missing alone (one ZSCORE each), and counts none past that
// age, whether or not a start has dropped it yet.
import type { RedisClient } from '../redis/connection.js';
import { keysOf } from '../redis/keys.js';

/** How long a removed scheduler's mark keeps an old-config worker's watch from writing it back. */
export const REMOVED_MARK_MS = 7 * 24 * 3600 * 1000;

/**
 * A start: unmark the schedulers its config plans (planned again: lost, one is written again) and
 * drop the marks past REMOVED_MARK_MS.
 */
export async function unmarkPlanned(redis: RedisClient, root: string, planned: readonly string[]): Promise<void> {
  const key = keysOf(root).schedulesRemoved;
  if (planned.length > 0) await redis.zrem(key, ...planned);
  await redis.zremrangebyscore(key, '-inf', `(${Date.now() - REMOVED_MARK_MS}`);
}

/** A start, before it removes a scheduler: marked first, so that a watch finding it missing finds the mark too. */
export async function markRemoved(redis: RedisClient, root: string, id: string): Promise<void> {
  await redis.zadd(keysOf(root).schedulesRemoved, Date.now(), id);
}

/** The watch: which of these schedulers (found missing) a start removed less than REMOVED_MARK_MS ago. */
export async function removedOf(redis: RedisClient, root: string, ids: readonly string[]): Promise<Set<string>> {
  const key = keysOf(root).schedulesRemoved;
  const since = Date.now() - REMOVED_MARK_MS;
  const at = await Promise.all(ids.map((id) => redis.zscore(key, id)));
  return new Set(ids.filter((_, i) => at[i] !== null && Number(at[i]) >= since));
}
