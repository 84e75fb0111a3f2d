// While a worker runs, it writes again the job schedulers Redis lost, and builds again a scheduler's
// next job Redis lost. A Redis that restarts without persistence (no AOF or RDB), a failover to a
// replica that lacked them, or a FLUSHALL loses the schedulers with every other key; a key deleted
// by hand or evicted, or a worker that took a tick and could not make the next, loses one
// scheduler's next job (schedule-state.ts). Either way the schedule then stops without a word: no
// job is made, so the idle-queue watchdog sees nothing to start. So a worker looks, whenever its
// connection is ready after a drop and every `worker.scheduleCheckSeconds`, and writes what it finds
// lost as the one writer (schedule-sync.ts: only what is lost is written, so a due tick is never
// moved; a job being taken or run is not lost), with a warning naming what it wrote. A run lost
// before it ran, found after its tick, is made up for once, late (schedule-catch-up.ts); for a
// scheduler lost whole, the watch remembers the tick each was last seen waiting for. One that a
// worker's start removed, its config no longer planning it, is not lost: the start marks it
// (`<prefix>:schedules-removed`, until a config plans it again, a week at most: schedule-removed.ts),
// and the watch of a worker still running the config before (a rolling deploy) leaves it out
// instead of writing it back to run.
//
// What it costs: a look is one round trip, one script reading each planned scheduler's score, its
// next job's hash and that job's place (three calls inside the script a healthy scheduler, a few
// more for a job due and waiting or active); writing adds a SET NX, the look once more, one BullMQ
// script per scheduler written, and a DEL of the writer's key.
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';
import { failuresSaid, type FailuresSaid, type SaidAgain } from './said-once.js';
import { removedOf } from './schedule-removed.js';
import { lostInRedis, schedulerStates } from './schedule-state.js';
import { writeAsTheWriter, type WriterOutcome } from './schedule-sync.js';
import { sayLostRunMadeUp, sayNextJobRebuilt, tickOf } from './schedule-write.js';
import type { PlannedSchedule } from './schedules.js';

/**
 * The tick each planned scheduler was last seen waiting for, by id: a watch's memory, so that a
 * scheduler lost whole and written after that tick has its run made up for (schedule-catch-up.ts).
 */
export type TicksWaitedFor = Map<string, number>;

/**
 * Write again the planned schedulers Redis lost, and the lost next jobs and definitions of those
 * there, if this worker is the one to (the writer's key); what was written (none when nothing was
 * lost or another worker is writing it). `waitedFor`: the watch's memory, read for those missing
 * and kept up to date with what each look finds.
 */
export async function restoreSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  root: string,
  waitedFor: TicksWaitedFor = new Map(),
): Promise<WriterOutcome> {
  const lost = async (dropOrphans: boolean) => {
    const states = await schedulerStates(redis, queues, planned, { dropOrphans });
    for (const s of states) if (s.state === 'ok' && s.nextJob) waitedFor.set(s.schedule.id, tickOf(s.nextJob));
    const found = states.filter(lostInRedis);
    if (!found.some((s) => s.state === 'missing')) return found;
    // read after the states: a start marks a scheduler before it removes it (schedule-sync.ts)
    const removed = await removedOf(
      redis,
      root,
      found.filter((s) => s.state === 'missing').map((s) => s.schedule.id),
    );
    return found.filter((s) => s.state !== 'missing' || !removed.has(s.schedule.id));
  };
  const none: WriterOutcome = { written: [], failed: [] };
  if ((await lost(false)).length === 0) return none;
  const outcome = await writeAsTheWriter(redis, queues, root, 0, async () =>
    Promise.all(
      (await lost(true)).map(async ({ schedule, state, nextJob, place, definitionLost }) => {
        const waited = state === 'missing' ? await stillLost(redis, queues, schedule, waitedFor) : undefined;
        return {
          schedule,
          state,
          ...(nextJob && { lostJob: nextJob }),
          ...(place && { place }),
          ...(definitionLost && { definitionLost }),
          ...(waited !== undefined && { waitedFor: waited }),
        };
      }),
    ),
  );
  for (const w of outcome?.written ?? []) if (w.nextJob) waitedFor.set(w.schedule.id, tickOf(w.nextJob));
  return outcome ?? none;
}

