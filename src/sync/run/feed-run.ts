// One feed of a run (sync-run.ts), read once through every lane out of it: the lanes are set up
// against their chatbot's paging (plan step, lane-plan.ts), the feed is read and routed
// (read-feed.ts) with the media mirror between mapping and planning, the write jobs go through one
// pool, and each lane is then settled on its own (lane-settle.ts: guard, deletes, commit, report).
import type { FeedConfig } from '../../config/schema.js';
import { openFeed } from '../../feeds/index.js';
import { oldestMark } from '../../feeds/marks.js';
import type { OpenedFeed, ReconcileAsk } from '../../feeds/types.js';
import type { CompiledMapping } from '../../mapping/compile.js';
import { columnsNeeded } from '../../mapping/columns-needed.js';
import { keySources } from '../../mapping/key-sources.js';
import { compileMapping } from '../../mapping/index.js';
import { resolveDisplay } from '../../mapping/display-config.js';
import { mapItem } from '../../mapping/map-feed.js';
import { createUnmappedTally } from '../../mapping/unmapped.js';
import { createMediaStep, loadMediaState, mirrorOf, type MediaStep } from '../../media/index.js';
import { createLanePlanner } from '../plan/lane-plan.js';
import { rejectChange } from '../model/changes.js';
import { laneJobs } from './lane-jobs.js';
import type { ChatbotStateRead, PagingHandle } from '../remote/page-chatbot.js';
import type { RemoteIndex } from '../remote/remote-index.js';
import type { FeedRead } from '../read/read-feed.js';
import { stampSeed, stamped } from '../plan/record-stamp.js';
import { createFeedCollector } from '../read/desired.js';
import type { FeedThread } from '../read/feed-thread.js';
import { recordKey } from '../read/record-key.js';
import type { Lane } from '../read/lanes.js';
import { heldJobs, readFeed } from '../read/read-feed.js';
import { readAhead } from '../read/read-ahead.js';
import { laneReport, type LaneReportInput } from '../report/lane-report.js';
import { ownedByOtherFeeds, sourceStateOf } from '../settle/state.js';
import { createBeforeCapture } from '../write/capture-before.js';
import { createExecutor } from '../write/execute.js';
import { runPool } from '../write/pool.js';
import type { AfterRead, FeedContext, LiveLane, Run, SyncDeps, SyncOptions } from './context.js';
import { settleLane } from './lane-settle.js';
import { sourceMapping } from '../../feeds/reso/reso-related.js';

/** whole listings kept a run when the caller sets no budget (changeLog.maxWholeBytesPerRun's default) */
const DEFAULT_WHOLE_BYTES = 8 << 20;

/** The run's pagings (sync-run.ts): each lane's, under way, and every one of them done. */
export interface RunPaging {
  of(lane: Lane): PagingHandle;
  /** every chatbot of the run is paged (run.paged holds each lane's): writes may start */
  all: Promise<void>;
  /** the feed's records are mostly in step by their stamps: it may be read beside the paging (readsWhilePaging) */
  readBeside?: boolean;
  /** a run of pushed events: the listing keys its records name go here once read (readPushed), and its chatbots' pagings ask only those */
  pushedKeys?: { resolve(keys: ReadonlySet<string>): void };
}

