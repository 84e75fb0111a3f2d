// The report of one `feedsync undo`: plain JSON (the CLI's --json, the job's return value, run
// history) and the table a person reads, in the sync report's words (create, update old → new,
// delete), with the conflicts and what cannot be undone. Lists are bounded (first SHOWN, and the
// number left out).
import { describeChange, type ChangeView } from '../format/change.js';
import type { FieldChange } from '../listing/canonical.js';
import type { ItemFailure, ItemFailureView } from '../sync/index.js';
import type { UndoConflict } from './plan-undo.js';
import { feedsyncCommand } from '../format/invocation.js';

/** guard: the change log did not keep all of the run and --force was not given: nothing was done */
export type UndoOutcome =
  'ok' | 'partial' | 'guard' | 'unavailable' | 'aborted' | 'cancelled' | 'taken-over' | 'handed-back' | 'failed';

export interface UndoReport {
  /** this undo's own run id (it can be undone in turn) */
  runId: string;
  /** the run undone */
  undoOf: string;
  feed: string;
  chatbot: string;
  outcome: UndoOutcome;
  retryable: boolean;
  dryRun: boolean;
  force: boolean;
  message?: string;
  counts: {
    deleted: number;
    updated: number;
    created: number;
    unchanged: number;
    conflicts: number;
    cannot: number;
    failed: number;
    duplicatesNotRecreated: number;
    removedByRuleNotRecreated: number;
  };
  plan: {
    creates: string[];
    updates: Array<{ key: string; changes: FieldChange[] }>;
    deletes: string[];
    /**
     * how many of each list were left out of the report, by list: the shape the queue's bound on a
     * kept report adds to (src/queue/report-size.ts), so a job's return value counts both
     */
    omitted?: { creates?: number; updates?: number; deletes?: number };
  };
  conflicts: UndoConflict[];
  cannot: Array<{ key?: string; reason: string }>;
  failures: ItemFailure[];
  /**
   * What the next pulls of the feed do with the undone changes (the feed mark is left as it was): an
   * incremental pull reads only what changed after the mark, so it does not redo them; a full pull
   * (every pull of a feed that is not incremental) redoes whatever the feed still says.
   */
  next: { incremental?: string; full: string };
  calls: number;
  summary: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/**
 * What formatUndoReport reads of an undo report, and no more: `enqueue --wait` formats a job's return
 * value as far as its schema checked it (cli/job-report.ts), and the compiler holds that schema to
 * every field named here. An UndoReport is one.
 */
export interface UndoReportView extends Pick<
  UndoReport,
  'runId' | 'undoOf' | 'dryRun' | 'message' | 'cannot' | 'next' | 'summary'
> {
  plan: Pick<UndoReport['plan'], 'creates' | 'deletes' | 'omitted'> & {
    updates: Array<{ key: string; changes: ChangeView[] }>;
  };
  conflicts: Array<Pick<UndoConflict, 'key' | 'reason' | 'forced'>>;
  failures: ItemFailureView[];
}

/** Most entries of each list a report carries. */
export const SHOWN = 200;

export function formatUndoReport(r: UndoReportView): string {
  const would = r.dryRun ? 'would ' : '';
  const lines = [`${r.summary}`];
  if (r.message) lines.push(`  ${r.message}`);
  for (const k of r.plan.creates) lines.push(`  + ${k} ${would}create again (as it was before ${r.undoOf})`);
  for (const u of r.plan.updates) {
    const what = u.changes.length ? u.changes.map(describeChange).join('; ') : 'fields the list does not return';
    lines.push(`  ~ ${u.key} ${would}update back: ${what}`);
  }
  for (const k of r.plan.deletes) lines.push(`  - ${k} ${would}delete (${r.undoOf} created it)`);
  const omitted = Object.values(r.plan.omitted ?? {}).reduce((sum, n) => sum + n, 0);
  if (omitted)
    lines.push(
      `  … and ${omitted} more (${r.dryRun ? '--json for more' : `every one: \`${feedsyncCommand()} runs show ${r.runId}\``})`,
    );
  for (const c of r.conflicts)
    lines.push(
      `  ! ${c.key} conflict${c.forced ? ' (forced: reverted anyway)' : ' (left alone; --force to revert it)'}: ${c.reason}`,
    );
  for (const c of r.cannot) lines.push(`  ? ${c.key ?? '(run)'} cannot be undone: ${c.reason}`);
  for (const f of r.failures)
    lines.push(`  x ${f.key} ${f.op} failed: ${f.reason}${f.retryable ? ' (transient)' : ''}`);
  if (r.next.incremental) lines.push(`  next: ${r.next.incremental}`);
  lines.push(`  next: ${r.next.full}`);
  return `${lines.join('\n')}\n`;
}

export function summaryOf(r: Omit<UndoReport, 'summary'>): string {
  const c = r.counts;
  const verb = r.dryRun ? 'would undo' : 'undid';
  const parts = [
    `${c.deleted} deleted`,
    `${c.updated} updated back`,
    `${c.created} created again`,
    `${c.unchanged} already as before`,
  ];
  if (c.conflicts) parts.push(`${c.conflicts} conflict(s)`);
  if (c.cannot) parts.push(`${c.cannot} cannot be undone`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.removedByRuleNotRecreated)
    parts.push(
      `${c.removedByRuleNotRecreated} removed by a display rule not put back (the MLS does not allow them shown)`,
    );
  return `${verb} run ${r.undoOf} of ${r.feed} → ${r.chatbot}: ${parts.join(', ')} (${r.outcome}${r.dryRun ? ', dry run' : ''}) in ${r.durationMs} ms`;
}

/**
 * What the next pulls will do with `undone` changes (report.next): `mark` is the lane's stored mark
 * (RESO), when the feed is incremental. `pause`: the command that pauses the feed, when there is a
 * Redis to keep the pause in (`feedsync pause` refuses without one); else the hint names none.
 */
export function nextPulls(
  undone: number,
  incremental: { mark: string | undefined } | undefined,
  pause: string | undefined,
): UndoReport['next'] {
  const keep = pause
    ? `; to keep the undo, fix the feed before the next sync, or pause it (${pause})`
    : '; to keep the undo, fix the feed before the next sync, or run no sync of it until then';
  if (!incremental)
    return {
      full: `the next sync reads the feed whole and redoes what the feed still says: up to ${undone} change(s) undone${keep}`,
    };
  const after = incremental.mark === undefined ? 'the stored mark' : incremental.mark;
  return {
    incremental: `the next incremental pull reads only records changed from ${after} on: it does not redo the ${undone} change(s) undone, except for a record stamped from then on or changed again (synced as usual)`,
    full: `the next full pull (${feedsyncCommand()} sync --full, or schedule.full) reads every record and redoes what the feed still says: up to ${undone} change(s) undone${keep}`,
  };
}
