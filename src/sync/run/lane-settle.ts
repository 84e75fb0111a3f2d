// A lane once its feed has been read (feed-run.ts): the steps guard (lane-guard.ts, with the
// source asked about a full pull's absences), the delete batches, commit (lane-commit.ts) and
// report (lane-report.ts), each lane on its own: one lane's guard or failure leaves the others be.
import { keySources } from '../../mapping/key-sources.js';
import type { MediaReport } from '../../media/index.js';
import { ruleOf, type PlannedDelete } from '../model/plan-types.js';
import { deleteChange, withheldChange } from '../model/changes.js';
import { laneOutcome, remoteInfo, runMessage } from '../report/lane-report.js';
import { confirmAbsences, type AbsenceResult } from '../settle/confirm-absent.js';
import { rejectionOf } from '../settle/rejection.js';
import type { GuardDecision } from '../settle/guards.js';
import { commitLane } from '../settle/lane-commit.js';
import { sourceStateChanges } from '../settle/state.js';
import { guardLane } from '../settle/lane-guard.js';
import { soldWindowsDue } from '../settle/sold-window.js';
import { deleteJobs, type ExecutionResult } from '../write/execute.js';
import { runPool } from '../write/pool.js';
import type { AfterRead, FeedContext, LaneReportFields, LiveLane, SyncOptions } from './context.js';

/** Settles one lane of a read feed; `last`: the feed's last lane (the media mirror finishes with it). */
export async function settleLane(l: LiveLane, ctx: FeedContext, after: AfterRead, last: boolean): Promise<void> {
  const { planner } = l;
  const { opts, run } = ctx;
  const { read } = after;
  const guarded = await guardStep(l, ctx, after);
  const { guard } = guarded;
  const planMs = run.ms();
  const common = commonReport(l, after, guarded);
  const timings = { remoteMs: l.paged.remoteMs, feedMs: after.feedMs, planMs, executeMs: 0 };
  if (opts.dryRun) {
    const media =
      last && after.media
        ? (
            await after.media.finish({
              deletedKeys: guard.allowed.map((d) => d.key),
              unwrittenKeys: new Set(),
              now: nowOf(opts),
            })
          ).report
        : undefined;
    planner.view.deletes = [...guard.allowed, ...guard.withheld].map((d) => ({
      key: d.key,
      reason: d.reason,
      keyType: d.keyType,
      deleteKey: d.deleteKey,
    }));
    const outcome = laneOutcome({ ...common.verdict, stopped: read.auth ? 'failed' : undefined, failures: 0 });
    const said = read.auth ?? common.message();
    ctx.report(l.lane, {
      ...common.fields,
      outcome,
      ...(said && { message: said }),
      planned: { creates: planner.tally.creates, updates: planner.tally.updates, deletes: guard.allowed },
      view: planner.view,
      timings,
      ...(media && { media }),
    });
    return;
  }
  const exec = await deleteStep(l, ctx, after, guard);
  timings.executeMs = run.ms();
  const outcome = laneOutcome({
    ...common.verdict,
    stopped: exec.stopped ?? (read.auth ? 'failed' : undefined),
    failures: exec.failures.length,
  });
  const said = ctx.clock.message() ?? exec.stopReason ?? read.auth ?? common.message();
  const media = last ? await finishMedia(after, nowOf(opts)) : undefined;
  await commitLane(ctx.deps.store, {
    id: l.lane.id,
    tally: planner.tally,
    exec,
    guard,
    missingSince: l.missingSince,
    unstamped: planner.photosMissing,
    // the media mirror's state; what the source learned of its own state goes with the mark it was read to
    extra: [
      ...(media?.changes ?? []),
      ...(outcome === 'ok' && after.opened.mark !== undefined
        ? sourceStateChanges(l.lane.id, after.opened.state?.get(l.lane.id))
        : []),
    ],
    ...(outcome === 'ok' && after.opened.mark !== undefined && { mark: after.opened.mark }),
    // the reference the next runs' valid counts are judged by (rejection.ts): a full read whole that ended ok
    // (written only when it changed: a no-change rerun writes no state)
    ...(outcome === 'ok' &&
      guarded.desired.mode === 'full' &&
      guarded.readWhole &&
      !after.opened.present &&
      guarded.desired.counts.valid !== l.own.lastGoodValid && { goodValid: guarded.desired.counts.valid }),
    ...(read.done && { recurring: { now: planner.pending.recurring, before: l.own.recurring } }),
    soldUntil: { ...planner.collector.side.soldUntil, stored: l.own.soldUntil },
  });
  ctx.report(l.lane, {
    ...common.fields,
    outcome,
    ...(said && { message: said }),
    exec,
    timings,
    ...(media && { media: media.report }),
  });
}