export async function runFeed(
  lanes: readonly Lane[],
  thread: FeedThread | undefined,
  deps: SyncDeps,
  opts: SyncOptions,
  run: Run,
  paging: RunPaging,
): Promise<void> {
  const feed = lanes[0]!.feed;
  const ctx = feedContext(feed, deps, opts, run, paging.readBeside === true);
  // a run of pushed events: its records fetched first, so the chatbot is asked only about their keys
  const pushed = paging.pushedKeys ? await readPushed(lanes, ctx, paging.pushedKeys) : undefined;
  // a feed of one lane whose records are mostly in step by their stamps is read while its chatbot is paged
  const early =
    !thread && paging.readBeside && readsWhilePaging(lanes, ctx)
      ? await readEarly(lanes[0]!, ctx, paging.of(lanes[0]!))
      : undefined;
  await paging.all;
  const paged: Array<[Lane, LiveLane['paged']]> = [];
  for (const l of lanes) {
    const p = run.paged.get(l)!;
    // a lane whose chatbot could not be paged ends here, with the paging's failure
    if (!p.ok)
      ctx.report(l, {
        outcome: p.outcome,
        message: p.message,
        remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: p.problem },
        count: 0,
        desired: createFeedCollector('full').side,
        source: {},
        timings: { remoteMs: p.remoteMs, feedMs: 0, planMs: 0, executeMs: 0 },
      });
    else paged.push([l, p]);
  }
  if (paged.length === 0) {
    await early?.read.read.close();
    return;
  }
  if (early) return readAndSettle(ctx, [early.live(paged[0]![1])], early.opened, undefined, early.read);
  const media = await mediaStepOf(ctx);
  // (the feed is opened once its lanes are set up: its mark is the oldest of theirs)
  const feedOf: { opened?: OpenedFeed } = {};
  const live = paged.map(([l, p]) => {
    const lane = setUpLane(l, { state: p.state, stamps: p.stamps, index: p.remote.byKey }, ctx, {
      media,
      pullMode: () => feedOf.opened?.mode ?? 'full',
    });
    attachStored(lane, p);
    return { ...lane, paged: p };
  });
  if (pushed) {
    // (its records were read before the paging; a pushed run keeps no mark, so nothing it read beside them is stored)
    feedOf.opened = pushed;
    return readAndSettle(ctx, live, pushed, media, openRead(ctx, pushed, live, media));
  }
  const opened =
    thread ??
    openFeed(feed.name, feed.source, {
      ...openOptions(
        ctx,
        live.map((l) => l.own.mark),
      ),
      // the source's own state, each lane's copy (a lane whose run failed kept its own)
      state: sourceStateOf(
        deps.store,
        live.map((l) => l.lane.id),
      ),
      ...(opts.reconcile && {
        reconcile: reconcileAsk(feed, ctx.compiled, (key) => live.some((l) => l.remote.has(key))),
      }),
      ...(feed.source.kind === 'reso' && {
        reconcileFallback: reconcileAsk(feed, ctx.compiled, (key) => live.some((l) => l.remote.has(key))),
      }),
    });
  feedOf.opened = opened;
  await readAndSettle(ctx, live, opened, media, openRead(ctx, opened, live, media));
}

/**
 * A run of pushed events (feeds/reso/reso-push.ts): the records the events name, fetched from the
 * source before the chatbot is asked anything, and the listing keys they name handed to its paging
 * (`keys`), which then asks the chatbot about those keys alone (remote.ts fetchRemoteKeys). The
 * records are few (push.maxKeysPerJob); they are read again, as read, by the run's read step. A read
 * that failed part way hands on the keys read so far, and fails the read step where it failed.
 */
async function readPushed(
  lanes: readonly Lane[],
  ctx: FeedContext,
  keys: { resolve(keys: ReadonlySet<string>): void },
): Promise<OpenedFeed> {
  const { feed, deps, opts } = ctx;
  const opened = openFeed(feed.name, feed.source, {
    ...openOptions(ctx, []),
    state: sourceStateOf(
      deps.store,
      lanes.map((l) => l.id),
    ),
    ...(opts.pushed && { pushed: opts.pushed }),
    // its requests within push.sourceShare of the credential's budget: pulls keep the rest
    ...(feed.push && { sourceShare: { feed: feed.name, share: feed.push.sourceShare } }),
    // (only the key fields are read of it: which source field names the listing)
    reconcileFallback: reconcileAsk(feed, ctx.compiled, () => false),
  });
  const read = await readAhead(opened, (item) =>
    item.kind === 'record'
      ? recordKey(item, ctx.compiled, feed.keyBy)
      : item.data && ctx.compiled.keyOf(item.data, feed.keyBy),
  );
  keys.resolve(read.keys);
  return read.opened;
}

