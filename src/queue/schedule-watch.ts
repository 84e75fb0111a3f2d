// The job schedulers kept in Redis: written when a worker starts (applySchedules), and while it runs
// written again when Redis lost them. A Redis that restarts without persistence (no AOF or RDB), a
// failover to a replica that lacked them, or a FLUSHALL loses them with every other key, and each
// scheduled feed then stops without a word: no job is made, so the idle-queue watchdog sees nothing
// to start. So a worker looks again, whenever its connection is ready after a drop and every
// `worker.scheduleCheckSeconds`, and writes again those missing, saying so in a warning.
//
// Only what differs is written: upserting a scheduler that is there replaces its next job (see
// upsertSchedule), which moves a due tick, not yet taken, to the next one (a rolling restart while
// every worker is busy would skip a nightly sync). So a start writes the schedulers missing and
// those whose definition (pattern, tz, job name, data and options) is not the config's, as BullMQ
// stores it (`getJobScheduler`); one changed is written anew, its next run moved on purpose, and a
// line says so. The watch writes only the missing. Several workers writing at once make no second
// scheduler (its id is its key) and no second run of a tick (a tick's job id is
// `repeat:<scheduler>:<millis>`); the writer's key (SET NX, a few seconds, deleted when done) keeps
// the others from writing what one is writing, and the writer looks once more after taking it, so
// a scheduler another worker has just written is left as it is. A starting worker waits for the
// key (what it would write may differ from what the holder writes); the watch does not.
//
// What it costs: a watch's look is one round trip of one ZSCORE per planned scheduler; a start's is
// one getJobScheduler per planned scheduler, sent at once; writing adds a SET NX, the look once
// more, one script per scheduler written, and a DEL of the writer's key.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Queue } from 'bullmq';
import type { Logger } from '../log.js';
import { delIfValue } from '../redis/del-if-value.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';
import { upsertSchedule, type PlannedSchedule } from './schedules.js';
import { thisWorker, workerName } from './worker-identity.js';

/** How long one worker holds the right to write the schedulers: longer than writing them takes. */
const WRITER_TTL_MS = 10_000;
/** How long a starting worker waits for another that is writing them: the key's life, and a margin. */
const START_WAIT_MS = WRITER_TTL_MS + 2_000;
const WAIT_STEP_MS = 100;

/** A planned scheduler to write: missing from Redis, or there with other `changed` fields. */
export interface ScheduleToWrite {
  schedule: PlannedSchedule;
  /** absent: missing; else the fields whose stored value is not the planned one */
  changed?: string[];
}

/** The planned schedulers Redis does not have (one round trip: a ZSCORE each, on its queue's `repeat` set). */
export async function missingSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
): Promise<PlannedSchedule[]> {
  if (planned.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const s of planned) pipeline.zscore(queues[s.kind].toKey('repeat'), s.id);
  const answers = (await pipeline.exec()) ?? [];
  return planned.filter((s, i) => {
    const [err, score] = answers[i] ?? [new Error('no answer')];
    if (err) throw err;
    return score === null;
  });
}

/**
 * A scheduler's definition as upsertSchedule writes it and BullMQ stores it (its hash, read back
 * by `getJobScheduler`): the repeat options feedsync sets and those it never sets (which must be
 * absent), the job's name and data, and the options every job of its queue gets.
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
 * sent at once): what a start writes.
 */
export async function differingSchedules(
  queues: Queues,
  planned: readonly PlannedSchedule[],
): Promise<ScheduleToWrite[]> {
  const stored = await Promise.all(planned.map((s) => queues[s.kind].getJobScheduler(s.id)));
  const out: ScheduleToWrite[] = [];
  planned.forEach((schedule, i) => {
    const had = stored[i];
    if (!had) return void out.push({ schedule });
    const want = plannedDefinition(queues[schedule.kind], schedule);
    const has: Record<string, unknown> = {
      pattern: had.pattern,
      every: had.every,
      tz: had.tz,
      limit: had.limit,
      startDate: had.startDate,
      endDate: had.endDate,
      name: had.name,
      data: had.template?.data ?? {},
      opts: had.template?.opts ?? {},
    };
    const changed = Object.keys(want).filter((k) => !isDeepStrictEqual(want[k], has[k]));
    if (changed.length > 0) out.push({ schedule, changed });
  });
  return out;
}

/**
 * As the one writer (the writer's key, waiting up to `waitMs` for another that holds it): look,
 * write what the look found, let the key go. What was written; undefined when another worker held
 * the key all that time.
 */
