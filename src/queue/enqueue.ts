// Ops reruns through the queue. Each rerun is deduplicated per target with `keepLastIfActive`:
// while a run of the target is active, the rerun is kept (the latest one) and enqueued when that
// run ends, so it never runs beside it and is never dropped; while one is already waiting, the
// rerun is that waiting job. A unique job id (never a fixed one: BullMQ ignores an add whose id a
// retained completed job still has) lets `--wait` follow a rerun that does not exist yet.
import { randomUUID } from 'node:crypto';
import { Job, QueueEvents } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { closeRedis } from '../redis/connection.js';
import { within } from '../redis/deadline.js';
import type { JobKind } from './names.js';
import type { Queues } from './queues.js';

export interface Enqueued {
  /** the job that will do the work: the new one, or the one already waiting for this target */
  jobId: string;
  /** queued: a new job; after-active: it will be enqueued when the active run ends; joined: one was already waiting */
  status: 'queued' | 'after-active' | 'joined';
}

function dedupKey(kind: JobKind, target: string): string {
  return `${kind}-${target}`;
}

export async function enqueueJob(
  redis: RedisClient,
  queues: Queues,
  kind: JobKind,
  target: string,
  data: Record<string, unknown>,
): Promise<Enqueued> {
  const queue = queues[kind];
  const key = dedupKey(kind, target);
  const jobId = `${key}-${randomUUID()}`.replace(/:/g, '_');
  const job = await queue.add(queue.name, data, { jobId, deduplication: { id: key, keepLastIfActive: true } });
  if (job.id === jobId) return { jobId, status: 'queued' };
  // Deduplicated: BullMQ answers with the id of the job holding the key. Ours is either stored to
  // follow it (it was active), or already created because it has just ended.
  const stored = await redis.hget(queue.toKey(`dn:${key}`), 'jid');
  if (stored === jobId || (await Job.fromId(queue, jobId))) return { jobId, status: 'after-active' };
  return { jobId: job.id ?? jobId, status: 'joined' };
}

/** how long the events' reader has to close before its connection is dropped */
const CLOSE_EVENTS_MS = 1000;

export type Finished = { state: 'completed'; returnvalue: unknown } | { state: 'failed'; failedReason: string };

/**
 * Wait until a job has finished: completed, or failed after its last attempt. The job may not exist
 * yet (a rerun stored behind an active run), so events are watched from before the first look, and
 * a slow poll covers an event missed while Redis was away.
 */
export async function waitForJob(
  redis: RedisClient,
  queues: Queues,
  kind: JobKind,
  jobId: string,
  signal?: AbortSignal,
  /** each progress the job reports (job.updateProgress, QueueEvents' `progress` event), as it comes */
  onProgress?: (data: unknown) => void,
): Promise<Finished> {
  const queue = queues[kind];
  // A connection of its own: QueueEvents blocks on it; BullMQ leaves a passed-in connection open.
  const connection = redis.duplicate();
  connection.on('error', () => {}); // an outage shows as a late answer; the slow poll covers missed events
  const events = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix, lastEventId: '$' });
  let poll: NodeJS.Timeout | undefined;
  try {
    events.on('error', () => {});
    // bounded by the caller's deadline too: a connection Redis refuses (NOAUTH after a password was
    // set) is never ready, and BullMQ's wait for it has no end of its own
    await untilAborted(events.waitUntilReady(), signal);
    const finished = new Promise<Finished>((resolve, reject) => {
      const check = () =>
        finishedState(queue, jobId).then((f) => {
          if (f) resolve(f);
        }, reject);
      events.on('completed', (e) => e.jobId === jobId && check());
      events.on('failed', (e) => e.jobId === jobId && check());
      if (onProgress) events.on('progress', (e) => e.jobId === jobId && onProgress(e.data));
      poll = setInterval(check, 2000);
      void check();
    });
    return await untilAborted(finished, signal);
  } finally {
    clearInterval(poll);
    // bounded: with Redis gone, QueueEvents' close waits for its blocked read to end, which never
    // comes; the connection dropped below ends it
    await within(
      events.close().catch(() => undefined),
      CLOSE_EVENTS_MS,
      undefined,
    );
    await closeRedis(connection);
  }
}

/** `p`, or the signal's reason once it aborts first. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function finishedState(queue: Queues[JobKind], jobId: string): Promise<Finished | undefined> {
  // The state first, then the job's data: a job read just before it finished has no failedReason
  // or returnvalue yet, even when the state read a moment later says it finished. BullMQ moves a
  // job and writes those fields in one script, so data read after a final state is complete.
  const state = await queue.getJobState(jobId);
  if (state !== 'completed' && state !== 'failed') return undefined;
  const job = await Job.fromId(queue, jobId);
  if (!job) return undefined;
  return state === 'completed' ? { state, returnvalue: job.returnvalue } : { state, failedReason: job.failedReason };
}
