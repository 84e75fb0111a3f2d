// A lane once its feed has been read (feed-run.ts): the steps guard (lane-guard.ts, with the
// source asked about a full pull's absences), the delete batches, commit (lane-commit.ts) and
// report (lane-report.ts), each lane on its own: one lane's guard or failure leaves the others be.
// The feed's lanes are settled one after another and committed together (commitLanes: a batch of
// lanes in one apply), then reported; the lanes settled so far are committed before a lane asks the
// source or sends deletes, so a commit never waits on another lane's calls.
import type { MediaReport } from '../../media/index.js';
import { laneOutcome, remoteInfo, runMessage } from '../report/lane-report.js';
import type { GuardDecision } from '../settle/guards.js';
import type { LaneCommitInput } from '../settle/lane-commit.js';
import { rejudgeWindows } from '../settle/rule-change.js';
import type { PlannedDelete } from '../model/plan-types.js';
import type { SyncOutcome } from '../model/outcome.js';
import { sourceStateChanges } from '../settle/state.js';
import { doneIn } from '../settle/lane-done.js';
import { deleteJobs, type ExecutionResult } from '../write/execute.js';
import type { AfterRead, FeedContext, LaneReportFields, LiveLane } from './context.js';
import { guardStep, nowOf } from './lane-guard-step.js';
import { sealChange, type SealOfLane } from './feed-seal.js';

/** A lane settled: what its commit stores, and its report, made once it is committed. */
export interface SettledLane {
  commit: LaneCommitInput;
  /** what follows the commit's apply (the lane's seal stored with the state it left: feed-seal.ts) */
  afterCommit?: () => Promise<void>;
  report(): void;
}

/**
 * Settles one lane of a read feed, up to its commit; `last`: the feed's last lane (the media mirror finishes with it).
 * `beforeCalls`: awaited before the lane asks the source, sends deletes or ends the media mirror (feed-run.ts commits the lanes settled
 * before it then: a worker killed during a lane's calls has committed every lane before it, issue 55 point 2).
 * A dry run goes the same way: its executor recorded the writes and its deletes, and its commit keeps nothing (write-side.ts).
 */
export async function settleLane(
  l: LiveLane,
  ctx: FeedContext,
  after: AfterRead,
  { last, beforeCalls, seal }: { last: boolean; beforeCalls: () => Promise<void>; seal?: SealOfLane },
): Promise<SettledLane> {
  const { opts, run } = ctx;
  const { read } = after;
  const guarded = await guardStep(l, ctx, after, beforeCalls);
  const { guard } = guarded;
  const planMs = run.ms();
  const common = commonReport(l, after, guarded);
  const exec = await deleteStep(l, ctx, after, guard, beforeCalls);
  const timings = { remoteMs: l.paged.remoteMs, feedMs: after.feedMs, planMs, executeMs: run.ms() };
  const outcome = laneOutcome({
    ...common.verdict,
    stopped: exec.stopped ?? (read.auth ? 'failed' : undefined),
    failures: exec.failures.length,
  });
  // (the writes' refusal or reason first, then the read's: a refusal is worded here, by the run)
  const said =
    ctx.clock.message() ??
    ctx.refusalMessage(exec.refused) ??
    exec.stopReason ??
    ctx.refusalMessage(read.auth) ??
    common.message();
  // (the mirror's end deletes from its bucket: the lanes before are committed first, as before its calls)
  if (last && after.media) await beforeCalls();
  const media = last ? await finishMedia(after, nowOf(opts)) : undefined;
  const ackedStored = await l.acked();
  const commit = { ...commitOf(l, after, { guarded, exec, outcome, media }), ackedStored };
  const sealed = await sealChange(l, seal, { outcome, readWhole: guarded.readWhole, after });
  return {
    commit: doneIn(opts, { ...commit, ...(sealed.change && { seal: sealed.change }) }, outcome, exec),
    ...(sealed.afterCommit && { afterCommit: sealed.afterCommit }),
    report: () =>
      ctx.report(l.lane, {
        ...common.fields,
        outcome,
        ...(said && { message: said }),
        exec,
        // a dry run's plan: what its executor recorded, and the deletes the guard held back
        ...(l.view && { view: { ...l.view, deletes: [...l.view.deletes, ...guard.withheld.map(viewDelete)] } }),
        timings,
        ...(media && { media: media.report }),
      }),
  };
}

