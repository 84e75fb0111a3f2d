// Step "report" of a lane (docs/design.md): the lane's SyncReport (report.ts) from what its steps
// learned, and its one summary line in the log. One verdict for the dry run and the real run: the
// dry run reports what the real run would.
import type { CallCounts } from '../../api/call-counter.js';
import type { SourceReadStats, SourceSection, SourceSections } from '../../feeds/types.js';
import type { Logger } from '../../log.js';
import type { FeedSide } from '../model/feed-side.js';
import type { DisplayRules } from '../../mapping/display-config.js';
import type { ExecutionResult, ItemFailure } from '../model/execution.js';
import type { LaneTally } from '../model/lane-tally.js';
import type { GuardDecision } from '../model/outcome.js';
import type { DeleteReason, RemoteSide } from '../model/plan-types.js';
import {
  callsBetween,
  summaryLine,
  type PlanView,
  type SyncCounts,
  type SourceReport,
  type SyncOutcome,
  type SyncReport,
} from './report.js';

/** The planner's counts the report shows (model/lane-tally.ts), with the lane's own. */
export interface LaneCounted extends Pick<
  LaneTally,
  'unchanged' | 'unchangedByStamp' | 'besidePaging' | 'unchangedBySeal' | 'duplicates' | 'rewritten' | 'unplanned'
> {
  protected: number;
  otherFeeds: number;
  writtenThenGone: number;
}

export interface LaneReportInput {
  feed: string;
  chatbot: string;
  outcome: SyncOutcome;
  message?: string;
  remote: SyncReport['remote'];
  count: number;
  desired: FeedSide;
  source: { since?: string; stats?: SourceReadStats };
  guard?: GuardDecision;
  counted?: LaneCounted;
  /** a dry run: what its executor recorded instead of sending (sync/write/record.ts), and the deletes the guard held back */
  view?: PlanView;
  /** what the writes came to (a dry run: what was recorded, counted alike) */
  exec?: ExecutionResult;
  /** creates and updates the lane planned (a real run: unwritten = planned − created − updated) */
  writes?: { planned: number };
  /** records of the feed no lane took (routing) */
  routedNowhere?: number;
  unmapped: SyncReport['unmapped'];
  valuesReplaced?: SyncReport['valuesReplaced'];
  invalidText?: SyncReport['invalidText'];
  /** the feed's display rules, as resolved (the report names its purpose and sold window) */
  displayRules?: Pick<DisplayRules, 'purpose' | 'soldDays'>;
  media?: SyncReport['media'];
  calls: { before?: CallCounts; after?: CallCounts };
  stateLocation: string;
  timings: SyncReport['timings'];
  startedAt: Date;
  durationMs: number;
  attempt?: { made: number; max: number };
}

export function laneReport(r: LaneReportInput, logger: Logger): SyncReport {
  const { desired } = r;
  const failures = r.exec?.failures ?? [];
  const retryable = retryableOf(r, failures);
  const base: Omit<SyncReport, 'summary'> = {
    feed: r.feed,
    chatbot: r.chatbot,
    outcome: r.outcome,
    retryable,
    ...(retryable && desired.readErrorRetryAt && { retryAt: desired.readErrorRetryAt }),
    dryRun: r.view !== undefined,
    ...(r.message && { message: r.message }),
    counts: countsOf(r, failures.length),
    ...deletedByReason(r),
    ...callsOf(r),
    failures,
    rejected: desired.rejected,
    ...(desired.counts.rejected > desired.rejected.length && {
      omitted: { rejected: desired.counts.rejected - desired.rejected.length },
    }),
    feedDuplicates: desired.feedDuplicates,
    guard: guardOf(r.guard),
    ...displayOf(r),
    unmapped: r.unmapped,
    ...(r.valuesReplaced?.length && { valuesReplaced: r.valuesReplaced }),
    ...(r.invalidText && { invalidText: r.invalidText }),
    source: sourceOf(r),
    remote: r.remote,
    ...(r.view && { plan: r.view }),
    ...(r.media && { media: r.media }),
    stateLocation: r.stateLocation,
    timings: r.timings,
    durationMs: r.durationMs,
    startedAt: r.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
  };
  const report: SyncReport = { ...base, summary: summaryLine(base, r.attempt) };
  // info even when not ok: the report carries the detail, and the CLI prints it as a table
  logger.info({ outcome: r.outcome, ...(r.message && { detail: r.message }) }, report.summary);
  return report;
}

