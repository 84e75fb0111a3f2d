// Ops reruns through the queue. Each rerun is deduplicated per target with `keepLastIfActive`:
// while a run of the target is active, the rerun is kept (the latest one) and enqueued when that
// run ends, so it never runs beside it and is never dropped; while one is already waiting, the
// rerun is that waiting job. A unique job id (never a fixed one: BullMQ ignores an add whose id a
// retained completed job still has) lets `--wait` follow a rerun that does not exist yet.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { closeRedis } from '../redis/connection.js';
import { byDeadline } from '../redis/deadline.js';
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

/** how often the job's state is read, beside the events (which a Redis away, or refusing, never sends) */
const POLL_MS = 2000;
/** how long one read of the events blocks in Redis */
const EVENTS_BLOCK_MS = 5000;

export type Finished = { state: 'completed'; returnvalue: unknown } | { state: 'failed'; failedReason: string };

/**
 * Wait until a job has finished: completed, or failed after its last attempt. The job may not exist
 * yet (a rerun stored behind an active run): its state is read now and every POLL_MS, and at once
 * when the queue's events say it ended. A read of the state that fails (Redis refusing the
 * connection's commands: NOAUTH) ends the wait with that error; `signal`, the caller's deadline, ends
 * it with the signal's reason. The connection the wait opened has ended when it returns.
 */
export async function waitForJob(
  redis: RedisClient,
  queues: Queues,
  kind: JobKind,
  jobId: string,
  signal?: AbortSignal,
  /** each progress the job reports (job.updateProgress, the `progress` event), as it comes */
  onProgress?: (data: unknown) => void,
): Promise<Finished> {
  const queue = queues[kind];
  let poll: NodeJS.Timeout | undefined;
  let events: { stop(): Promise<void> } | undefined;
  try {
    const finished = new Promise<Finished>((resolve, reject) => {
      const check = () =>
        finishedState(queue, jobId).then((f) => {
          if (f) resolve(f);
        }, reject);
      events = watchEvents(redis, queue.toKey('events'), (e) => {
        if (e.jobId !== jobId) return;
        if (e.event === 'completed' || e.event === 'failed') void check();
        else if (e.event === 'progress' && onProgress) onProgress(parsed(e.data));
      });
      poll = setInterval(check, POLL_MS);
      void check();
    });
    return await byDeadline(finished, signal);
  } finally {
    clearInterval(poll);
    await events?.stop();
  }
}

/**
 * The events BullMQ writes to a queue's stream (`completed`, `failed`, `progress`: its field `data`
 * is JSON), read from now on, each given to `onEvent` as its fields; `stop()` ends the reading and
 * its connection. The read blocks in Redis, so on a connection of its own, made here and ended here
 * whatever state it is in. (BullMQ's QueueEvents reads on a copy of the connection it is given, made
 * and kept by BullMQ: its close first waits for that copy to be ready, which a copy Redis refuses
 * (NOAUTH after a password was set) never is, so the copy reconnected every second for good and kept
 * `feedsync cancel` alive after its last line; and its read's watchdog reconnects a connection
 * ended under it.) A read that fails (Redis away or refusing) is tried again after POLL_MS: the
 * reads of the job's state say what Redis answered.
 */
function watchEvents(
  redis: RedisClient,
  key: string,
  onEvent: (fields: Record<string, string>) => void,
): { stop(): Promise<void> } {
  const connection = redis.duplicate();
  connection.on('error', () => {}); // (said by the reads of the state, on the caller's connection)
  const stopping = new AbortController();
  const reading = (async () => {
    let id = '$';
    while (!stopping.signal.aborted) {
      try {
        // until stopped: a read in flight when the connection dropped is kept by ioredis to send
        // again once it is ready, and never settles if it never is (Redis refusing it) and it ends
        const read = await byDeadline(connection.xread('BLOCK', EVENTS_BLOCK_MS, 'STREAMS', key, id), stopping.signal);
        for (const [, entries] of read ?? [])
          for (const [entryId, fields] of entries) {
            id = entryId;
            onEvent(fieldsOf(fields));
          }
      } catch {
        // a read that fails (Redis away or refusing) is tried again: the reads of the job's state say
        // what Redis answered (above). (The sleep rejects only when stopped, which ends the loop.)
        await sleep(POLL_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  })();
  return {
    stop: async () => {
      stopping.abort();
      // no QUIT: it would wait behind the blocked read
      await closeRedis(connection, { quit: false });
      await reading;
    },
  };
}

/** A stream entry's [field, value, field, value, …] as an object. */
function fieldsOf(flat: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
  return fields;
}

/** a progress event's data: JSON as BullMQ writes it, else the text as it is */
function parsed(data: string | undefined): unknown {
  if (data === undefined) return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data; // (not JSON: the text as it is, as said above)
  }
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