/** Steps read, plan and write, then each lane settled (guard, deletes, commit, report). */
async function readAndSettle(
  ctx: FeedContext,
  live: readonly LiveLane[],
  opened: OpenedFeed,
  media: MediaStep | undefined,
  read: ReadOpen,
): Promise<void> {
  const after = await readAndWrite(ctx, opened, live, media, read);
  for (const [i, l] of live.entries()) {
    // the media mirror's state and report go with the feed's last lane, once every lane has written
    await settleLane(l, ctx, after, i === live.length - 1);
  }
}

/** A feed's read (read-feed.ts) and when it ended, in ms into the run. */
interface ReadOpen {
  read: FeedRead;
  feedMs(): number;
}

/** The feed's read, routed to its lanes (each lane's planner, executor and chatbot index, which may still be paged). */
function openRead(
  ctx: FeedContext,
  opened: OpenedFeed,
  live: ReadonlyArray<Omit<LiveLane, 'paged'>>,
  media: MediaStep | undefined,
): ReadOpen {
  const { feed, run } = ctx;
  let feedMs = 0;
  const read = readFeed({
    feedName: feed.name,
    opened,
    lanes: live,
    compiled: ctx.compiled,
    keyBy: feed.keyBy,
    unmappedSeen: ctx.unmappedSeen,
    map: (item) => ctx.map(item, live[0]!.lane.chatbot),
    ...(media && { media }),
    signal: ctx.clock.signal,
    onRecords: (n) => ctx.progress('feed', n),
    onEnd: () => {
      ctx.addWrites(live.reduce((n, l) => n + l.planner.tally.creates + l.planner.tally.updates, 0));
      feedMs = run.ms();
    },
  });
  return { read, feedMs: () => feedMs };
}

/** Steps read, plan and write: the feed read once and routed to its lanes, their jobs through one pool. */
async function readAndWrite(
  ctx: FeedContext,
  opened: OpenedFeed,
  live: readonly LiveLane[],
  media: MediaStep | undefined,
  open: ReadOpen,
): Promise<AfterRead> {
  const { deps, opts } = ctx;
  const { read } = open;
  const pool = {
    concurrency: deps.apiConfig.concurrency,
    signal: ctx.clock.signal,
    allStopped: () => live.every((l) => l.executor.result.stopped),
  };
  if (opts.dryRun) {
    for await (const _ of read.jobs);
    if (!read.auth) for (const _ of heldJobs(live));
  } else {
    await runPool(read.jobs, pool);
    if (!read.auth) await runPool(heldJobs(live), pool);
  }
  return { read, opened, media, lanes: live, feedMs: open.feedMs() };
}

/**
 * Whether the feed is read while its chatbot is paged (read-feed.ts whilePaging): a feed of one lane,
 * its records stamped, from a file (a live RESO pull asks the sync what the chatbot holds as it
 * reads), without the media mirror, related records or a thread of its own (those read as before,
 * once paging is done).
 */
function readsWhilePaging(lanes: readonly Lane[], ctx: FeedContext): boolean {
  const { feed, deps, opts } = ctx;
  return (
    opts.besidePaging !== false &&
    lanes.length === 1 &&
    stamped(lanes[0]!) &&
    feed.source.kind !== 'reso' &&
    !mirrorOf(deps.media, feed) &&
    !opts.reconcile &&
    !opts.pushed
  );
}

/** The early read of a feed's one lane: its read, begun beside the paging, and the lane once paged. */
interface EarlyRead {
  opened: OpenedFeed;
  read: ReadOpen;
  live(paged: LiveLane['paged']): LiveLane;
}

/**
 * The lane set up on its chatbot's state and the index paging fills, the feed opened and read while
 * the chatbot is paged. Returns once paging is done (or failed: then the lane is reported failed by
 * the caller, and what was read is let go).
 */