/**
 * An interrupted run (lost chatbot lock, deadline) is retried, and one handed back by its worker's
 * shutdown runs again at once elsewhere; one an operator cancelled is not, nor one taken over (its job runs on in the attempt that took it): the next one goes on from what this
 * one wrote (a read that failed with a transient answer, a 5xx, may succeed on a rerun even when
 * nothing of it could be used).
 */
function retryableOf(r: LaneReportInput, failures: readonly ItemFailure[]): boolean {
  // (an operator's cancel: the next scheduled run picks up the rest, as runbook.md promises)
  if (r.outcome === 'cancelled') return false;
  // (a lost job lock: the job is another attempt's, which runs what this one left)
  if (r.outcome === 'taken-over') return false;
  return (
    r.outcome === 'unavailable' ||
    r.outcome === 'aborted' ||
    r.outcome === 'handed-back' ||
    (r.outcome !== 'failed' && failures.some((f) => f.retryable)) ||
    Boolean(r.desired.readErrorRetryable)
  );
}

/** The lane's counts: the feed's side as read, the writes made (a dry run: recorded), and what was left as it is. */
function countsOf(r: LaneReportInput, failed: number): SyncCounts {
  const { desired, counted: c, guard: g } = r;
  return {
    feedRecords: desired.counts.records,
    valid: desired.counts.valid,
    rejected: desired.counts.rejected,
    skipped: desired.counts.skipped,
    removed: desired.counts.removed,
    feedDuplicates: desired.feedDuplicates.length,
    remote: r.count,
    ...writeCounts(r),
    failed,
    protected: c?.protected ?? 0,
    otherFeeds: c?.otherFeeds ?? 0,
    waitingGrace: g?.waiting.length ?? 0,
    ...(r.routedNowhere !== undefined && { routedNowhere: r.routedNowhere }),
    ...otherCounts(r),
  };
}

/** Created, updated, deleted (duplicates apart), unchanged: made, or in a dry run recorded. */
function writeCounts(
  r: LaneReportInput,
): Pick<SyncCounts, 'created' | 'updated' | 'deleted' | 'unchanged' | 'unchangedByStamp' | 'duplicatesRemoved'> {
  const { exec: e, counted: c } = r;
  return {
    created: e?.created ?? 0,
    updated: e?.updated ?? 0,
    deleted: e?.deleted ?? 0,
    unchanged: c?.unchanged ?? 0,
    unchangedByStamp: c?.unchangedByStamp ?? 0,
    duplicatesRemoved: e?.duplicatesRemoved ?? 0,
  };
}

/** The lane's API calls (and retries, a create's resends among them) between the counter's snapshots. */
function callsOf(r: LaneReportInput): Pick<SyncReport, 'calls' | 'retries'> {
  const { calls, retries } = callsBetween(r.calls.before, r.calls.after);
  return { calls, retries: retries + (r.exec?.createResends ?? 0) };
}

function guardOf(g: GuardDecision | undefined): SyncReport['guard'] {
  return {
    outcome: g?.outcome ?? 'none',
    reasons: g?.reasons ?? [],
    ...(g?.message && { message: g.message }),
    withheld: g?.withheld.length ?? 0,
    waiting: g?.waiting.length ?? 0,
    ...(g?.ruleChange && { ruleChange: g.ruleChange }),
  };
}

/** How the feed was read, what reading it took, and the sections its source filled (SourceSections). */
function sourceOf(r: LaneReportInput): SyncReport['source'] {
  const { desired } = r;
  const stats = r.source.stats;
  return {
    // (the source's word where it says more: a keys-only reconcile is read as a full pull, absent keys deleted)
    mode: stats?.mode ?? desired.mode,
    ...(r.source.since !== undefined && { since: r.source.since }),
    complete: desired.complete,
    ...(desired.readError && { error: desired.readError }),
    ...(desired.readStatus !== undefined && { status: desired.readStatus }),
    ...(stats && {
      pages: stats.pages,
      requests: stats.requests,
      ...(stats.tally && { requestsBy: { ...stats.tally.by }, tokenCalls: stats.tally.tokenCalls }),
      ...(stats.bytes !== undefined && { bytes: stats.bytes }),
      ...sectionsOf(stats.sections ?? []),
      ...(stats.warnings.length && { warnings: [...stats.warnings] }),
    }),
  };
}

/**
 * The sections a source filled: each one's fields under its name (source.events), and what the
 * text report prints of them, in the source's order (source.sections).
 */
function sectionsOf(sections: readonly SourceSection[]): Partial<SourceSections> & Pick<SourceReport, 'sections'> {
  if (!sections.length) return {};
  const fields: Partial<SourceSections> = {};
  for (const s of sections) put(fields, s.name, s.fields);
  const text = sections.map((s) => ({
    name: s.name,
    lines: [...s.lines],
    ...(s.tellsTheRead && { tellsTheRead: s.tellsTheRead }),
  }));
  return { ...fields, sections: text };
}

