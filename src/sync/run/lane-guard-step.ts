// Step guard of one lane, as the run takes it (lane-settle.ts): the lane's writes settled, its desired
// side finished as read, its run judged (rejection.ts), its deletes planned, a full pull's absences
// (an incremental read's removals: the key's other records) confirmed with the source (records it
// still has planned and written through the lane) and guarded (lane-guard.ts), the change log told
// of the deletes held back.
import { itemKey } from '../../mapping/item-key.js';
import { keySources } from '../../mapping/key-sources.js';
import { ruleOf, type DeleteDecision, type PlannedDelete } from '../model/plan-types.js';
import { deleteChange, withheldChange } from '../model/changes.js';
import { confirmAbsences, type AbsenceResult } from '../settle/confirm-absent.js';
import { rejectionOf } from '../settle/rejection.js';
import type { GuardDecision } from '../settle/guards.js';
import { guardLane } from '../settle/lane-guard.js';
import { soldWindowsDue } from '../settle/sold-window.js';
import { runPool } from '../write/pool.js';
import { planDeletes } from '../plan/plan.js';
import { applySoldWindows, notWhole } from './settle-decisions.js';
import type { AfterRead, FeedContext, LiveLane, RunOptions } from './context.js';

/**
 * Step guard: the lane's writes settled, its desired side as read, its deletes planned, confirmed with the source and guarded.
 * `beforeCalls`: awaited before the source is asked about absences (feed-run.ts: the lanes settled before are committed first).
 */
export async function guardStep(l: LiveLane, ctx: FeedContext, after: AfterRead, beforeCalls: () => Promise<void>) {
  const { planner, executor, remote, paged } = l;
  const { feed, opts } = ctx;
  const { read, opened } = after;
  executor.settle();
  // a read of named records asked the chatbot about their keys alone: nothing is concluded of another key
  const asked = paged.remote.asked;
  const alone = asked && askedAloneScope(l, asked);
  remote.dropFingerprints(); // not needed past planning
  planner.done();
  const desired = planner.collector.side;
  // Read only now: an incremental RESO feed with no stored mark turns into a full pull once read.
  desired.mode = opened.mode;
  if (!read.done) {
    desired.complete = false;
    // writes that stopped (a refused credential, the service down) stop the read: their reason is why, said once as the run's message
    const { refused, stopReason } = executor.result;
    desired.readError ??= ctx.refusalMessage(refused) ?? stopReason ?? 'the run stopped before the feed was read whole';
  }
  // a read whose records are not the feed, or not enough of them valid, is rejected: nothing goes (rejection.ts);
  // a full pull's valid count is judged once its absences are confirmed (records the source still has count)
  const judge = (minValidFraction: number, complete = desired.complete) =>
    rejectionOf({
      counts: desired.counts,
      mode: desired.mode,
      complete,
      ...(desired.refused !== undefined && { refused: desired.refused }),
      rejectedRecords: desired.rejected,
      ...(l.own.lastGoodValid !== undefined && !opened.unread && { lastGoodValid: l.own.lastGoodValid }),
      minValidFraction,
      force: Boolean(opts.force),
    });
  const rejected = judge(0);
  // sold windows that ended for listings the source did not send again (sold-window.ts)
  applySoldWindows(
    desired,
    soldWindowsDue(alone ? alone.soldUntil : l.own.soldUntil, nowOf(opts), desired, paged.remote.byKey),
  );
  // a full pull's absences are asked of the source before the guard sees them (confirm-absent.ts)
  // (not after a read that was not whole, or writes that stopped: no delete is sent then anyway)
  // (an incremental or event read's removals too: the key's other records at the source may overrule the one read, issue 54.4)
  const confirmable =
    desired.complete && paged.remote.complete && !executor.result.stopped && !read.auth && rejected === undefined;
  const guarded = await guardLane({
    remote: paged.remote,
    desired,
    planned: plannedDeletes(l, opened.unread),
    duplicateDeletes: planner.tally.duplicateDeletes,
    // (keys the source holds unchanged, unread, are valid listings the feed holds: a read that fetched nothing else is not an empty feed)
    feedValid: after.lanes.reduce((n, x) => n + x.planner.collector.side.counts.valid, 0) + (opened.unread?.size ?? 0),
    deletes: feed.deletes,
    force: Boolean(opts.force),
    now: nowOf(opts),
    missingSince: alone ? alone.missingSince : l.missingSince,
    ...(rejected !== undefined && { rejected }),
    judge: (complete) => judge(feed.minValidFraction, complete),
    ...(confirmable && {
      confirm: async (deletes: readonly PlannedDelete[]) => {
        if (deletes.length) await beforeCalls();
        return confirm(l, deletes, ctx, after);
      },
    }),
    ...(alone && { askedAlone: { wrote: alone.wrote, graceFor: ASKED_ALONE_GRACE } }),
    ...(l.rules.rules.length && { ruleChange: l.rules.rules }),
  });
  // absences that could not be confirmed: the read is not whole (nothing is deleted)
  notWhole(desired, guarded.notWhole);
  warnLeftAlone(l, ctx, guarded.leftAlone);
  /** the read (feed or chatbot list) was not whole: the run is failed or partial, never a guard, whatever the guard says */
  const readWhole = desired.complete && paged.remote.complete;
  tellGuard(l, ctx, guarded.guard, readWhole);
  // the deletes the source confirmed go on; a pull whose paging missed records is not called whole (no mark is stored)
  notWhole(desired, guarded.absences.missed);
  return { desired, readWhole, ...guarded };
}

