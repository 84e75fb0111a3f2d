// Writing the job schedulers of the config into Redis: a worker's start (applySchedules), and the one
// writer that the start and the watch (schedule-watch.ts) share.
//
// Only what differs is written: upserting a scheduler that is there replaces its next job (see
// upsertSchedule), which moves a due tick, not yet taken, to the next one (a rolling restart while
// every worker is busy would skip a nightly sync). So a start writes the schedulers missing, those
// whose definition (pattern, tz, job name, data and options) is not the config's, as BullMQ stores
// it (`getJobScheduler`), and those there whose next job or definition Redis lost (schedule-state.ts:
// it would never run again; how each is written, a due tick kept: schedule-write.ts). One changed is written anew, its next run moved on purpose, and a line says so; one
// whose next job is built again is warned of, naming it. Several workers writing at once make no
// second scheduler (its id is its key) and no second run of a tick (a tick's job id is
// `repeat:<scheduler>:<millis>`); the writer's key (SET NX, a few seconds, deleted when done) keeps
// the others from writing what one is writing, and the writer looks once more after taking it, so
// a scheduler another worker has just written is left as it is. A starting worker waits for the
// key (what it would write may differ from what the holder writes); the watch does not.
//
// What a start's look costs: one getJobScheduler per planned scheduler, sent at once, and one script
// reading every scheduler's next job (schedule-state.ts); writing adds a SET NX, the look once more,
// per scheduler written two reads and one script (schedules.ts, upsertSchedule), and a DEL of the
// writer's key.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Queue } from 'bullmq';
import type { Logger } from '../log.js';
import { delIfValue } from '../redis/del-if-value.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';
import { markRemoved, unmarkPlanned } from './schedule-removed.js';
import { lostNextJob, schedulerStates } from './schedule-state.js';
import { sayNextJobRebuilt, writeSchedule, type ScheduleToWrite, type ScheduleWritten } from './schedule-write.js';
import type { PlannedSchedule } from './schedules.js';
import { thisWorker, workerName } from './worker-identity.js';

/** How long one worker holds the right to write the schedulers: longer than writing them takes. */
const WRITER_TTL_MS = 10_000;
/** How long a starting worker waits for another that is writing them: the key's life, and a margin. */
const START_WAIT_MS = WRITER_TTL_MS + 2_000;
const WAIT_STEP_MS = 100;

/**
 * A scheduler's definition as upsertSchedule writes it and BullMQ stores it (its hash, read back
 * by `getJobScheduler`): the repeat options feedsync sets and those it never sets (which must be
 * absent, but for a `startDate` before the next tick: differingSchedules), the job's name and data,
 * and the options every job of its queue gets.
 */
function plannedDefinition(queue: Queue, s: PlannedSchedule): Record<string, unknown> {
  return {
    pattern: s.pattern,
    every: undefined,
    tz: s.tz || undefined,
    limit: undefined,
    startDate: undefined,
    endDate: undefined,
    name: s.name,
    data: s.data,
    // stored as JSON: what does not survive it (an undefined) is not compared
    opts: JSON.parse(JSON.stringify(queue.defaultJobOptions)) as unknown,
  };
}

/**
 * The planned schedulers Redis lacks or has with another definition (one `getJobScheduler` each,
 * sent at once), or has with its next job or its definition lost (one script): what a start
 * writes. `dropOrphans`: see schedulerStates.
 */
export async function differingSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  o: { dropOrphans: boolean },
): Promise<ScheduleToWrite[]> {
  const [stored, states] = await Promise.all([
    Promise.all(planned.map((s) => queues[s.kind].getJobScheduler(s.id))),
    schedulerStates(redis, queues, planned, o),
  ]);
  const out: ScheduleToWrite[] = [];
  planned.forEach((schedule, i) => {
    const had = stored[i];
    const { state, nextJob, place, definitionLost } = states[i]!;
    const lost = {
      ...(nextJob && { lostJob: nextJob }),
      ...(place && { place }),
      ...(definitionLost && { definitionLost }),
    };
    if (state === 'missing') return void out.push({ schedule, state });
    // scored, its hash not there (getJobScheduler reads nothing): a repair, not a change; written
    // with what is left of its next job in mind (schedule-write.ts), a due one kept due
    if (!had || definitionLost) return void out.push({ schedule, state, ...lost, definitionLost: true });
    const want = plannedDefinition(queues[schedule.kind], schedule);
    const has: Record<string, unknown> = {
      pattern: had.pattern,
      every: had.every,
      tz: had.tz,
      limit: had.limit,
      // one upsertSchedule stored to start after a tick already run, before the next tick: it moves
      // no tick (schedules.ts, firstTickNotRun), no difference
      startDate:
        had.startDate !== undefined && had.next != null && had.startDate < had.next ? undefined : had.startDate,
      endDate: had.endDate,
      name: had.name,
      data: had.template?.data ?? {},
      opts: had.template?.opts ?? {},
    };
    const changed = Object.keys(want).filter((k) => !isDeepStrictEqual(want[k], has[k]));
    if (changed.length > 0) out.push({ schedule, changed, state, ...lost });
    else if (lostNextJob(states[i]!)) out.push({ schedule, state, ...lost });
  });
  return out;
}