/** A section's fields under its name (a name and its own fields' type go together: SourceSections). */
function put<N extends keyof SourceSections>(into: Partial<SourceSections>, name: N, fields: SourceSections[N]): void {
  into[name] = fields;
}

/** The counts beside created/updated/unchanged that make `valid` add up (report.ts, validFromWrites), each only when not 0. */
function otherCounts(r: LaneReportInput): Partial<SyncCounts> {
  const { exec: e, counted: c } = r;
  const unwritten = e ? (r.writes?.planned ?? 0) - e.created - e.updated : 0;
  const out: Partial<SyncCounts> = {};
  if (unwritten) out.unwritten = unwritten;
  if (c?.unplanned) out.unplanned = c.unplanned;
  if (c?.rewritten) out.rewritten = c.rewritten;
  if (c?.writtenThenGone) out.writtenThenGone = c.writtenThenGone;
  if (c?.besidePaging) out.besidePaging = c.besidePaging;
  if (c?.unchangedBySeal) out.unchangedBySeal = c.unchangedBySeal;
  return out;
}

/** What the display rules did, for an idx or vow feed or when they did anything. */
function displayOf(r: LaneReportInput): Pick<SyncReport, 'display'> {
  const d = r.desired.display;
  const rules = r.displayRules ?? { purpose: 'internal', soldDays: 0 };
  const any = d.addressWithheld > 0 || d.held > 0 || Object.values(d.hidden).some((n) => n > 0);
  if (rules.purpose === 'internal' && !any) return {};
  return {
    display: {
      purpose: rules.purpose,
      soldDays: rules.soldDays,
      hidden: { ...d.hidden },
      addressWithheld: d.addressWithheld,
      held: d.held,
    },
  };
}

/** The deletes made (a dry run: recorded) by reason, duplicates aside; none when nothing was deleted. */
function deletedByReason(r: LaneReportInput): Pick<SyncReport, 'deletedByReason'> {
  const byReason: Partial<Record<DeleteReason, number>> = { ...r.exec?.deletedByReason };
  return Object.keys(byReason).length ? { deletedByReason: byReason } : {};
}

/**
 * One verdict for the dry run and the real run: the dry run reports what the real run would. A
 * rejected run (settle/rejection.ts) is `rejected`, whatever else it is. A read that was not whole
 * is `failed` when nothing of the feed could be used, else `partial`: never `guard`, which says the
 * feed shrank.
 */
export function laneOutcome(r: {
  stopped?: SyncOutcome;
  guard: GuardDecision;
  failures: number;
  readWhole: boolean;
  missed: boolean;
  records: number;
  /** why the run is rejected (settle/rejection.ts) */
  rejected?: string;
}): SyncOutcome {
  if (r.stopped) return r.stopped;
  if (r.rejected !== undefined) return 'rejected';
  if (!r.readWhole) return r.records > 0 ? 'partial' : 'failed';
  if (r.guard.outcome === 'tripped') return 'guard';
  return r.failures > 0 || r.missed ? 'partial' : 'ok';
}

/**
 * What a person reads first: why the read was not whole (the server's answer, the page), else what
 * the confirmation missed, that the lane's where took no record (`unmatched`) and the guard's word.
 */
export function runMessage(
  readWhole: boolean,
  guard: GuardDecision,
  readError: string | undefined,
  remote: RemoteSide,
  missed: string | undefined,
  unmatched?: string,
  rejected?: string,
): string | undefined {
  if (rejected !== undefined) {
    const held = guard.withheld.length ? `${guard.withheld.length} delete(s) withheld` : 'nothing was deleted';
    return `${rejected}; ${held}, and the last good sync stays as it was`;
  }
  if (readWhole) return [missed, unmatched, guard.message].filter(Boolean).join('; ') || undefined;
  const held = guard.withheld.length ? `${guard.withheld.length} delete(s) withheld` : 'nothing was deleted';
  if (readError) return `the feed was not read whole, so ${held}: ${readError}`;
  return `the chatbot's listings could not all be paged, so ${held}: ${remote.problem ?? 'incomplete'}`;
}

export function remoteInfo(remote: RemoteSide): SyncReport['remote'] {
  return {
    complete: remote.complete,
    pages: remote.pages,
    rounds: remote.rounds,
    virtualCount: remote.virtualCount,
    ...(remote.recalled && { recalled: remote.recalled }),
    ...(remote.problem && { problem: remote.problem }),
  };
}
