// The workers of one process: one BullMQ worker per queue, each with its own Redis connection, a
// watchdog that recreates a worker which stopped taking jobs (seen after Redis outages), and a
// shutdown with a deadline of its own (worker.close() waits for running jobs without limit).
import { Worker, type Processor } from 'bullmq';
import type { Logger } from '../log.js';
import { closeRedis, createRedis } from '../redis/connection.js';
import type { RedisSettings } from '../redis/settings.js';
import { within } from '../redis/deadline.js';
import type { JobKind } from './names.js';
import type { Queues } from './queues.js';

export interface WorkerSettings {
  redis: RedisSettings;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** jobs waiting and none started for this long: the worker is recreated */
  watchdogMs: number;
  logger: Logger;
}

export interface WorkerSet {
  /** every worker is running (for /healthz) */
  running(): boolean;
  /** workers recreated by the watchdog so far */
  readonly restarts: number;
  /** the current worker of a queue (a new one after the watchdog recreated it) */
  worker(kind: JobKind): Worker | undefined;
  /** stop taking jobs, let running jobs finish until the deadline, then abort them and force close */
  close(deadlineMs: number): Promise<void>;
}

interface Slot {
  kind: JobKind;
  worker: Worker;
  closeConnection: () => Promise<void>;
  /** when the worker last started a job, and how many it runs now */
  activity: { lastStart: number; busy: number };
}

/** One queue's BullMQ worker on a connection of its own, its jobs counted around the processor. */
function createSlot(kind: JobKind, processor: Processor, queues: Queues, settings: WorkerSettings): Slot {
  const connection = createRedis(settings.redis, { name: `feedsync-worker-${kind}` });
  connection.on('error', () => {}); // reported once, through the worker's 'error' event below
  const activity = { lastStart: Date.now(), busy: 0 };
  // Counted around the processor itself: a job moved to delayed emits neither completed nor failed.
  const counted: Processor = async (job, token, signal) => {
    activity.lastStart = Date.now();
    activity.busy++;
    try {
      return await processor(job, token, signal);
    } finally {
      activity.busy--;
    }
  };
  const worker = new Worker(queues[kind].name, counted, {
    connection,
    prefix: settings.redis.keys.bullPrefix,
    concurrency: settings.concurrency,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: 1,
  });
  // BullMQ stops renewing a lock it cannot extend; the job must stop too, or a second worker
  // that recovers it as stalled would run beside this one.
  worker.on('lockRenewalFailed', (ids: string[]) => {
    for (const id of ids) worker.cancelJob(id, 'job lock lost');
  });
  worker.on('error', (err) => settings.logger.error({ err, queue: worker.name }, 'worker error'));
  return { kind, worker, closeConnection: () => closeRedis(connection), activity };
}

export function startWorkers(
  queues: Queues,
  processors: Partial<Record<JobKind, Processor>>,
  settings: WorkerSettings,
): WorkerSet {
  const { logger } = settings;
  const slots = new Map<JobKind, Slot>();
  let restarts = 0;
  let closing = false;

  const create = (kind: JobKind, processor: Processor): Slot => createSlot(kind, processor, queues, settings);

  for (const [kind, processor] of Object.entries(processors) as Array<[JobKind, Processor]>)
    slots.set(kind, create(kind, processor));

  const watchdog = setInterval(
    () => {
      void (async () => {
        for (const slot of slots.values()) {
          if (closing) return;
          const idleFor = Date.now() - slot.activity.lastStart;
          if (slot.activity.busy > 0 || idleFor < settings.watchdogMs) continue;
          const counts = await queues[slot.kind].getJobCounts('wait', 'prioritized');
          if ((counts.wait ?? 0) + (counts.prioritized ?? 0) === 0) {
            slot.activity.lastStart = Date.now();
            continue;
          }
          logger.warn(
            { queue: slot.worker.name, idleMs: idleFor, waiting: counts },
            'worker took no job while jobs wait; recreating it',
          );
          const processor = processors[slot.kind];
          if (!processor) continue;
          restarts++;
          const old = slot;
          slots.set(slot.kind, create(slot.kind, processor));
          await withDeadline(old.worker.close(true), 5000).catch(() => undefined);
          await old.closeConnection();
        }
      })().catch((err: unknown) => logger.warn({ err }, 'watchdog check failed'));
    },
    Math.max(1000, Math.min(settings.watchdogMs / 2, 30_000)),
  );
  watchdog.unref();

  return {
    running: () => !closing && [...slots.values()].every((s) => s.worker.isRunning()),
    get restarts() {
      return restarts;
    },
    worker: (kind) => slots.get(kind)?.worker,
    close: async (deadlineMs) => {
      closing = true;
      clearInterval(watchdog);
      const all = [...slots.values()];
      const graceful = Promise.all(all.map((s) => s.worker.close()));
      if (!(await withDeadline(graceful, deadlineMs))) {
        logger.warn({ deadlineMs }, 'running jobs did not finish before the shutdown deadline; aborting them');
        for (const s of all) s.worker.cancelAllJobs('worker shutting down');
        // Aborted jobs settle quickly (their HTTP calls stop); whatever is left is forced.
        if (!(await withDeadline(graceful, Math.min(5000, deadlineMs)))) {
          await withDeadline(Promise.all(all.map((s) => s.worker.close(true))), 2000);
        }
      }
      await Promise.all(all.map((s) => s.closeConnection()));
    },
  };
}

/** true when `p` settled before the deadline */
function withDeadline(p: Promise<unknown>, ms: number): Promise<boolean> {
  return within(
    p.then(() => true),
    ms,
    false,
  );
}