async function writeAsTheWriter<T extends { schedule: PlannedSchedule }>(
  redis: RedisClient,
  queues: Queues,
  root: string,
  waitMs: number,
  look: () => Promise<T[]>,
): Promise<T[] | undefined> {
  const key = keysOf(root).schedulesWriter;
  const me = `${workerName(thisWorker())}:${randomUUID().slice(0, 8)}`;
  const end = Date.now() + waitMs;
  while ((await redis.set(key, me, 'PX', WRITER_TTL_MS, 'NX')) !== 'OK') {
    if (Date.now() >= end) return undefined;
    await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
  }
  try {
    const toWrite = await look();
    for (const w of toWrite) await upsertSchedule(queues, w.schedule);
    return toWrite;
  } finally {
    await delIfValue(redis, key, me); // (only while still this writer's)
  }
}

/**
 * Write again the planned schedulers Redis lost, if this worker is the one to (the writer's key);
 * the ids written (none when none was missing or another worker is writing them).
 */
export async function restoreSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  root: string,
): Promise<string[]> {
  if ((await missingSchedules(redis, queues, planned)).length === 0) return [];
  const missing = async () => (await missingSchedules(redis, queues, planned)).map((schedule) => ({ schedule }));
  const written = await writeAsTheWriter(redis, queues, root, 0, missing);
  return (written ?? []).map((w) => w.schedule.id);
}

export interface ScheduleChanges {
  /** written: missing before */
  added: string[];
  /** written anew: there with another definition (their next run moved to the new one's next time) */
  changed: string[];
  /** no longer in config */
  removed: string[];
}

/**
 * A worker's start: write the planned schedulers missing or changed (one writer at a time; those
 * there as planned are left alone, their next job with them), and remove those no longer in config.
 */
export async function applySchedules(
  redis: RedisClient,
  queues: Queues,
  planned: PlannedSchedule[],
  o: { root: string; logger: Logger },
): Promise<ScheduleChanges> {
  const changes: ScheduleChanges = { added: [], changed: [], removed: [] };
  if ((await differingSchedules(queues, planned)).length > 0) {
    const written = await writeAsTheWriter(redis, queues, o.root, START_WAIT_MS, () =>
      differingSchedules(queues, planned),
    );
    if (!written)
      o.logger.warn(
        { key: keysOf(o.root).schedulesWriter },
        `job schedulers not written: another worker held the writer's key for ${START_WAIT_MS / 1000} s; the lost ones are written by the watch, a changed one at the next start`,
      );
    for (const w of written ?? []) {
      if (!w.changed) {
        changes.added.push(w.schedule.id);
        continue;
      }
      changes.changed.push(w.schedule.id);
      o.logger.info(
        { scheduler: w.schedule.id, changed: w.changed, pattern: w.schedule.pattern, tz: w.schedule.tz },
        `job scheduler ${w.schedule.id} changed (${w.changed.join(', ')}): written anew, its next run moved to the new definition's next time (a tick due and not yet taken is replaced)`,
      );
    }
  }
  const wanted = new Set(planned.map((s) => s.id));
  for (const queue of Object.values(queues)) {
    for (const existing of await queue.getJobSchedulers(0, -1)) {
      const id = existing.key;
      if (wanted.has(id)) continue;
      await queue.removeJobScheduler(id);
      changes.removed.push(id);
    }
  }
  const kept = planned.length - changes.added.length - changes.changed.length;
  if (changes.added.length || changes.changed.length || changes.removed.length)
    o.logger.info(
      changes,
      `job schedulers: ${planned.length} in config (${changes.added.length} added, ${changes.changed.length} changed, ${kept} as they were), ${changes.removed.length} removed`,
    );
  return changes;
}

export interface ScheduleWatchOptions {
  root: string;
  intervalMs: number;
  logger: Logger;
}

/**
 * Looks for lost schedulers when `redis` is ready again after a drop and every `intervalMs`, one look
 * at a time (a reason to look during a look makes one more after it). Returns what stops it.
 */
export function watchSchedules(
  redis: RedisClient,
  queues: Queues,
  planned: readonly PlannedSchedule[],
  o: ScheduleWatchOptions,
): () => void {
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
        const written = await restoreSchedules(redis, queues, planned, o.root).catch((err: Error) => {
          o.logger.warn(
            { err: err.message },
            `looking for lost job schedulers failed; looking again in ${o.intervalMs / 1000} s`,
          );
          return [];
        });
        if (written.length > 0)
          o.logger.warn(
            { schedulers: written },
            `Redis lost the job schedulers (restart without persistence?); written again: ${written.length}`,
          );
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