async function readEarly(l: Lane, ctx: FeedContext, paging: PagingHandle): Promise<EarlyRead | undefined> {
  const { feed } = ctx;
  const [parts, index] = await Promise.all([paging.state, paging.index]);
  if (!index) return undefined;
  const lane = setUpLane(l, { ...parts, index }, ctx, { media: undefined, pullMode: () => opened.mode });
  const own = lane.own;
  const opened = openFeed(feed.name, feed.source, openOptions(ctx, [own.mark]));
  const read = openRead(ctx, opened, [lane], undefined);
  await read.read.whilePaging({
    done: paging.done,
    rowsAdded: () => index.rowsAdded(),
    keysSince: (row) => index.keysSince(row),
  });
  return {
    opened,
    read,
    live: (paged) => {
      attachStored(lane, paged);
      lane.planner.pagedAfterEarly();
      return { ...lane, paged };
    },
  };
}

/** What every lane of the feed shares: the mapping, the clock, the tallies of the read, the report's frame. */
function feedContext(
  feed: FeedConfig,
  deps: SyncDeps,
  opts: SyncOptions,
  run: Run,
  mostlyInStep: boolean,
): FeedContext {
  const unmapped = createUnmappedTally();
  const replaced = new Map<string, number>();
  let unmappedSeen = 0;
  let writeTotal: number | undefined;
  let written = 0;
  const display = resolveDisplay(feed.display, feed.source.kind);
  const compiled = compileMapping(feed.mapping, {
    // the feed's display rules (docs/display-rules.md), judged against the run's clock
    display,
    ...(opts.now && { now: opts.now }),
    // what the source adds to its records (RESO related resources), judged against the run's clock (record-stamp.ts)
    ...sourceMapping(feed.source),
    onUnmapped: (u) => {
      unmappedSeen++;
      unmapped.add(u);
    },
  });
  const logger = deps.logger.child({ feed: feed.name });
  return {
    feed,
    deps,
    opts,
    run,
    clock: run.clock(feed),
    logger,
    compiled,
    mostlyInStep,
    unmappedSeen: () => unmappedSeen,
    map: (item, chatbot) => {
      const mapped = mapItem(item, compiled, { serialNumber: chatbot, keyBy: feed.keyBy });
      if (mapped.kind === 'listing' && mapped.replaced)
        for (const f of mapped.replaced) replaced.set(f, (replaced.get(f) ?? 0) + 1);
      return mapped;
    },
    progress: (phase, done) => deps.onProgress?.({ feed: feed.name, phase, done }),
    wrote: () =>
      deps.onProgress?.({
        feed: feed.name,
        phase: 'write',
        done: ++written,
        ...(writeTotal !== undefined && { total: writeTotal }),
      }),
    addWrites: (n) => {
      writeTotal = (writeTotal ?? 0) + n;
    },
    report: (l, r) => {
      const paged = run.paged.get(l);
      const input: LaneReportInput = {
        ...r,
        remote: { ...r.remote, ...(paged && paged.countedIn !== l.id && { pagingCountedIn: paged.countedIn }) },
        feed: feed.name,
        chatbot: l.chatbot,
        unmapped: unmapped.list(),
        displayRules: display,
        ...(replaced.size && {
          valuesReplaced: [...replaced].map(([field, count]) => ({ field, count })).sort((a, b) => b.count - a.count),
        }),
        calls: { before: run.callsBefore.get(l), after: deps.calls?.snapshot(l.id) },
        stateLocation: deps.store.location,
        startedAt: run.startedAt,
        durationMs: run.ms(),
        ...(opts.attempt && { attempt: opts.attempt }),
      };
      run.reports.set(l, laneReport(input, logger.child({ chatbot: l.chatbot })));
    },
  };
}

/** What a lane is set up on: its chatbot's state and the index its paging fills (finished or not). */
interface LaneParts {
  state: ChatbotStateRead['state'];
  stamps: ChatbotStateRead['stamps'];
  index: RemoteIndex;
}

