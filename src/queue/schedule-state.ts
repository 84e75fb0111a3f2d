// What Redis holds of each planned job scheduler: the scheduler, and its next job in a state that
// will yet run. Read by the watch (schedule-watch.ts) and a worker's start (schedule-sync.ts).
//
// How BullMQ 6.7 keeps a scheduler (node_modules/bullmq/dist/esm/commands/addJobScheduler-11.lua,
// updateJobScheduler-12.lua, includes/storeJobScheduler.lua; classes/job-scheduler.js
// getSchedulerNextJobId; docs.bullmq.io/guide/job-schedulers): its id is a member of the queue's
// `repeat` sorted set, scored by the millis of its next job; its definition is the hash
// `<queue>:repeat:<id>`; its next job's id is `repeat:<id>:<millis>`, so that job's hash is
// `<queue>:repeat:<id>:<millis>`, made in the same script that scores the scheduler. The next one
// after it is made only as a worker takes it (classes/worker.js, nextJobFromJobData: an upsert with
// `producerId` the taken job, which adds the next job only while the scheduler's score still names
// the taken one). So a scheduler whose next job is gone, or finished with no later one made, never
// makes a job again, and nothing says so. BullMQ's own calls do not lose it: Job.remove refuses the
// scheduler's next job (removeJob-2.lua: -8, isJobSchedulerJob), `clean` and `drain` pass it over
// (includes/cleanSet.lua, cleanList.lua, drain-5.lua); a key deleted by hand or evicted, an entry of
// `delayed` lost, or a worker that took it and could not make the next one (its upsert failed, then
// the job stalled past maxStalledCount into `failed`) do.
//
// A scheduler's own hash (`<queue>:repeat:<id>`, its definition) can be lost alone too, its score
// and next job kept: BullMQ's upsert of it then replaces that next job, due or not (addJobScheduler-11.lua
// removes it from delayed, prioritized or wait and adds one at the pattern's next time after now), and
// the worker taking that job cannot make the next (updateJobScheduler-12.lua reads the job's name
// from the hash). So the look says where the next job is, and whether the definition is there.
//
// A job taken by a worker that has not yet made the next one is `active` and still the one the
// scheduler names: it is not lost (the worker makes the next; if it died, the stalled check puts the
// job back in `wait` for another worker, which does). One script reads every scheduler and its next
// job's state at once, so a job moving between states (promoted from `delayed`, taken into
// `active`, finished) is never seen in neither.
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';
import type { PlannedSchedule } from './schedules.js';

/**
 * A planned scheduler in Redis: `ok` (its next job will run: delayed, prioritized, waiting, paused,
 * or active), `missing` (no scheduler), or there with its next job lost: `gone` (its hash is not
 * there), `completed`/`failed` (finished, no later one made), `orphan` (its hash in no list: a
 * partial key loss; the look that repairs drops it, see SCHEDULER_STATES).
 */
export type SchedulerState = 'ok' | 'missing' | 'gone' | 'completed' | 'failed' | 'orphan';

/** Where a next job that will yet run is (BullMQ's list or set of the queue). */
export type NextJobPlace = 'delayed' | 'prioritized' | 'wait' | 'active' | 'paused';

export interface ScheduleInRedis {
  schedule: PlannedSchedule;
  state: SchedulerState;
  /** the scheduler's next job, `repeat:<id>:<millis>` (absent when `missing`) */
  nextJob?: string;
  /** where that job is, when `ok` */
  place?: NextJobPlace;
  /** the scheduler is scored but its hash (its definition) is not there */
  definitionLost?: boolean;
}

/** A scheduler there whose next job will not run: it makes no job again until one is built. */
export function lostNextJob(s: ScheduleInRedis): boolean {
  return s.state !== 'ok' && s.state !== 'missing';
}

/** A planned scheduler that must be written: missing, its next job lost, or its definition lost. */
export function lostInRedis(s: ScheduleInRedis): boolean {
  return s.state !== 'ok' || s.definitionLost === true;
}

