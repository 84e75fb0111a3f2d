// The one place that decides whether BullMQ retries: FeedsyncError.retryable and the report's
// outcome map to "done", "retry" (a plain Error: exponential backoff, attempts left) or "fail"
// (UnrecoverableError: no retry, retrying cannot help).
import { UnrecoverableError } from 'bullmq';
import { AbortedError, FeedsyncError, isRetryable } from '../errors.js';
import type { RunReport } from './job-definition.js';

export type Verdict = 'done' | 'retry' | 'fail';

/**
 * Outcomes of a run that could not be done: they fail the job (retried while `retryable` and
 * attempts remain). Every other outcome is what a finished run found (`ok`, `partial`, `guard`,
 * `rejected`, `cancelled`, `paused`, `skipped`, and any added later): the job completes with the report as its
 * return value, so the queue UI, `enqueue`, /status, metrics and alerts all say the outcome's own
 * name, never "failed". `taken-over` is no failure either, but its job is left to the attempt that
 * took it over (processor.ts takenOver); nor is `handed-back`, whose job its worker's shutdown
 * moved back to wait (processor.ts handedBack). A finished run that a rerun may improve (`retryable`: a partial read cut
 * by a transient error) is retried while attempts remain; its last attempt completes. 'partial' is
 * not retried otherwise: retrying the whole feed at once would redo the items that went through;
 * the next run picks the failed ones up.
 */
const FAILED_OUTCOMES: ReadonlySet<string> = new Set(['unavailable', 'aborted', 'failed', 'error']);

/** Whether a run with this outcome could not be done (a failed job), rather than finished with what it found. */
export function isFailedOutcome(outcome: string): boolean {
  return FAILED_OUTCOMES.has(outcome);
}

/** `attempt`: the attempt this report is of; without it, attempts are taken to remain. */
export function verdictFor(report: RunReport, attempt?: { made: number; max: number }): Verdict {
  const retry = report.retryable || report.outcome === 'unavailable';
  if (isFailedOutcome(report.outcome)) return retry ? 'retry' : 'fail';
  const attemptsLeft = !attempt || attempt.made < attempt.max;
  return retry && attemptsLeft ? 'retry' : 'done';
}

/** The error to throw for a report that failed: BullMQ retries a plain Error only. */
export function reportError(report: RunReport, verdict: Exclude<Verdict, 'done'>): Error {
  const err = verdict === 'retry' ? new Error(report.summary) : new UnrecoverableError(report.summary);
  return Object.assign(err, { report });
}

/** Map an error thrown by a processor to what BullMQ should do with it. */
export function toJobError(err: unknown, signal?: AbortSignal): Error {
  if (err instanceof UnrecoverableError) return err;
  // A run cut short by a shutdown or a lost lock is retried; a user's cancel (AbortedError without
  // an aborted signal of ours) is not.
  if (signal?.aborted) return err instanceof Error ? err : new Error(String(err));
  if (err instanceof AbortedError) return unrecoverable(err);
  if (err instanceof FeedsyncError) return isRetryable(err) ? err : unrecoverable(err);
  // Unknown errors (bugs, Redis hiccups) get the retries: they are cheap and the report says so.
  return err instanceof Error ? err : new Error(String(err));
}

function unrecoverable(err: Error): UnrecoverableError {
  const out = new UnrecoverableError(err.message);
  (out as { cause?: unknown }).cause = err;
  return out;
}
