// Writing one planned job scheduler found missing, changed or lost in part (schedule-state.ts), and
// the warning that names a repair. Called by the one writer (schedule-sync.ts, writeAsTheWriter) for
// a worker's start and for the watch (schedule-watch.ts).
//
// BullMQ's upsert (addJobScheduler-11.lua) replaces the scheduler's next job when it is delayed,
// prioritized or waiting, by one at the pattern's next time after now: the same tick while that is
// ahead, the following one once it is due. So how one is written depends on what is left of it:
// - a definition changed: upserted (its next run moves to the new definition's next time, on purpose,
//   never to a tick already run: upsertSchedule);
// - its definition lost, its next job kept and due, not yet taken: upserted with `immediately`
//   (docs.bullmq.io/guide/job-schedulers/repeat-options, "immediately": the job is made at now and
//   is not stored in the definition), so the due run is replaced by one due now, not by the next
//   tick; a next job ahead is rebuilt at its own tick, one taken (active) is left to run;
// - its next job lost before it ran (`gone`, `orphan`), or the scheduler lost whole while the watch
//   saw it waiting for a tick, found after that tick has come: upserted with `immediately`, the run
//   lost made up for once, late (schedule-catch-up.ts says when);
// - its next job finished (taken early: a promote in a queue UI) with no later one made, its tick
//   still ahead: the next after that tick is made as the worker that took it would have
//   (schedules.ts, makeNextAfter; an upsert would collide with the finished job's id), or, its
//   definition lost too, upserted (makeNextAfter reads the definition), which starts after that tick
//   (upsertSchedule makes no tick already run);
// - otherwise upserted (missing, or its next job lost: nothing to replace, built at the next tick
//   after now).
import type { Logger } from '../log.js';
import { howLate, missedTick } from './schedule-catch-up.js';
import type { Queues } from './queues.js';
import type { NextJobPlace, SchedulerState } from './schedule-state.js';
import { makeNextAfter, upsertSchedule, type PlannedSchedule } from './schedules.js';

/** A planned scheduler to write: missing from Redis, there with other `changed` fields, or there with its next job or definition lost. */
export interface ScheduleToWrite {
  schedule: PlannedSchedule;
  /** absent: not a change of definition; else the fields whose stored value is not the planned one */
  changed?: string[];
  /** what Redis held of it (schedule-state.ts): `missing`, its lost next job's state, or `ok` */
  state: SchedulerState;
  /** the next job the scheduler names, lost or not */
  lostJob?: string;
  /** where that job is, when `ok` */
  place?: NextJobPlace;
  /** its hash (its definition) was not there, its score was */
  definitionLost?: boolean;
  /** `missing`: the tick the watch last saw it waiting for (millis), if it saw it */
  waitedFor?: number;
}

/** A scheduler written, and the next job BullMQ made for it. */
export interface ScheduleWritten extends ScheduleToWrite {
  nextJob?: string;
  /** the tick of a run lost before it ran, made up for by this next job, due now */
  missedTick?: number;
}

/** When a scheduler's job runs: the millis in its id, `repeat:<scheduler>:<millis>`. */
export function tickOf(jobId: string): number {
  return Number(jobId.slice(jobId.lastIndexOf(':') + 1));
}

/** A next job kept through a lost definition that is due and not yet taken. */
function dueAndWaiting(w: ScheduleToWrite, now: number): boolean {
  return w.state === 'ok' && w.place !== 'active' && w.lostJob !== undefined && tickOf(w.lostJob) <= now;
}

/** Its next job finished before its tick (the tick still ahead), no later one made. */
function finishedEarly(w: ScheduleToWrite, now: number): w is ScheduleToWrite & { lostJob: string } {
  return (w.state === 'completed' || w.state === 'failed') && w.lostJob !== undefined && tickOf(w.lostJob) > now;
}

/** The tick a scheduler lost before it ran waited for: its lost next job's, or the watch's memory of it. */
function tickWaitedFor(w: ScheduleToWrite): number | undefined {
  if (w.state === 'missing') return w.waitedFor;
  if ((w.state === 'gone' || w.state === 'orphan') && w.lostJob) return tickOf(w.lostJob);
  return undefined;
}