/** The remote listings the lane no longer has, or that its records mark gone (plan.ts planDeletes); `unread`: keys the source holds unchanged, records not read (OpenedFeed.unread). */
function plannedDeletes(l: LiveLane, unread: { has(key: string): boolean } | undefined): DeleteDecision {
  const { listings, protectedKeys, goneKeys, mode } = l.planner.collector.side;
  return planDeletes(
    l.paged.remote,
    { listings, protectedKeys, goneKeys, mode, written: l.planner.written, ...(unread && { unread }) },
    l.planOptions,
  );
}

/** Keys the run's ask named (a read of named records) that the source does not return and this feed never wrote: left alone, and said once. */
function warnLeftAlone(l: LiveLane, ctx: FeedContext, leftAlone: readonly PlannedDelete[]): void {
  if (!leftAlone.length) return;
  const keys = leftAlone.map((d) => d.key);
  ctx.logger.warn(
    { chatbot: l.lane.chatbot, keys: keys.slice(0, 5), count: keys.length },
    `the run's ask (${ctx.opts.ask?.name}) named ${keys.length} listing(s) of chatbot ${l.lane.chatbot} that the source does not return and that this feed never wrote (${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}): left alone`,
  );
}

/** The lane's change log told of the deletes the guard withheld (those it allows are told as they are made, or recorded: write/record.ts); its rejected records went as they were read. */
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
    keyOf: (item) => itemKey(item, compiled, feed.keyBy),
    // past deletes.maxCount the guard holds every delete anyway, unless forced or a grace period
    // leaves fewer to delete (then every absence is confirmed, within source.maxPages requests)
    limit: opts.force || feed.deletes.graceHours > 0 ? Number.POSITIVE_INFINITY : feed.deletes.maxCount,
    keyRule: `the mapping of ${keyField} (feeds[${feed.name}].mapping.fields)`,
    removals: desired.mode === 'incremental',
    take: async (items) => {
      const jobs = read.again(l, items);
      if (l.executor.result.stopped || read.auth) for await (const _ of jobs);
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

/** a key a read of named records says is gone waits out deletes.graceHours as an absent one does (guards.ts) */
const ASKED_ALONE_GRACE: ReadonlySet<string> = new Set(['removed']);

/**
 * What a read of named records may conclude, of the keys it asked the chatbot about alone: which of
 * them this lane wrote (its stored fingerprints: the only ones it may delete), and their grace marks
 * and sold windows (the others' are left as they are: this run knows nothing of those keys).
 */
function askedAloneScope(l: LiveLane, asked: ReadonlySet<string>) {
  const only = <V>(m: ReadonlyMap<string, V>) =>
    new Map([...asked].flatMap((k) => (m.has(k) ? [[k, m.get(k)!] as const] : [])));
  const wrote = new Set(
    [...asked].filter((k) => l.planOptions.fingerprints.get(k) !== undefined || l.own.fingerprints.has(k)),
  );
  return { wrote, missingSince: only(l.missingSince), soldUntil: only(l.own.soldUntil) };
}

/** The run's clock (tests of the grace periods set it). */
export const nowOf = (opts: RunOptions): Date => (opts.now ?? (() => new Date()))();
