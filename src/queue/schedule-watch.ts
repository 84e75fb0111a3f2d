// The job schedulers kept in Redis while a worker runs. A worker writes its schedulers at start
// (schedules.ts); a Redis that restarts without persistence (no AOF or RDB), a failover to a replica
// that lacked them, or a FLUSHALL loses them with every other key, and each scheduled feed then
// stops without a word: no job is made, so the idle-queue watchdog sees nothing to start. So a
// worker looks again, whenever its connection is ready after a drop and every
// `worker.scheduleCheckSeconds`, and writes again those missing, saying so in a warning.
//
// Only the missing are written: upserting a scheduler that is there replaces its next job (see
// upsertSchedule), which would move a due tick to the next one. Several workers looking at once
// make no second scheduler (its id is its key) and no second run of a tick (a tick's job id is
// `repeat:<scheduler>:<millis>`); the writer's key (SET NX, a few seconds) keeps the others from
// writing what one is writing, and the writer looks once more after taking it, so a scheduler
// another worker has just written is left as it is.
//
// What it costs: a look is one round trip of one ZSCORE per planned scheduler; writing again adds a
// SET NX, that look once more, and one script per missing scheduler.
import type { Logger } from '../log.js';
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import type { Queues } from './queues.js';
import { upsertSchedule, type PlannedSchedule } from './schedules.js';
import { thisWorker, workerName } from './worker-identity.js';

/** How long one worker holds the right to write the lost schedulers: longer than writing them takes. */
const WRITER_TTL_MS = 10_000;

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
  const taken = await redis.set(keysOf(root).schedulesWriter, workerName(thisWorker()), 'PX', WRITER_TTL_MS, 'NX');
  if (taken !== 'OK') return [];
  const missing = await missingSchedules(redis, queues, planned);
  for (const s of missing) await upsertSchedule(queues, s);
  return missing.map((s) => s.id);
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