/** The settled lanes committed together (the run's write side: commitLanes), then each reported, in their order. */
export async function commitSettled(ctx: FeedContext, settled: readonly SettledLane[]): Promise<void> {
  await ctx.run.writes.commit(settled.map((s) => s.commit));
  for (const s of settled) await s.afterCommit?.();
  for (const s of settled) s.report();
}

/** A delete as the plan view lists it. */
const viewDelete = ({ key, reason, keyType, deleteKey }: PlannedDelete) => ({ key, reason, keyType, deleteKey });

/** What the lane's commit stores of its run (lane-commit.ts): a mark, the last good count and the source's state only when it ended ok. */
function commitOf(
  l: LiveLane,
  after: AfterRead,
  { guarded, exec, outcome, media }: { guarded: Guarded; exec: ExecutionResult; outcome: SyncOutcome; media: MediaEnd },
): LaneCommitInput {
  const { planner } = l;
  const { read, opened } = after;
  const earned = outcome === 'ok' && opened.mark !== undefined;
  return {
    id: l.lane.id,
    tally: planner.tally,
    exec,
    guard: guarded.guard,
    missingSince: l.missingSince,
    unstamped: planner.photosMissing,
    // the media mirror's state; what the source learned of its own state goes with the mark it was read to
    extra: [...(media?.changes ?? []), ...(earned ? sourceStateChanges(l.lane.id, opened.state?.get(l.lane.id)) : [])],
    ...(earned && { mark: opened.mark }),
    // the reference the next runs' valid counts are judged by (rejection.ts): a full read whole that ended ok
    // (written only when it changed: a no-change rerun writes no state)
    ...(outcome === 'ok' &&
      guarded.desired.mode === 'full' &&
      guarded.readWhole &&
      !opened.unread &&
      guarded.desired.counts.valid !== l.own.lastGoodValid && { goodValid: guarded.desired.counts.valid }),
    ...(read.done && { recurring: { now: planner.pending.recurring, before: l.own.recurring } }),
    // the lane's state names all its listings from now on: the other feeds of its chatbot delete again
    // (state.ts unsyncedWriters). A read whole whose writes partly failed counts (what it found in step is
    // recorded): else a lane with one listing the API always refuses would hold them back for good.
    ...(!l.own.committed && guarded.readWhole && ['ok', 'guard', 'partial'].includes(outcome) && { synced: '1' }),
    ...rulesApplied(l, after, guarded, outcome),
  };
}

type Guarded = Awaited<ReturnType<typeof guardStep>>;

/**
 * The display rules the run applied, and the sold windows as they judged them, to commit. The rules
 * are applied by a full pull read whole (every record judged by them) that ended ok and whose
 * removals by a changed rule the guard did not hold; else the stored ones stay, so the next run
 * compares with them again and asks again (rule-change.ts). The stored windows a changed soldDays
 * re-judged are stored with them; while the old rules stay stored, the windows this run found are
 * stored as the old soldDays judges them, so the next run re-judges them as it does the others (once).
 */
