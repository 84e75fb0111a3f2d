// The workers of one process: one BullMQ worker per queue, each with its own Redis connection and
// named after the process (`host:pid`, worker-identity.ts: BullMQ stores it on each job it takes), a
// watchdog that recreates a worker which stopped taking jobs (seen after Redis outages), and a
// shutdown that hands the running jobs back to the queue at once (hand-back.ts) and gives their runs
// a deadline to stop (worker.close() alone waits for running jobs without limit).
//
// Recovery from a worker that died (SIGKILL, OOM, a lost machine) is twofold. On the same host (same
// boot and PID namespace: processes that see one another's PIDs), a sibling worker process notices
// within about a second (job-holders.ts: each running job's holder record, swept every SWEEP_MS by
// every worker process, judged by lock-holder.ts holderGone) and hands the job back to the queue,
// counted stalled as BullMQ's check would count it. Elsewhere, and where no sibling runs, it is
// BullMQ's stalled-job check (https://docs.bullmq.io/guide/jobs/stalled, and WorkerOptions in the
// API reference): a running job's lock (lockDuration) is renewed by its worker's timer; one not
// renewed expires, and the next stalled check (each stalledInterval, one per queue across the fleet:
// the check takes a key for its interval) finds the job without a lock and moves it back to wait,
// where any worker takes it. So a dead worker's job runs again elsewhere lockDuration (less the
// time since its last renewal) plus at most stalledInterval after the death. A job found stalled
// more than maxStalledCount times, either way, fails (processor.ts: "its worker stopped while
// running it N times", recorded as a failed run). BullMQ's defaults are 30 s, 30 s and 1: up to a
// minute before another worker resumes the job. feedsync's (config/schema.ts, worker.*) are 8 s, 3 s
// and 2: resumed 6-11 s after the death from another host; the cost, in Redis calls, is in
// docs/runbook.md ("Several workers").
import { Worker, type Processor, type Queue } from 'bullmq';
import type { Logger } from '../log.js';
import { closeRedis, createRedis, type RedisClient } from '../redis/connection.js';
import type { RedisSettings } from '../redis/settings.js';
import { within } from '../redis/deadline.js';
import type { JobKind } from './names.js';
import type { Queues } from './queues.js';
import { JOB_LOCK_LOST, JOB_LOST, WORKER_SHUTDOWN } from '../errors.js';
import { thisWorker, workerName } from './worker-identity.js';
import { idleCollection, type IdleCollection, type IdleCollectionSettings } from './idle-collection.js';
import { holdJob, startSweeping } from './job-holders.js';
import { jobGone } from './job-gone.js';
import { connectionErrorLog } from '../redis/connection-errors.js';

export interface WorkerSettings {
  redis: RedisSettings;
  concurrency: number;
  /** BullMQ's lockDuration: a running job's lock, renewed once an eighth to a quarter of it has passed (lockRenewTime below) */
  lockDurationMs: number;
  /** BullMQ's stalledInterval: how often the queue is looked at for jobs whose lock expired */
  stalledIntervalMs: number;
  /** BullMQ's maxStalledCount: times a job may be found stalled and run again before it fails (default 2, as worker.maxStalledCount) */
  maxStalledCount?: number;
  /** jobs waiting and none started for this long: the worker is recreated */
  watchdogMs: number;
  /** a full collection once every job of the process has ended and it stayed idle (idle-collection.ts); absent: none */
  idleCollection?: IdleCollectionSettings;
  logger: Logger;
}

export interface WorkerSet {
  /** every worker is running (for /healthz) */
  running(): boolean;
  /** workers recreated by the watchdog so far */
  readonly restarts: number;
  /** the current worker of a queue (a new one after the watchdog recreated it) */
  worker(kind: JobKind): Worker | undefined;
  /**
   * stop taking jobs, abort the running ones, which their processors hand back to the queue (another
   * worker takes each at once); what has not stopped by the deadline is force-closed
   */
  close(deadlineMs: number): Promise<void>;
}

interface Slot {
  kind: JobKind;
  worker: Worker;
  closeConnection: () => Promise<void>;
  /** when the worker last started a job, and how many it runs now */
  activity: { lastStart: number; busy: number };
}

/** Where a slot records which process runs each of its jobs (job-holders.ts). */
interface Holders {
  redis: RedisClient;
  key: string;
}

/**
 * One queue's BullMQ worker on a connection of its own, its jobs counted around the processor; a job
 * taken as the process began to close gets an aborted signal (hand-back.ts): it goes back at once.
 */
