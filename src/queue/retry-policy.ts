// The one place that decides whether BullMQ retries: FeedsyncError.retryable and the report's
// outcome map to "done", "retry" (a plain Error: exponential backoff, attempts left) or "fail"
// (UnrecoverableError: no retry, retrying cannot help).
import { UnrecoverableError } from 'bullmq';
import { AbortedError, FeedsyncError, isRetryable } from '../errors.js';
import type { RunReport } from './job-definition.js';

export type Verdict = 'done' | 'retry' | 'fail';

/**
 * Outcomes that fail the job ('rejected': the feed's file cannot be used, and a retry reads it again). 'partial' is not one: the run finished, the failed items are in the
 * report, and retrying the whole feed at once would redo the items that went through; the next run
 * picks the failed ones up. A transient failure sets `retryable` whatever the outcome.
 */
const FAILED_OUTCOMES = new Set(['guard', 'rejected', 'unavailable', 'aborted', 'failed', 'error']);

export function verdictFor(report: RunReport): Verdict {
  if (report.retryable) return 'retry';
  if (report.outcome === 'unavailable') return 'retry';
  return FAILED_OUTCOMES.has(report.outcome) ? 'fail' : 'done';
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