/** What one writer wrote, and what BullMQ refused (each tried: one refused does not hold back the others). */
export interface WriterOutcome {
  written: ScheduleWritten[];
  failed: Array<ScheduleToWrite & { err: Error }>;
}

/**
 * As the one writer (the writer's key, waiting up to `waitMs` for another that holds it): look,
 * write what the look found, let the key go. Undefined when another worker held the key all that
 * time.
 */
export async function writeAsTheWriter(
  redis: RedisClient,
  queues: Queues,
  root: string,
  waitMs: number,
  look: () => Promise<ScheduleToWrite[]>,
): Promise<WriterOutcome | undefined> {
  const key = keysOf(root).schedulesWriter;
  const me = `${workerName(thisWorker())}:${randomUUID().slice(0, 8)}`;
  const end = Date.now() + waitMs;
  while ((await redis.set(key, me, 'PX', WRITER_TTL_MS, 'NX')) !== 'OK') {
    if (Date.now() >= end) return undefined;
    await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
  }
  try {
    const out: WriterOutcome = { written: [], failed: [] };
    for (const w of await look()) {
      try {
        out.written.push(await writeSchedule(queues, w));
      } catch (err) {
        out.failed.push({ ...w, err: err as Error });
      }
    }
    return out;
  } finally {
    await delIfValue(redis, key, me); // (only while still this writer's)
  }
}

export interface ScheduleChanges {
  /** written: missing before */
  added: string[];
  /** written anew: there with another definition (their next run moved to the new one's next time) */
  changed: string[];
  /** written again: there as planned with its next job or its definition lost (built at the same tick while that is ahead) */
  rebuilt: string[];
  /** no longer in config */
  removed: string[];
}

/**
 * A worker's start: write the planned schedulers missing, changed, or whose next job Redis lost (one
 * writer at a time; those there as planned with their next job are left alone), and remove those
 * no longer in config.
 */
export async function applySchedules(
  redis: RedisClient,
  queues: Queues,
  planned: PlannedSchedule[],
  o: { root: string; logger: Logger },
): Promise<ScheduleChanges> {
  const changes: ScheduleChanges = { added: [], changed: [], rebuilt: [], removed: [] };
  // planned again (a config that plans one an earlier config removed): lost, it is written again
  await unmarkPlanned(
    redis,
    o.root,
    planned.map((s) => s.id),
  );
  if ((await differingSchedules(redis, queues, planned, { dropOrphans: false })).length > 0) {
    const outcome = await writeAsTheWriter(redis, queues, o.root, START_WAIT_MS, () =>
      differingSchedules(redis, queues, planned, { dropOrphans: true }),
    );
    if (!outcome)
      o.logger.warn(
        { key: keysOf(o.root).schedulesWriter },
        `job schedulers not written: another worker held the writer's key for ${START_WAIT_MS / 1000} s; the lost ones are written by the watch, a changed one at the next start`,
      );
    for (const w of outcome?.written ?? []) {
      if (w.changed) {
        changes.changed.push(w.schedule.id);
        o.logger.info(
          { scheduler: w.schedule.id, changed: w.changed, pattern: w.schedule.pattern, tz: w.schedule.tz },
          `job scheduler ${w.schedule.id} changed (${w.changed.join(', ')}): written anew, its next run moved to the new definition's next time (a tick due and not yet taken is replaced)`,
        );
      } else if (w.state === 'missing') {
        changes.added.push(w.schedule.id);
      } else {
        changes.rebuilt.push(w.schedule.id);
        sayNextJobRebuilt(o.logger, w);
      }
    }
    if (outcome?.failed.length)
      throw new Error(
        `job schedulers not written (Redis refused them; the start stops here): ${outcome.failed.map((f) => `${f.schedule.id}: ${f.err.message}`).join('; ')}`,
      );
  }
  const wanted = new Set(planned.map((s) => s.id));
  for (const queue of Object.values(queues)) {
    // The ids in the queue's `repeat` set, not getJobSchedulers: that one removes each scheduler whose
    // hash it cannot read, with its delayed next job (BullMQ 6.7 classes/job-scheduler.js,
    // getSchedulerData), so a planned one whose hash was lost, and not written again here (another
    // worker held the writer's key), vanished without a word. Only those no longer in config go.
    for (const id of await redis.zrange(queue.toKey('repeat'), 0, -1)) {
      if (wanted.has(id)) continue;
      // marked before it goes, so that a watch that finds it missing finds the mark too: a worker of
      // the config before (a rolling deploy) would otherwise write it again as lost, and run it
      await markRemoved(redis, o.root, id);
      await queue.removeJobScheduler(id);
      changes.removed.push(id);
    }
  }
  const { added, changed, rebuilt, removed } = changes;
  const kept = planned.length - added.length - changed.length - rebuilt.length;
  if (added.length || changed.length || rebuilt.length || removed.length)
    o.logger.info(
      changes,
      `job schedulers: ${planned.length} in config (${added.length} added, ${changed.length} changed, ${rebuilt.length} next job built again, ${kept} as they were), ${removed.length} removed`,
    );
  return changes;
}
