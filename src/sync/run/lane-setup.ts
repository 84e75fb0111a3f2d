// The plan and write steps' setup for one lane of a feed (feed-run.ts): its planner on its chatbot's
// state and index, and its executor (the run's write side's: write-side.ts).
import type { OpenedFeed } from '../../feeds/types.js';
import { mirrorOf, type MediaStep } from '../../media/index.js';
import { createLanePlanner } from '../plan/lane-plan.js';
import { rejectChange } from '../model/changes.js';
import { createFeedCollector } from '../read/desired.js';
import { laneJobs } from './lane-jobs.js';
import type { ChatbotStateRead } from '../remote/page-chatbot.js';
import type { RemoteIndex } from '../remote/remote-index.js';
import { stampSeed, stamped } from '../plan/record-stamp.js';
import type { Lane } from '../read/lanes.js';
import { isEmpty } from '../util/collections.js';
import { ownedByOtherFeeds, unsyncedWriters } from '../settle/state.js';
import { rejudgeWindows, ruleChangeOf } from '../settle/rule-change.js';
import type { FeedContext, LiveLane } from './context.js';
import { sourceMapping } from '../../feeds/reso/reso-related.js';

/** What a lane is set up on: its chatbot's state and the index its paging fills (finished or not). */
export interface LaneParts {
  state: ChatbotStateRead['state'];
  stamps: ChatbotStateRead['stamps'];
  index: RemoteIndex;
}

/** Once its chatbot is paged: the lane's stored fingerprints are asked through the chatbot's index (only of keys the chatbot holds). */
export function attachStored(lane: Omit<LiveLane, 'paged'>, paged: LiveLane['paged']): void {
  lane.remote.attachFingerprints(lane.own.fingerprints);
  // (what was read is held by the index alone past here, until planning is over, unless other
  // writers of the chatbot need it to know which listings are this lane's: their deletes leave those alone)
  if (paged.state.feeds.size === 1) lane.own.fingerprints = new Map();
}

/**
 * The lane's record stamp seed (record-stamp.ts), unless a compared field reads the clock: the
 * mapping, the display rules (they decide what a record becomes as the mapping does), what the
 * source adds to the mapping (the time zone its related records' dates and times are written in),
 * the chatbot, key field, `ignore` and the media mirror's identity.
 */
export function laneSeed(l: Lane, ctx: Pick<FeedContext, 'feed' | 'deps' | 'compiled'>): string | undefined {
  const { feed, deps } = ctx;
  if (!stamped(l, ctx.compiled)) return undefined;
  const mirror = mirrorOf(deps.media, feed);
  const mapping = { mapping: feed.mapping, display: feed.displayRules, ...sourceMapping(feed.source) };
  return stampSeed({
    mapping,
    chatbot: l.chatbot,
    keyBy: feed.keyBy,
    ignore: new Set(feed.ignore),
    ...(mirror && { media: mirror.identity }),
  });
}

/** The plan step's setup for one lane: its planner and its executor (its fingerprints go into the index once paged: attachStored). */
export function setUpLane(
  l: Lane,
  parts: LaneParts,
  ctx: FeedContext,
  read: { media: MediaStep | undefined; pullMode: () => OpenedFeed['mode'] },
): Omit<LiveLane, 'paged'> {
  const { feed, deps, opts } = ctx;
  const display = feed.displayRules;
  // (asked before the paging lets the stored fingerprints go: attachStored)
  const stored = parts.state.feeds.get(l.id)!;
  const rules = ruleChangeOf(stored.rules, display, !isEmpty(stored.fingerprints));
  // a changed display.soldDays re-judges the stored sold windows (rule-change.ts)
  const own = rules.soldDays ? { ...stored, soldUntil: rejudgeWindows(stored.soldUntil, rules.soldDays) } : stored;
  const remote = parts.index;
  const ignore: ReadonlySet<string> = new Set(feed.ignore);
  const planOptions = {
    keyBy: feed.keyBy,
    deletesMode: feed.deletes.mode,
    ignore,
    fingerprints: remote.fingerprints,
    ownedElsewhere: ownedByOtherFeeds(parts.state, l.id),
    unsyncedWriters: unsyncedWriters(parts.state, l.id),
  };
  const changes = deps.changes?.(l);
  const mirror = mirrorOf(deps.media, feed);
  const seed = laneSeed(l, ctx);
  const planner = laneJobs(
    createLanePlanner({
      chatbot: l.chatbot,
      keyBy: feed.keyBy,
      remote,
      planOptions,
      seed,
      stamps: parts.stamps.get(l.id) ?? new Map(),
      // (asked only while the chatbot is paged, before the fingerprints go into its index)
      storedFingerprint: (key) => own.fingerprints.get(key),
      soldUntil: own.soldUntil,
      ...(opts.now && { now: opts.now }),
      knownRecurring: own.recurring,
      map: (item) => ctx.map(item, l.chatbot),
      pullMode: read.pullMode,
      // (a rejected record goes to the change log as it is read)
      newCollector: (mode, o) =>
        createFeedCollector(mode, { ...o, ...(changes && { onRejected: (r) => changes(rejectChange(r)) }) }),
      ...(mirror && {
        rewriteKnown: (entry, item) =>
          read.media?.rewriteKnown({
            key: entry.key,
            listing: entry.listing,
            record: item.kind === 'record' ? item.data : undefined,
          }) ?? true,
      }),
    }),
  );
  return {
    lane: l,
    planner,
    // sent or, in a dry run, recorded (the run's write side, write-side.ts): the lane settles through the same tail either way
    ...ctx.run.writes.lane(l, ctx, { remote, ignore, changes }),
    remote,
    own,
    missingSince: feed.deletes.graceHours > 0 ? own.missingSince : new Map(),
    planOptions,
    rules,
  };
}