type Guarded = Awaited<ReturnType<typeof guardStep>>;

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

/** Step guard: the lane's writes settled, its desired side as read, its deletes planned, confirmed with the source and guarded. */
async function guardStep(l: LiveLane, ctx: FeedContext, after: AfterRead) {
  const { planner, executor, remote, paged } = l;
  const { feed, opts } = ctx;
  const { read, opened } = after;
  executor.settle();
  // a run of pushed events asked the chatbot about its keys alone: nothing is concluded of another key
  const asked = paged.remote.asked;
  const pushed = asked && pushedScope(l, asked);
  remote.dropFingerprints(); // not needed past planning
  planner.done();
  const desired = planner.collector.side;
  // Read only now: an incremental RESO feed with no stored mark turns into a full pull once read.
  desired.mode = opened.mode;
  if (!read.done) {
    desired.complete = false;
    // writes that stopped (a refused credential, the service down) stop the read: their reason is why, said once as the run's message
    desired.readError ??= executor.result.stopReason ?? 'the run stopped before the feed was read whole';
  }
  // a read whose records are not the feed, or not enough of them valid, is rejected: nothing goes (rejection.ts);
  // a full pull's valid count is judged once its absences are confirmed (records the source still has count)
  const judge = (minValidFraction: number) =>
    rejectionOf({
      counts: desired.counts,
      mode: desired.mode,
      complete: desired.complete,
      ...(desired.refused !== undefined && { refused: desired.refused }),
      rejectedRecords: desired.rejected,
      ...(l.own.lastGoodValid !== undefined && !opened.present && { lastGoodValid: l.own.lastGoodValid }),
      minValidFraction,
      force: Boolean(opts.force),
    });
  const rejected = judge(0);
  // sold windows that ended for listings the source did not send again (sold-window.ts)
  soldWindowsDue(pushed ? pushed.soldUntil : l.own.soldUntil, nowOf(opts), desired, paged.remote.byKey);
  // a full pull's absences are asked of the source before the guard sees them (confirm-absent.ts)
  // (not after a read that was not whole, or writes that stopped: no delete is sent then anyway)
  const confirmable =
    desired.mode === 'full' &&
    desired.complete &&
    paged.remote.complete &&
    !executor.result.stopped &&
    !read.auth &&
    rejected === undefined;
  const guarded = await guardLane({
    remote: paged.remote,
    desired,
    planOptions: l.planOptions,
    duplicateDeletes: planner.tally.duplicateDeletes,
    written: planner.written,
    // (a reconcile's unchanged keys are valid listings the feed holds: a reconcile that fetched nothing is not an empty feed)
    feedValid: after.lanes.reduce((n, x) => n + x.planner.collector.side.counts.valid, 0) + (opened.present?.size ?? 0),
    ...(opened.present && { present: opened.present }),
    deletes: feed.deletes,
    force: Boolean(opts.force),
    now: nowOf(opts),
    missingSince: pushed ? pushed.missingSince : l.missingSince,
    ...(rejected !== undefined && { rejected }),
    judge: () => judge(feed.minValidFraction),
    ...(confirmable && { confirm: (deletes: readonly PlannedDelete[]) => confirm(l, deletes, ctx, after) }),
    ...(pushed && { pushed: { wrote: pushed.wrote, graceFor: PUSHED_GRACE } }),
  });
  if (guarded.leftAlone.length) {
    const keys = guarded.leftAlone.map((d) => d.key);
    ctx.logger.warn(
      { chatbot: l.lane.chatbot, keys: keys.slice(0, 5), count: keys.length },
      `pushed events named ${keys.length} listing(s) of chatbot ${l.lane.chatbot} that the source does not return and that this feed never wrote (${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}): left alone`,
    );
  }
  /** the read (feed or chatbot list) was not whole: the run is failed or partial, never a guard, whatever the guard says */
  const readWhole = desired.complete && paged.remote.complete;
  tellGuard(l, ctx, guarded.guard, readWhole);
  if (guarded.absences.missed) {
    // the deletes the source confirmed go on; the pull itself is not called whole (no mark is stored)
    desired.complete = false;
    desired.readError = guarded.absences.missed;
  }
  return { desired, readWhole, ...guarded };
}