function rulesApplied(
  l: LiveLane,
  after: AfterRead,
  { desired, readWhole, guard }: Guarded,
  outcome: string,
): Pick<LaneCommitInput, 'rules' | 'soldUntil'> {
  const side = l.planner.collector.side.soldUntil;
  const applied =
    outcome === 'ok' && desired.mode === 'full' && readWhole && !after.opened.unread && !guard.ruleChange?.held;
  const days = l.rules.soldDays;
  if (!days)
    return {
      ...(applied && l.rules.differs && { rules: l.rules.store }),
      soldUntil: { ...side, stored: l.own.soldUntil },
    };
  return applied
    ? { rules: l.rules.store, soldUntil: { ...side, stored: l.own.soldUntil, rejudged: l.own.soldUntil } }
    : {
        soldUntil: {
          ...side,
          set: rejudgeWindows(side.set, { from: days.to, to: days.from }),
          stored: l.own.soldUntil,
        },
      };
}

/** What the lane's report says in a dry run and a real run alike, and the verdict its outcome rests on. */
function commonReport(l: LiveLane, after: AfterRead, { desired, rest, absences, guard, readWhole, rejected }: Guarded) {
  const { planner, paged } = l;
  const { read, opened } = after;
  const { tally } = planner;
  // a routed lane that took no record of a feed that had some: its chatbot's listings of the feed go (within the guards), and the report says why
  const unmatched =
    l.lane.route && desired.counts.records === 0 && read.records > 0
      ? `none of the feed's ${read.records} records matched chatbot ${l.lane.chatbot}'s where`
      : undefined;
  const fields = {
    remote: remoteInfo(paged.remote),
    count: paged.remote.count,
    desired,
    guard,
    counted: {
      protected: rest.protectedKeys.length,
      otherFeeds: rest.otherFeeds,
      unchanged: tally.unchanged,
      unchangedByStamp: tally.unchangedByStamp,
      besidePaging: tally.besidePaging,
      unchangedBySeal: tally.unchangedBySeal,
      duplicates: tally.duplicates,
      rewritten: tally.rewritten,
      unplanned: tally.unplanned,
      writtenThenGone: [...planner.written].filter((k) => !desired.listings.has(k)).length,
    },
    writes: { planned: tally.creates + tally.updates },
    source: {
      ...(opened.since !== undefined && { since: opened.since }),
      ...(opened.stats && { stats: opened.stats }),
    },
    ...(read.routedNowhere > 0 && { routedNowhere: read.routedNowhere }),
  } satisfies Partial<LaneReportFields>;
  return {
    fields,
    verdict: {
      guard,
      readWhole,
      missed: Boolean(absences.missed),
      records: desired.counts.records,
      ...(rejected !== undefined && { rejected }),
    },
    message: () => runMessage(readWhole, guard, desired.readError, paged.remote, absences.missed, unmatched, rejected),
  };
}

/** Step deletes: the allowed delete batches, unless the lane's writes stopped or the feed refused us. */
async function deleteStep(
  l: LiveLane,
  ctx: FeedContext,
  after: AfterRead,
  guard: GuardDecision,
  beforeCalls: () => Promise<void>,
): Promise<ExecutionResult> {
  const { executor } = l;
  const exec = executor.result;
  if (!exec.stopped && !after.read.auth && guard.allowed.length) {
    await beforeCalls();
    const batches = [...deleteJobs(guard.allowed, ctx.feed.deletes.batchSize)];
    ctx.addWrites(batches.length);
    await executor.run(batches);
  }
  return exec;
}

/** The media mirror's end (finishMedia): its state to commit and its report; none without the mirror. */
type MediaEnd = { changes: NonNullable<LaneCommitInput['extra']>; report: MediaReport } | undefined;

/**
 * The media mirror's end, with the feed's last lane: its photo state, and what it deletes from the
 * bucket. A photo goes with its listing only when the feed's one lane deleted it: with several
 * lanes, another chatbot may still show it.
 */
async function finishMedia(after: AfterRead, now: Date): Promise<MediaEnd> {
  if (!after.media) return undefined;
  const deletedKeys = after.lanes.length === 1 ? after.lanes[0]!.executor.result.deletedKeys : [];
  const unwrittenKeys = new Set(after.lanes.flatMap((l) => l.executor.result.failures.map((f) => f.key)));
  return after.media.finish({ deletedKeys, unwrittenKeys, now });
}
