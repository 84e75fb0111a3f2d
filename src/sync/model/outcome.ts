// What a lane's steps decide and what its run comes to, in the words the report uses: the kernel's,
// because the guard decides it, the paging and the run end with it and the report prints it.
import {
  AbortedError,
  CancelRequest,
  CHATBOT_LOCK_LOST,
  isRetryable,
  JOB_LOCK_LOST,
  WORKER_SHUTDOWN,
} from '../../errors.js';
import type { FieldChange } from '../../listing/canonical.js';
import type { DeleteReason, PlannedDelete } from './plan-types.js';

/**
 * failed: the feed's run could not be done (auth refused, an endless list, ...): see message.
 * rejected: the feed was read but what it holds cannot be used (a file that is not the feed's, a
 * mapped column missing, every record rejected, or far fewer valid than the last good run): nothing
 * deleted, the mark and the last good sync stay where they were (sync/settle/rejection.ts).
 * aborted, cancelled, taken-over, handed-back: stopped by its signal (stoppedOutcome).
 */
export type SyncOutcome =
  | 'ok'
  | 'partial'
  | 'guard'
  | 'rejected'
  | 'unavailable'
  | 'aborted'
  | 'cancelled'
  | 'taken-over'
  | 'handed-back'
  | 'failed';

/** The words of a run its signal stopped (stoppedOutcome). */
export type StoppedOutcome = 'aborted' | 'cancelled' | 'taken-over' | 'handed-back';

/**
 * How a run its signal stopped ends, by the signal's reason: `cancelled` when an operator cancelled
 * it (`feedsync cancel`: no retry), `taken-over` when its worker's job lock or a worker job's chatbot
 * lock was lost (JOB_LOCK_LOST, CHATBOT_LOCK_LOST: the job goes back to the queue and another attempt
 * runs it, recording its own outcome; not a failed run), `handed-back` when its worker shut down gracefully (WORKER_SHUTDOWN: the job went back
 * to the queue at once and another worker runs it; not a failed run either), else `aborted` (its
 * deadline, a foreground run's lost chatbot lock, Ctrl-C: retried). The one place the word is chosen: the report, the change log's record of the run, the
 * alert rules and the run history (queue/processor.ts) all say this one.
 */
export function stoppedOutcome(reason: unknown): StoppedOutcome {
  if (reason instanceof CancelRequest) return 'cancelled';
  if (reason === JOB_LOCK_LOST || reason === CHATBOT_LOCK_LOST) return 'taken-over';
  return reason === WORKER_SHUTDOWN ? 'handed-back' : 'aborted';
}

/**
 * How a step that threw ends (the paging of a sync's or an undo's chatbot): by its signal's reason
 * when its signal stopped it (stoppedOutcome), `aborted` for an abort of its own, `unavailable` when a
 * later try may get through, else `failed`.
 */
export function thrownOutcome(
  err: unknown,
  signal: AbortSignal | undefined,
): StoppedOutcome | 'unavailable' | 'failed' {
  if (signal?.aborted) return stoppedOutcome(signal.reason);
  if (err instanceof AbortedError) return 'aborted';
  return isRetryable(err) ? 'unavailable' : 'failed';
}

/** What a dry run would do (also the plan the executor carried out). */
export interface PlanView {
  creates: string[];
  updates: Array<{ key: string; reason: 'fields' | 'unlisted'; changes: FieldChange[] }>;
  deletes: Array<{ key: string; reason: DeleteReason; keyType: string; deleteKey: string }>;
}

/** What the delete guards decided (settle/guards.ts). */
export interface GuardDecision {
  /** none: nothing to delete; passed: checks passed; tripped: deletes withheld; forced: checks overridden */
  outcome: 'none' | 'passed' | 'tripped' | 'forced';
  allowed: PlannedDelete[];
  withheld: PlannedDelete[];
  /** absent listings still inside their grace period */
  waiting: PlannedDelete[];
  reasons: string[];
  message?: string;
  /** first-missing marks to record, and marks to drop (the key is back or gone from the service) */
  marks: { set: Array<[string, string]>; clear: string[] };
  /**
   * the display rules changed since the lane's last run applied them (settle/rule-change.ts): which
   * (old → new), how many listings the run's removals by them take (counted toward the limits), a
   * few of their keys, and whether the guard held them
   */
  ruleChange?: {
    rules: Array<{ rule: string; from: string; to: string }>;
    removals: number;
    keys: string[];
    held: boolean;
  };
}
