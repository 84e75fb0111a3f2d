// A worker's graceful shutdown hands its running jobs back to the queue at once, for another worker
// to take, instead of draining them (BullMQ's worker.close() waits for them without a limit) or
// leaving them to be found stalled (lockDuration + stalledInterval later). workers.ts aborts each
// running job's signal with WORKER_SHUTDOWN (errors.ts; BullMQ's cancelAllJobs); the processor lets the run
// stop (no new call, the calls in flight finish, what they wrote is recorded), releases the
// chatbot locks and moves the job back to wait with job.moveToWait: at the head of the line
// (BullMQ pushes it back on the side jobs are taken from), no attempt spent, since a shutdown is
// not the job's failure (its run is recorded `handed-back`: processor.ts handedBack). BullMQ is told
// by WaitingError, which it treats as "moved already".
import { WaitingError, type Job } from 'bullmq';
import { WORKER_SHUTDOWN } from '../errors.js';

/** The job's signal was aborted by its worker's shutdown (not by a cancel, nor a lost lock). */
export function shuttingDown(signal: AbortSignal | undefined): boolean {
  return Boolean(signal?.aborted && signal.reason === WORKER_SHUTDOWN);
}

/** Moves the job back to wait (its lock given up) and throws what tells BullMQ it was moved. */
export async function handBack(job: Job, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
