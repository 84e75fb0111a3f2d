// The plan and write steps' setup for one lane of a feed (feed-run.ts): its planner on its chatbot's
// state and index, and its executor.
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
import { ownedByOtherFeeds } from '../settle/state.js';
import { rejudgeWindows, ruleChangeOf } from '../settle/rule-change.js';
import { createBeforeCapture } from '../write/capture-before.js';
import { createExecutor, type Executor } from '../write/execute.js';
import { createRecordingExecutor } from '../write/record.js';
import { commitLane } from '../settle/lane-commit.js';
import { recordAcked, type AckedWrites } from '../settle/acked.js';
import type { ChangeSink } from '../model/changes.js';
import type { FeedContext, LiveLane } from './context.js';
import { sourceMapping } from '../../feeds/reso/reso-related.js';

/** whole listings kept a run when the caller sets no budget (changeLog.maxWholeBytesPerRun's default) */
const DEFAULT_WHOLE_BYTES = 8 << 20;

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
  const rules = ruleChangeOf(stored.rules, display, stored.fingerprints.size > 0);
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
  };
  const changes = deps.changes?.(l);
  const mirror = mirrorOf(deps.media, feed);
  // record stamps (record-stamp.ts), unless a compared field reads the clock
  // (the display rules decide what a record becomes as the mapping does: they are part of its identity)
  // (and what the source adds to the mapping: the time zone its related records' dates and times are written in)
  const mapping = {
    mapping: feed.mapping,
    display,
    ...sourceMapping(feed.source),
  };
  const seed = stamped(l)
    ? stampSeed({ mapping, chatbot: l.chatbot, keyBy: feed.keyBy, ignore, ...(mirror && { media: mirror.identity }) })
    : undefined;
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
    ...writesOf(l, ctx, { remote, ignore, changes }),
    remote,
    own,
    missingSince: feed.deletes.graceHours > 0 ? own.missingSince : new Map(),
    planOptions,
    rules,
  };
}

/** What a lane's executor is given beside the feed's context. */
interface WriteParts {
  remote: RemoteIndex;
  ignore: ReadonlySet<string>;
  changes: ChangeSink | undefined;
}

/**
 * Where one lane's writes go: sent (the executor's calls, then its state committed) or, in a dry
 * run, recorded (write/record.ts: what would be sent, in a view and the change log) and nothing
 * committed. The one place a dry run is told apart: the lane settles through the same tail either way.
 */
function writesOf(l: Lane, ctx: FeedContext, parts: WriteParts): Pick<LiveLane, 'executor' | 'commit' | 'view'> {
  if (ctx.opts.dryRun) {
    const { changes } = parts;
    const executor = createRecordingExecutor({ signal: ctx.clock.signal, ...(changes && { changes }) });
    return { executor, view: executor.view, commit: async () => undefined };
  }
  // what the API acknowledged, recorded as it lands; all of it in the store before the commit (which may delete a key of it)
  const acked = recordAcked(ctx.deps.store, l.id, (err) =>
    ctx.logger.warn({ chatbot: l.chatbot, err }, 'acknowledged writes not recorded yet (the commit records them)'),
  );
  return {
    executor: executorOf(l, ctx, { ...parts, acked }),
    commit: async (input) => {
      await acked.drain();
      await commitLane(ctx.deps.store, input);
    },
  };
}

/** The write step of one lane: its executor (with the change log, the listings kept before for undo). */
function executorOf(
  l: Lane,
  ctx: FeedContext,
  { remote, ignore, changes, acked }: WriteParts & { acked: AckedWrites },
): Executor {
  const { feed, deps } = ctx;
  return createExecutor({
    api: deps.api,
    callScope: l.id,
    serialNumber: l.chatbot,
    keyBy: feed.keyBy,
    concurrency: deps.apiConfig.concurrency,
    batchSize: feed.deletes.batchSize,
    retries: deps.apiConfig.retries,
    logger: ctx.logger.child({ chatbot: l.chatbot }),
    feed: feed.name,
    signal: ctx.clock.signal,
    onProgress: () => ctx.wrote(),
    acked,
    ...(changes && { changes }),
    ...(changes && {
      before: createBeforeCapture({
        paged: remote,
        store: deps.store,
        feed: l.id,
        serialNumber: l.chatbot,
        keyBy: feed.keyBy,
        ignore,
        maxBytes: deps.maxWholeBytes ?? DEFAULT_WHOLE_BYTES,
      }),
    }),
  });
}