/** The lane's change log told of the deletes the guard withheld (a dry run: of those it would make); its rejected records went as they were read. */
function tellGuard(l: LiveLane, ctx: FeedContext, guard: GuardDecision, readWhole: boolean): void {
  const changes = ctx.deps.changes?.(l.lane);
  if (!changes) return;
  const desired = l.planner.collector.side;
  // a read that was not whole withholds every delete: one entry for the run, not one per listing
  if (!readWhole && guard.withheld.length)
    changes(
      withheldChange(
        guard.withheld.length,
        desired.readError ?? l.paged.remote.problem ?? "the chatbot's listings could not all be paged",
      ),
    );
  else for (const d of guard.withheld) changes(deleteChange(d, true));
  if (ctx.opts.dryRun) for (const d of guard.allowed) changes(deleteChange(d));
}

/** Step deletes: the allowed delete batches, unless the lane's writes stopped or the feed refused us. */
async function deleteStep(
  l: LiveLane,
  ctx: FeedContext,
  after: AfterRead,
  guard: GuardDecision,
): Promise<ExecutionResult> {
  const { executor } = l;
  const exec = executor.result;
  if (!exec.stopped && !after.read.auth && guard.allowed.length) {
    const batches = [...deleteJobs(guard.allowed, ctx.feed.deletes.batchSize)];
    ctx.addWrites(batches.length);
    await executor.run(batches);
  }
  return exec;
}

/**
 * The media mirror's end, with the feed's last lane: its photo state, and what it deletes from the
 * bucket. A photo goes with its listing only when the feed's one lane deleted it: with several
 * lanes, another chatbot may still show it.
 */
async function finishMedia(
  after: AfterRead,
  now: Date,
): Promise<{ changes: NonNullable<Parameters<typeof commitLane>[1]['extra']>; report: MediaReport } | undefined> {
  if (!after.media) return undefined;
  const deletedKeys = after.lanes.length === 1 ? after.lanes[0]!.executor.result.deletedKeys : [];
  const unwrittenKeys = new Set(after.lanes.flatMap((l) => l.executor.result.failures.map((f) => f.key)));
  return after.media.finish({ deletedKeys, unwrittenKeys, now });
}

/** Asks the source about the lane's absent keys; records it still has are planned (and written) through the lane. */
function confirm(
  l: LiveLane,
  deletes: readonly PlannedDelete[],
  ctx: FeedContext,
  after: AfterRead,
): Promise<AbsenceResult> {
  const { feed, opts, compiled } = ctx;
  const { read, opened } = after;
  const desired = l.planner.collector.side;
  const keyField = feed.keyBy === 'URL' ? 'Url' : 'MLSNumber';
  return confirmAbsences({
    deletes,
    lookup: opened.lookup,
    sources: keySources(compiled.rules[keyField]),
    keyOf: (data) => compiled.keyOf(data, feed.keyBy),
    // past deletes.maxCount the guard holds every delete anyway, unless forced or a grace period
    // leaves fewer to delete (then every absence is confirmed, within source.maxPages requests)
    limit: opts.force || feed.deletes.graceHours > 0 ? Number.POSITIVE_INFINITY : feed.deletes.maxCount,
    keyRule: `the mapping of ${keyField} (feeds[${feed.name}].mapping.fields)`,
    take: async (items) => {
      const jobs = read.again(l, items);
      if (opts.dryRun || l.executor.result.stopped || read.auth) for await (const _ of jobs);
      else await runPool(jobs, { concurrency: ctx.deps.apiConfig.concurrency, signal: ctx.clock.signal });
    },
    holds: (key) => desired.listings.has(key) || desired.protectedKeys.has(key),
    // a record that came back hidden by a display rule is that rule's removal, not an absence
    goneAs: (key) => {
      const gone = desired.goneKeys.get(key);
      return gone !== undefined && ruleOf(gone) ? gone : undefined;
    },
  });
}

/** a key a push says is gone waits out deletes.graceHours as an absent one does (guards.ts) */
const PUSHED_GRACE: ReadonlySet<string> = new Set(['removed']);

/**
 * What a run of pushed events may conclude, of the keys it asked the chatbot about alone: which of
 * them this lane wrote (its stored fingerprints: the only ones it may delete), and their grace marks
 * and sold windows (the others' are left as they are: this run knows nothing of those keys).
 */
function pushedScope(l: LiveLane, asked: ReadonlySet<string>) {
  const only = <V>(m: ReadonlyMap<string, V>) =>
    new Map([...asked].flatMap((k) => (m.has(k) ? [[k, m.get(k)!] as const] : [])));
  const wrote = new Set(
    [...asked].filter((k) => l.planOptions.fingerprints.get(k) !== undefined || l.own.fingerprints.has(k)),
  );
  return { wrote, missingSince: only(l.missingSince), soldUntil: only(l.own.soldUntil) };
}

/** The run's clock (tests of the grace periods set it). */
const nowOf = (opts: SyncOptions): Date => (opts.now ?? (() => new Date()))();