function createSlot(
  kind: JobKind,
  processor: Processor,
  queues: Queues,
  settings: WorkerSettings,
  closing: () => boolean,
  idle: IdleCollection,
  holders: Holders,
): Slot {
  const connection = createRedis(settings.redis, { name: `feedsync-worker-${kind}` });
  connection.on('error', () => {}); // reported once, through the worker's 'error' event below
  const activity = { lastStart: Date.now(), busy: 0 };
  // Counted around the processor itself: a job moved to delayed emits neither completed nor failed.
  // Its holder record is deleted there too, however the job ends (a hand-back's included).
  const counted: Processor = async (job, token, signal) => {
    activity.lastStart = Date.now();
    activity.busy++;
    idle.started();
    const release = await holdJob(holders.redis, holders.key, job, token, settings.logger);
    try {
      return await processor(job, token, closing() ? AbortSignal.abort(WORKER_SHUTDOWN) : signal);
    } finally {
      await release();
      activity.busy--;
      idle.ended();
    }
  };
  const worker = new Worker(queues[kind].name, counted, {
    connection,
    prefix: settings.redis.keys.bullPrefix,
    // stored on each job it takes (`processedBy`): who runs what, in Bull Board, /status and `feedsync runs`
    name: workerName(thisWorker()),
    concurrency: settings.concurrency,
    lockDuration: settings.lockDurationMs,
    // BullMQ's default (half the lock) looks every quarter but renews only when more than a quarter
    // has passed, so a tick that finds exactly a quarter (its clock's milliseconds) waits a half: 4 s
    // of an 8 s lock left, a dead worker's job resumed from 4 s. A quarter here looks every eighth:
    // renewed after an eighth or a quarter, never less than three quarters of the lock left.
    lockRenewTime: settings.lockDurationMs / 4,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: bullMaxStalledCount(settings),
  });
  // BullMQ stops renewing a lock it cannot extend; the job must stop too, or a second worker
  // that recovers it as stalled would run beside this one. The job is that attempt's now: this one
  // ends `taken-over` (JOB_LOCK_LOST, processor.ts takenOver), not failed; unless the job is gone
  // from Redis, which no attempt will take (JOB_LOST: a stopped run, heard of). (The stop waits for
  // that one look, a round trip: the chatbot locks keep a second attempt from writing meanwhile.)
  worker.on('lockRenewalFailed', (ids: string[]) => {
    for (const id of ids) void lockLostReason(queues[kind], id).then((why) => worker.cancelJob(id, why));
  });
  const connectionError = connectionErrorLog(
    settings.logger,
    { queue: worker.name },
    `the worker of queue ${worker.name} cannot reach Redis; it reconnects and takes jobs again once Redis answers (/healthz answers 503 meanwhile)`,
  );
  worker.on('error', (err) => {
    if (!connectionError(err)) settings.logger.error({ err, queue: worker.name }, 'worker error');
  });
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
  const idle: IdleCollection = settings.idleCollection
    ? idleCollection(settings.idleCollection)
    : { started: () => {}, ended: () => {}, stop: () => {} };

  // the records of which process runs each job, and the sweep of those whose process died here (job-holders.ts)
  const holders: Holders = {
    redis: createRedis(settings.redis, { name: 'feedsync-worker-holders' }),
    key: settings.redis.keys.jobHolders,
  };
  holders.redis.on('error', () => {}); // the sweep reports what it could not do
  const stopSweeping = startSweeping({
    ...holders,
    queues: new Map(Object.values(queues).map((q) => [q.name, q])),
    maxStalledCount: bullMaxStalledCount(settings),
    lockDurationMs: settings.lockDurationMs,
    logger,
  });

  const create = (kind: JobKind, processor: Processor): Slot =>
    createSlot(kind, processor, queues, settings, () => closing, idle, holders);

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
          // (an idle worker, forced: a close that fails or hangs is ended by closing its connection next)
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
      stopSweeping();
      idle.stop();
      const all = [...slots.values()];
      // close() first: the worker takes no new job; then its running jobs are told to stop and go back
      const graceful = Promise.all(all.map((s) => s.worker.close()));
      for (const s of all) s.worker.cancelAllJobs(WORKER_SHUTDOWN);
      // A stopped run waits only for its calls in flight; one that does not stop by the deadline is
      // forced: its job, still active, is found stalled and taken over (lockDuration + stalledInterval).
      if (!(await withDeadline(graceful, deadlineMs))) {
        logger.warn({ deadlineMs }, 'running jobs did not stop before the shutdown deadline; closing anyway');
        await withDeadline(Promise.all(all.map((s) => s.worker.close(true))), 2000);
      }
      await Promise.all(all.map((s) => s.closeConnection()));
      await closeRedis(holders.redis);
    },
  };
}

/**
 * Why a running job's lock renewal failed: taken over (the job is still in a list of its queue:
 * another attempt has it, or a stalled check or a sweep put it back for one), or lost with the job
 * (in none: job-gone.ts). A look that fails or takes more than a second says taken over, as before it was made.
 */
async function lockLostReason(queue: Queue, id: string): Promise<string> {
  return (await jobGone(() => queue.getJobState(id))) ? JOB_LOST : JOB_LOCK_LOST;
}

/**
 * BullMQ's maxStalledCount: one more than the config's, since the processor fails a job found
 * stalled more than the config's count itself, recording its run (processor.ts), scheduled jobs
 * too (BullMQ's check spares them).
 */
function bullMaxStalledCount(settings: WorkerSettings): number {
  return (settings.maxStalledCount ?? 2) + 1;
}

/** true when `p` settled before the deadline */
function withDeadline(p: Promise<unknown>, ms: number): Promise<boolean> {
  return within(
    p.then(() => true),
    ms,
    false,
  );
}