// KEYS[i]: the `repeat` key of scheduler i's queue (`<prefix>:<queue>:repeat`; the queue's other
// keys and the job's hash are named from it, as BullMQ's scripts name them from their prefix key);
// ARGV[1]: '1' to drop an orphan (the keys BullMQ's removeJobKeys deletes: the hash in no list is
// what an upsert at the same tick would collide with, -10), and a gone job's id from the queue's
// lists (its hash lost, an id left in `active` by a worker lost as it took the job, or in `delayed`,
// would be put back or promoted and taken as a job with no data: its tick run twice, once broken);
// ARGV[i + 1]: scheduler i's id.
// Returns state, next job id, its place ('' unless ok), '1' when the scheduler's hash is missing, for
// each (its `name`, which storeJobScheduler.lua always writes: a worker's failed next-make leaves a
// hash holding `ic` alone, updateJobScheduler-12.lua's HINCRBY). A healthy scheduler costs four
// calls: ZSCORE, HEXISTS (its hash's name), EXISTS (its job's hash), ZSCORE.
const SCHEDULER_STATES = `
local out = {}
for i, repeatKey in ipairs(KEYS) do
  local id = ARGV[i + 1]
  local millis = redis.call('ZSCORE', repeatKey, id)
  local state, jobId, place, undefinedHash = 'missing', '', '', ''
  if millis then
    local base = string.sub(repeatKey, 1, #repeatKey - #'repeat')
    if redis.call('HEXISTS', repeatKey .. ':' .. id, 'name') == 0 then undefinedHash = '1' end
    jobId = 'repeat:' .. id .. ':' .. millis
    local jobKey = base .. jobId
    if redis.call('EXISTS', jobKey) == 0 then
      state = 'gone'
      if ARGV[1] == '1' then
        local lists = {'wait', 'active', 'paused'}
        for _, list in ipairs(lists) do redis.call('LREM', base .. list, 0, jobId) end
        redis.call('ZREM', base .. 'delayed', jobId)
        redis.call('ZREM', base .. 'prioritized', jobId)
        redis.call('SREM', base .. 'stalled', jobId)
      end
    elseif redis.call('ZSCORE', base .. 'delayed', jobId) then place = 'delayed'
    elseif redis.call('ZSCORE', base .. 'prioritized', jobId) then place = 'prioritized'
    elseif redis.call('LPOS', base .. 'wait', jobId) then place = 'wait'
    elseif redis.call('LPOS', base .. 'active', jobId) then place = 'active'
    elseif redis.call('LPOS', base .. 'paused', jobId) then place = 'paused'
    elseif redis.call('ZSCORE', base .. 'completed', jobId) then
      state = 'completed'
    elseif redis.call('ZSCORE', base .. 'failed', jobId) then
      state = 'failed'
    else
      state = 'orphan'
      if ARGV[1] == '1' then
        redis.call('DEL', jobKey, jobKey .. ':logs', jobKey .. ':dependencies', jobKey .. ':processed',
          jobKey .. ':failed', jobKey .. ':unsuccessful')
      end
    end
  end
  if place ~= '' then state = 'ok' end
  out[#out + 1] = state
  out[#out + 1] = jobId
  out[#out + 1] = place
  out[#out + 1] = undefinedHash
end
return out`;

/**
 * Each planned scheduler's state in Redis, planned order (one script, one round trip). `dropOrphans`:
 * also delete a next job found in no list, so that an upsert can build it again at its tick.
 */
export async function schedulerStates(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  o: { dropOrphans: boolean },
): Promise<ScheduleInRedis[]> {
  if (planned.length === 0) return [];
  const keys = planned.map((s) => queues[s.kind].toKey('repeat'));
  const ids = planned.map((s) => s.id);
  const flat = (await redis.eval(
    SCHEDULER_STATES,
    keys.length,
    ...keys,
    o.dropOrphans ? '1' : '0',
    ...ids,
  )) as string[];
  return planned.map((schedule, i) => {
    const [state, nextJob, place, undefinedHash] = flat.slice(4 * i, 4 * i + 4) as [
      SchedulerState,
      string,
      NextJobPlace | '',
      string,
    ];
    return {
      schedule,
      state,
      ...(nextJob && { nextJob }),
      ...(place && { place }),
      ...(undefinedHash === '1' && { definitionLost: true }),
    };
  });
}