/** Once its chatbot is paged: the lane's stored fingerprints are asked through the chatbot's index (only of keys the chatbot holds). */
function attachStored(lane: Omit<LiveLane, 'paged'>, paged: LiveLane['paged']): void {
  lane.remote.attachFingerprints(lane.own.fingerprints);
  // (what was read is held by the index alone past here, until planning is over, unless other
  // writers of the chatbot need it to know which listings are this lane's: their deletes leave those alone)
  if (paged.state.feeds.size === 1) lane.own.fingerprints = new Map();
}

/** The plan step's setup for one lane: its planner and its executor (its fingerprints go into the index once paged: attachStored). */
function setUpLane(
  l: Lane,
  parts: LaneParts,
  ctx: FeedContext,
  read: { media: MediaStep | undefined; pullMode: () => OpenedFeed['mode'] },
): Omit<LiveLane, 'paged'> {
  const { feed, deps, opts } = ctx;
  const own = parts.state.feeds.get(l.id)!;
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
    display: resolveDisplay(feed.display, feed.source.kind),
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
      keyOf: (item) => recordKey(item, ctx.compiled, feed.keyBy),
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
    // its decisions made into write jobs (a dry run: into its plan view and change log)
    { dryRun: Boolean(opts.dryRun), ...(changes && { changes }) },
  );
  const executor = createExecutor({
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
    ...(changes && { changes }),
    ...(changes &&
      !opts.dryRun && {
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
  return {
    lane: l,
    planner,
    executor,
    remote,
    own,
    missingSince: feed.deletes.graceHours > 0 ? own.missingSince : new Map(),
    planOptions,
  };
}

/** The media mirror step of the feed (src/media/), when media.mirror is set and the feed does not opt out. */
async function mediaStepOf(ctx: FeedContext): Promise<MediaStep | undefined> {
  const { feed, deps, opts } = ctx;
  const mirror = mirrorOf(deps.media, feed);
  if (!mirror) return undefined;
  const state = await loadMediaState(deps.store, mirror.namespaces);
  return createMediaStep({
    feed: feed.name,
    source: feed.source,
    ...mirror,
    state,
    dryRun: Boolean(opts.dryRun),
    signal: ctx.clock.signal,
    logger: ctx.logger,
    budgets: deps.budgets,
  });
}

/** What a keys-only reconcile asks of the sync: the key's source fields, a key row's listing key, and whether a lane holds a key. */
function reconcileAsk(feed: FeedConfig, compiled: CompiledMapping, holds: (key: string) => boolean): ReconcileAsk {
  const sources = keySources(compiled.rules[feed.keyBy === 'URL' ? 'Url' : 'MLSNumber']);
  return {
    keyFields: sources?.map((s) => s.field) ?? [],
    keyOf: (data) => compiled.keyOf(data, feed.keyBy),
    holds,
  };
}

/**
 * What every read of the feed is opened with: its folder, log, clock, pull mode, budgets, the oldest
 * of its lanes' marks, the run's clock, and whether its records will mostly be mapped.
 */
function openOptions(ctx: FeedContext, marks: ReadonlyArray<string | undefined>) {
  const { deps, opts } = ctx;
  return {
    baseDir: deps.baseDir,
    logger: ctx.logger,
    signal: ctx.clock.signal,
    full: opts.full,
    budgets: deps.budgets,
    mostlyUnmapped: ctx.mostlyInStep,
    // a CSV header is judged against the columns the mapping reads before any row (feeds/csv/csv-header.ts)
    columns: columnsNeeded(ctx.feed.mapping),
    ...markOf(marks),
    ...(opts.now && { now: opts.now }),
  };
}

function markOf(marks: ReadonlyArray<string | undefined>): { mark?: string } {
  const mark = oldestMark(marks);
  return mark === undefined ? {} : { mark };
}