/**
 * The tick a scheduler found missing was last seen waiting for, when its job was lost with it; undefined
 * when that job is still there (any state: waiting or delayed, it runs by itself; active, completed or
 * failed, it was taken). A scheduler is lost alone when its queue's `repeat` set is (one key: evicted,
 * deleted by hand) while its next job, a key of its own, is kept and taken at its tick: made up for,
 * that tick ran twice.
 */
async function stillLost(
  redis: RedisClient,
  queues: Queues,
  schedule: PlannedSchedule,
  waitedFor: TicksWaitedFor,
): Promise<number | undefined> {
  const tick = waitedFor.get(schedule.id);
  if (tick === undefined) return undefined;
  const job = queues[schedule.kind].toKey(`repeat:${schedule.id}:${tick}`);
  return (await redis.exists(job)) === 0 ? tick : undefined;
}

export interface ScheduleWatchOptions {
  root: string;
  intervalMs: number;
  logger: Logger;
  /** how long a failure that stays the same goes unsaid (said-once.ts): an hour unless a test says */
  sayAgainMs?: number;
}

/** The look itself, among the failures said (said-once.ts): a scheduler's are by its id. */
const LOOK = '';

/**
 * Looks for lost schedulers and next jobs when `redis` is ready again after a drop and every
 * `intervalMs`, one look at a time (a reason to look during a look makes one more after it). A
 * failure, of the look or of a scheduler's write, is warned of once (said-once.ts) and tried again
 * at every look. Returns what stops it.
 */
export function watchSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  o: ScheduleWatchOptions,
): () => void {
  const waitedFor: TicksWaitedFor = new Map();
  const said = failuresSaid(o.sayAgainMs);
  let looking = false;
  let again = false;
  let dropped = false;
  let stopped = false;
  const look = async (): Promise<void> => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      do {
        again = false;
        const outcome = await restoreSchedules(redis, queues, planned, o.root, waitedFor).catch((err: Error) => {
          sayLookFailed(o, said, err);
          return undefined;
        });
        if (outcome) sayOutcome(o, said, outcome);
      } while (again && !stopped);
    } finally {
      looking = false;
    }
  };
  const onClose = () => (dropped = true);
  const onReady = () => {
    if (!dropped) return;
    dropped = false;
    void look();
  };
  redis.on('close', onClose);
  redis.on('ready', onReady);
  const timer = setInterval(() => void look(), o.intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    redis.off('close', onClose);
    redis.off('ready', onReady);
  };
}

const again = (a: SaidAgain | undefined) => (a ? ` (failed the same ${a.times} times since ${a.since})` : '');

function sayLookFailed(o: ScheduleWatchOptions, said: FailuresSaid, err: Error): void {
  const say = said.toSay(LOOK, err.message);
  if (!say) return;
  o.logger.warn(
    { err: err.message, ...say.again },
    `looking for lost job schedulers failed; looking again every ${o.intervalMs / 1000} s${again(say.again)}`,
  );
}

/** The warnings of one look: what it wrote, and each failure not said yet. */
function sayOutcome(o: ScheduleWatchOptions, said: FailuresSaid, { written, failed }: WriterOutcome): void {
  said.keepOnly(new Set(failed.map((f) => f.schedule.id)));
  const missing = written.filter((w) => w.state === 'missing').map((w) => w.schedule.id);
  if (missing.length > 0)
    o.logger.warn(
      { schedulers: missing },
      `Redis lost the job schedulers (restart without persistence?); written again: ${missing.length}`,
    );
  for (const w of written) {
    if (w.state === 'missing') sayLostRunMadeUp(o.logger, w);
    else sayNextJobRebuilt(o.logger, w);
  }
  for (const f of failed) {
    const what = f.state === 'missing' ? 'lost' : `lost its next job (${f.lostJob}, ${f.state})`;
    const say = said.toSay(f.schedule.id, `${what}: ${f.err.message}`);
    if (!say) continue;
    o.logger.warn(
      { scheduler: f.schedule.id, state: f.state, lostJob: f.lostJob, err: f.err.message, ...say.again },
      `job scheduler ${f.schedule.id} ${what} and not written again: ${f.err.message}; tried again every ${o.intervalMs / 1000} s, said again if the failure changes, or in an hour${again(say.again)}`,
    );
  }
}
