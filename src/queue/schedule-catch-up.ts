// A scheduled run that Redis lost before it ran is run once, late. A scheduler that waited for a tick
// (its next job `repeat:<id>:<tick>`) and lost that job, or was lost whole, before the tick came is
// found by the watch or a start only afterwards: Redis restarted without persistence at 01:55 and
// back at 02:01, a nightly tick at 02:00. BullMQ's upsert then builds the next job at the pattern's
// next time after now, the next night, and that night's sync would not run at all. So when the tick
// it waited for has come, the latest tick of its pattern (that one, or a later one) is run now,
// once: its one next job is made due now, and after it the pattern's ticks go on (schedule-write.ts).
// Only the latest: a scheduler lost for three ticks runs once, not three times. And only while that
// tick is less than one interval of the pattern old (the time from the tick before it): a run due
// 15 h ago on `0 9,17 * * *` (its ticks 8 h apart after 09:00) is not run an hour before the next.
//
// What a run lost is: a next job `gone` or `orphan` whose tick has come (it was never taken: a
// taken one moves the scheduler on, or is `completed`/`failed`, which ran), or, for the watch, a
// scheduler `missing` that this worker last saw waiting for a tick that has come, the job of that
// tick gone with it (kept, it runs by itself or ran: schedule-watch.ts stillLost). A worker's start
// has not seen it: a scheduler missing then is new in config or was lost with Redis's keys before
// the start (the workers and Redis restarted together), which it cannot tell apart, so it is only
// written (its next run the pattern's next tick).
import { CronExpressionParser } from 'cron-parser';

/** When a scheduler runs: its pattern and time zone (schedules.ts, PlannedSchedule). */
export interface Pattern {
  pattern: string;
  tz?: string;
}

/**
 * The tick to run now, if any, of a scheduler that waited for `waitedFor` (millis) and has no job
 * for it: the latest tick of its pattern at or before `now`, when `waitedFor` is not after it and it
 * is less than one interval old (see the top). Undefined: nothing was missed, or too long ago.
 */
export function missedTick(p: Pattern, waitedFor: number, now: number): number | undefined {
  // prev() is the tick strictly before currentDate: one millisecond on makes `now` itself a tick
  const previous = tickBefore(p, now + 1);
  // BullMQ makes its ticks with next(), which prev() does not always retrace: on the night clocks
  // spring forward `0 2 * * *` has no 02:00, next() gives 03:00 and prev() the night before. So
  // the tick waited for, when next() makes it (a made-up run's own tick is none), counts as one.
  const latest =
    waitedFor > previous && waitedFor <= now && tickAfter(p, waitedFor - 1) === waitedFor ? waitedFor : previous;
  if (waitedFor > latest) return undefined;
  const before = tickBefore(p, latest);
  return now - latest < latest - before ? latest : undefined;
}

function ticks(p: Pattern, from: number) {
  return CronExpressionParser.parse(p.pattern, { currentDate: new Date(from), ...(p.tz && { tz: p.tz }) });
}
const tickBefore = (p: Pattern, millis: number): number => ticks(p, millis).prev().getTime();
const tickAfter = (p: Pattern, millis: number): number => ticks(p, millis).next().getTime();

/** How late a run is, for a person: seconds, minutes or hours. */
export function howLate(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 120 * 60) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