/** Write one scheduler as said at the top; the next job BullMQ made for it. */
export async function writeSchedule(queues: Queues, w: ScheduleToWrite): Promise<ScheduleWritten> {
  const now = Date.now();
  if (!w.changed && !w.definitionLost && finishedEarly(w, now)) {
    const nextJob = await makeNextAfter(queues, w.schedule, tickOf(w.lostJob));
    return { ...w, ...(nextJob && { nextJob }) };
  }
  const waited = w.changed ? undefined : tickWaitedFor(w);
  const missed = waited === undefined ? undefined : missedTick(w.schedule, waited, now);
  const runNow = missed !== undefined || (!w.changed && w.definitionLost === true && dueAndWaiting(w, now));
  const nextJob = await upsertSchedule(queues, w.schedule, { now: runNow });
  return { ...w, ...(nextJob && { nextJob }), ...(missed !== undefined && { missedTick: missed }) };
}

const LOST_HOW: Partial<Record<SchedulerState, string>> = {
  gone: 'is not in Redis (a key deleted or evicted?)',
  completed: 'completed and no later one was made',
  failed: 'failed and no later one was made (its worker could not make it?)',
  orphan: 'was in no list of its queue (a partial key loss?): dropped',
};

const iso = (millis: number) => new Date(millis).toISOString();

/** What became of a next job the definition's loss left in place. */
function keptJob(w: ScheduleWritten): string {
  const lost = w.lostJob ?? '';
  if (w.place === 'active')
    return `its run of ${iso(tickOf(lost))} is under way; next run ${w.nextJob ? iso(tickOf(w.nextJob)) : 'none'}`;
  if (w.nextJob === w.lostJob) return `its next job ${lost} kept (the same tick)`;
  return `its run due at ${iso(tickOf(lost))} kept, due now (${w.nextJob ?? 'none'})`;
}

/** The warning for a scheduler whose lost next job or definition was built again (one a repair), naming it and the runs lost or kept. */
export function sayNextJobRebuilt(logger: Logger, w: ScheduleWritten): void {
  const fields = {
    scheduler: w.schedule.id,
    state: w.state,
    lostJob: w.lostJob,
    nextJob: w.nextJob,
    ...(w.definitionLost && { definitionLost: true }),
    ...(w.missedTick !== undefined && { missedTick: w.missedTick }),
  };
  const hash = `its hash …:repeat:${w.schedule.id} deleted or evicted?`;
  if (w.state === 'ok') {
    logger.warn(
      fields,
      `job scheduler ${w.schedule.id}'s definition was not in Redis (${hash}): written again; ${keptJob(w)}`,
    );
    return;
  }
  const lost = w.lostJob ?? '';
  const next = w.nextJob ? iso(tickOf(w.nextJob)) : 'none';
  const kept =
    w.nextJob === w.lostJob
      ? ' (the same tick)'
      : (w.state === 'completed' || w.state === 'failed') && tickOf(lost) > Date.now()
        ? ` (the tick after its own, ${iso(tickOf(lost))}, which ran early)`
        : ` (its tick ${iso(tickOf(lost))} not run)`;
  const definition = w.definitionLost ? `; its definition was not in Redis either (${hash})` : '';
  const built =
    w.missedTick === undefined
      ? `built again, next run ${next}${kept}`
      : `its run of ${iso(w.missedTick)} was missed: ${madeUp(w.missedTick)}`;
  logger.warn(
    fields,
    `job scheduler ${w.schedule.id} had no next job: ${lost} ${LOST_HOW[w.state] ?? w.state}${definition}; ${built}`,
  );
}

/** What a warning says of a run lost and made up for. */
function madeUp(tick: number): string {
  return `run now, ${howLate(Date.now() - tick)} late, once (the runs after it are the schedule's)`;
}

/** The warning for a scheduler lost whole whose run lost is made up for (the watch's line names those written). */
export function sayLostRunMadeUp(logger: Logger, w: ScheduleWritten): void {
  if (w.missedTick === undefined) return;
  logger.warn(
    { scheduler: w.schedule.id, state: w.state, nextJob: w.nextJob, missedTick: w.missedTick },
    `job scheduler ${w.schedule.id} was lost from Redis, its run of ${iso(w.missedTick)} not run: ${madeUp(w.missedTick)}`,
  );
}
