// What a lane's steps decide and what its run comes to, in the words the report uses: the kernel's,
// because the guard decides it, the paging and the run end with it and the report prints it.
import { AbortedError, isRetryable, stoppedOutcome, type StoppedOutcome } from '../../errors.js';
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

// (the stop words are chosen beside the stop reasons they read, errors.ts, so that settings and smoke say them too)
export { stoppedOutcome, type StoppedOutcome } from '../../errors.js';

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
