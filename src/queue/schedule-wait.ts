// At most one run of a job scheduler waits behind a busy lock. BullMQ adds a scheduler's next run
// as soon as a worker takes the current one, whatever that one then does, so while a long run holds
// its chatbot (a first sync of a million listings on a 5-minute cron) every tick added one more
// run waiting behind it, and once the lock was free they all ran one after another, each a paging
// of the chatbot. So a scheduler's run that finds its lock busy waits only when no other run of its
// scheduler waits; else it ends `skipped`, recorded with why (the run that waits does what it
// would have): Kubernetes' `concurrencyPolicy: Forbid`, but with one run waiting. A run
// asked for by hand (`enqueue`, the control API) is no scheduler's and always waits.
// The run that waits is marked in Redis, one key a scheduler, set in the one script that judges a
// tick (beside the lock and its line: one slot), so two workers judging two ticks at once never
// both wait. The mark (the waiting job's id) is cleared when that job takes its locks or ends
// otherwise; a tick that finds the marked job holding the busy lock (taken, the mark not yet
// cleared) takes the mark over. It expires unless renewed: the waiting job renews it each time it
// rechecks the lock (at least once a backstop delay), so a job removed while it waited, or a clear
// that failed, holds its scheduler back for one TTL at most.
import type { Job } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { delIfValue } from '../redis/del-if-value.js';
import { keysOf, lockWaitersKey } from '../redis/keys.js';
import type { RunReport, RunTarget } from './job-definition.js';
import { describe } from './run-settle.js';

/** A job scheduler: its queue and id (schedules.ts: `sync:<feed>`, `settings:<sn>`, …). */
export interface Schedule {
  queue: string;
  scheduler: string;
}

// KEYS: the scheduler's mark, the busy lock, its line of waiters; ARGV: the job, the mark's TTL ms.
// 1: the job is the scheduler's run that waits (marked, or its mark renewed); 0: another run of the
// scheduler waits, and this job leaves the lock's line.
const WAITS = `
local mark = redis.call('GET', KEYS[1])
if mark and mark ~= ARGV[1] then
  local held = redis.call('GET', KEYS[2])
  if not held or string.sub(held, 1, #mark + 1) ~= mark .. '#' then
    redis.call('ZREM', KEYS[3], ARGV[1])
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** The scheduler whose run this job is; undefined for a job asked for by hand. */
export function scheduleOf(job: Job): Schedule | undefined {
  // (a scheduler's job id: `repeat:<scheduler>:<due time in ms>`)
  const scheduler = job.repeatJobKey ?? /^repeat:(.+):\d+$/.exec(job.id ?? '')?.[1];
  return scheduler ? { queue: job.queueName, scheduler } : undefined;
}

/**
 * A scheduler's run found `lockKey` busy (and joined its line): true when it is the run of its
 * scheduler that waits behind it (now marked so, for `ttlMs`), false when another one waits (it left
 * the line: it ends, skippedTick).
 */
export async function waitsBehind(
  redis: RedisClient,
  prefix: string,
  schedule: Schedule,
  lockKey: string,
  jobId: string,
  ttlMs: number,
): Promise<boolean> {
  const mark = keysOf(prefix).scheduleWaiting(schedule.queue, schedule.scheduler);
  return (await redis.eval(WAITS, 3, mark, lockKey, lockWaitersKey(lockKey), jobId, String(ttlMs))) === 1;
}

/** A scheduler's run that took its locks, or ended without waiting: no longer its scheduler's waiting run. */
export async function doneWaiting(
  redis: RedisClient,
  prefix: string,
  schedule: Schedule,
  jobId: string,
): Promise<void> {
  // only the job's own mark is cleared
  await delIfValue(redis, keysOf(prefix).scheduleWaiting(schedule.queue, schedule.scheduler), jobId);
}

/** The report of a scheduler's run that ends because another run of its scheduler already waits behind `lock`. */
export function skippedTick(job: string, target: RunTarget, lock: string): RunReport {
  return {
    outcome: 'skipped',
    summary: `${job} ${describe(target)} skipped: a run of this schedule already waits behind the running one (lock ${lock} is busy); it does what this one would have`,
    retryable: false,
  };
}
