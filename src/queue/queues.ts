// One BullMQ queue per job kind, with the job options every job gets: three attempts with
// exponential backoff for transient failures, and bounded completed/failed sets.
import { Queue, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { JOB_KINDS, QUEUE_NAMES, type JobKind } from './names.js';

const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 5_000 },
  removeOnComplete: { count: 200, age: 7 * 24 * 3600 },
  removeOnFail: { count: 500, age: 30 * 24 * 3600 },
};

export type Queues = Record<JobKind, Queue>;

/**
 * `onError`: a queue repeats its connection's errors (Redis away, a failover); whoever owns the
 * connection reports those already, so by default they are not printed a second time per queue.
 */
export function createQueues(
  connection: RedisClient,
  prefix: string,
  jobOptions: JobsOptions = {},
  onError: (err: Error) => void = () => {},
): Queues {
  const make = (kind: JobKind) => {
    const queue = new Queue(QUEUE_NAMES[kind], {
      connection,
      prefix,
      defaultJobOptions: { ...DEFAULT_JOB_OPTIONS, ...jobOptions },
    });
    queue.on('error', onError);
    return queue;
  };
  return Object.fromEntries(JOB_KINDS.map((k) => [k, make(k)])) as Queues;
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}
