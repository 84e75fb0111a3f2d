// One feed of a run (sync-run.ts), read once through every lane out of it: the lanes are set up
// against their chatbot's paging (plan step, lane-plan.ts), the feed is read and routed
// (read-feed.ts) with the media mirror between mapping and planning, the write jobs go through one
// pool, and each lane is then settled on its own (lane-settle.ts: guard, deletes, commit, report).
import type { FeedConfig } from '../../config/schema.js';
import { openFeed } from '../../feeds/index.js';
import { oldestMark } from '../../feeds/marks.js';
import type { FeedItem, OpenedFeed, ReconcileAsk } from '../../feeds/types.js';
import type { CompiledMapping } from '../../mapping/compile.js';
import { keySources } from '../../mapping/key-sources.js';
import { compileMapping } from '../../mapping/index.js';
import { mapItem } from '../../mapping/map-feed.js';
import type { MappedItem } from '../../mapping/types.js';
import { createUnmappedTally } from '../../mapping/unmapped.js';
import { createMediaStep, loadMediaState, mirrorOf, type MediaStep } from '../../media/index.js';
import { createBeforeCapture } from '../write/capture-before.js';
import { createFeedCollector } from '../read/desired.js';
import { createExecutor, runPool } from '../write/execute.js';
import type { FeedThread } from '../read/feed-thread.js';
import { createLanePlanner } from '../plan/lane-plan.js';
import { laneReport, type LaneReportInput } from '../report/lane-report.js';
import { settleLane, type FeedContext, type LiveLane } from './lane-settle.js';
import type { Lane } from '../read/lanes.js';
import { heldJobs, readFeed } from '../read/read-feed.js';
import { stampSeed } from '../plan/record-stamp.js';
import { ownedByOtherFeeds } from '../settle/state.js';
import { stamped, type Run, type SyncDeps, type SyncOptions } from './sync-run.js';

/** whole listings kept a run when the caller sets no budget (changeLog.maxWholeBytesPerRun's default) */
const DEFAULT_WHOLE_BYTES = 8 << 20;

export async function runFeed(lanes: readonly Lane[], thread: FeedThread | undefined, deps: SyncDeps, opts: SyncOptions, run: Run): Promise<void> {
  const feed = lanes[0]!.feed;
  const ctx = feedContext(feed, deps, opts, run);
  const live: LiveLane[] = [];
  for (const l of lanes) {
    const paged = run.paged.get(l)!;
    ctx.timings.set(l, { remoteMs: paged.remoteMs, feedMs: 0, planMs: 0, executeMs: 0 });
    // a lane whose chatbot could not be paged ends here, with the paging's failure
    if (!paged.ok)
      ctx.report(l, {
        outcome: paged.outcome,
        message: paged.message,
        remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: paged.problem },
        count: 0,
        desired: createFeedCollector('full').side,
        source: {},
      });
    else live.push(setUpLane(l, paged, ctx));
  }
  if (live.length === 0) return;
  ctx.media = await mediaStepOf(feed, deps, opts, ctx);

  const opened: OpenedFeed =
    thread ??
    openFeed(feed.name, feed.source, {
      baseDir: deps.baseDir,
      logger: ctx.logger,
      signal: ctx.clock.signal,
      full: opts.full,
      budgets: deps.budgets,
      ...markOf(live.map((l) => l.own.mark)),
      ...(opts.reconcile && { reconcile: reconcileAsk(feed, ctx.compiled, live) }),
    });
  ctx.opened = opened;
  const read = readFeed({
    feedName: feed.name,
    opened,
    lanes: live,
    compiled: ctx.compiled,
    keyBy: feed.keyBy,
    unmappedSeen: () => ctx.unmappedSeen,
    map: (item) => ctx.map(item, live[0]!.lane.chatbot),
    ...(ctx.media && { media: ctx.media }),
    signal: ctx.clock.signal,
    onRecords: (n) => ctx.progress('feed', n),
    onEnd: () => {
      ctx.writeTotal = live.reduce((n, l) => n + l.planner.tally.creates + l.planner.tally.updates, 0);
      ctx.feedMs = run.ms();
    },
  });
  const pool = { concurrency: deps.apiConfig.concurrency, signal: ctx.clock.signal, allStopped: () => live.every((l) => l.executor.result.stopped) };
  if (opts.dryRun) {
    for await (const _ of read.jobs);
    if (!read.auth) for (const _ of heldJobs(live));
  } else {
    await runPool(read.jobs, pool);
    if (!read.auth) await runPool(heldJobs(live), pool);
  }
  // (the same object: what a lane's settling adds to the write total is what the progress line shows)
  const settling = Object.assign(ctx, { read, opened, last: false, lanes: live });
  for (const [i, l] of live.entries()) {
    ctx.timings.get(l.lane)!.feedMs = ctx.feedMs;
    // the media mirror's state and report go with the feed's last lane, once every lane has written
    settling.last = i === live.length - 1;
    await settleLane(l, settling);
  }
}

/** What every lane of the feed shares: the mapping, the clock, the tallies of the read, the report's frame. */
function feedContext(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions, run: Run): FeedContext {
  const unmapped = createUnmappedTally();
  const replaced = new Map<string, number>();
  const ctx: FeedContext = {
    feed,
    deps,
    opts,
    run,
    clock: run.clock(feed),
    logger: deps.logger.child({ feed: feed.name }),
    unmappedSeen: 0,
    compiled: compileMapping(feed.mapping, {
      onUnmapped: (u) => {
        ctx.unmappedSeen++;
        unmapped.add(u);
      },
    }),
    /** one feed item mapped; a value replaced by its rule's default (onInvalid: default) is counted */
    map: (item: FeedItem, chatbot: string): MappedItem => {
      const mapped = mapItem(item, ctx.compiled, { serialNumber: chatbot, keyBy: feed.keyBy });
      if (mapped.kind === 'listing' && mapped.replaced) for (const f of mapped.replaced) replaced.set(f, (replaced.get(f) ?? 0) + 1);
      return mapped;
    },
    timings: new Map(),
    writeTotal: undefined,
    feedMs: 0,
    progress: (phase, done) => deps.onProgress?.({ feed: feed.name, phase, done, ...(phase === 'write' && ctx.writeTotal !== undefined && { total: ctx.writeTotal }) }),
    report: (l, r) =>
      run.reports.set(
        l,
        laneReport(
          {
            ...r,
            remote: { ...r.remote, ...(run.paged.get(l) && run.paged.get(l)!.countedIn !== l.id && { pagingCountedIn: run.paged.get(l)!.countedIn }) },
            feed: feed.name,
            chatbot: l.chatbot,
            unmapped: unmapped.list(),
            ...(replaced.size && { valuesReplaced: [...replaced].map(([field, count]) => ({ field, count })).sort((a, b) => b.count - a.count) }),
            calls: { before: run.callsBefore.get(l), after: deps.calls?.snapshot(l.id) },
            stateLocation: deps.store.location,
            timings: ctx.timings.get(l) ?? { remoteMs: 0, feedMs: 0, planMs: 0, executeMs: 0 },
            startedAt: run.startedAt,
            durationMs: run.ms(),
            ...(opts.attempt && { attempt: opts.attempt }),
          } satisfies LaneReportInput,
          ctx.logger.child({ chatbot: l.chatbot }),
        ),
      ),
  };
  return ctx;
}

/** The plan step's setup for one lane: its fingerprints into its chatbot's index, its planner and its executor. */
function setUpLane(l: Lane, paged: LiveLane['paged'], ctx: FeedContext): LiveLane {
  const { feed, deps, opts } = ctx;
  const own = paged.state.feeds.get(l.id)!;
  const remote = paged.remote.byKey;
  // this lane's fingerprints go into the chatbot's index (asked only of keys the chatbot holds)
  remote.attachFingerprints(own.fingerprints);
  // (what was read is not held past here, unless other writers of the chatbot need it to know
  // which listings are this lane's: their deletes leave those alone)
  if (paged.state.feeds.size === 1) own.fingerprints = new Map();
  const ignore: ReadonlySet<string> = new Set(feed.ignore);
  const planOptions = { keyBy: feed.keyBy, deletesMode: feed.deletes.mode, ignore, fingerprints: remote.fingerprints, ownedElsewhere: ownedByOtherFeeds(paged.state, l.id) };
  const changes = deps.changes?.(l);
  const mirror = mirrorOf(deps.media, feed);
  // record stamps (record-stamp.ts), unless a compared field reads the clock
  const seed = stamped(l) ? stampSeed({ mapping: feed.mapping, chatbot: l.chatbot, keyBy: feed.keyBy, ignore, ...(mirror && { media: mirror.identity }) }) : undefined;
  const planner = createLanePlanner({
    chatbot: l.chatbot,
    keyBy: feed.keyBy,
    remote,
    planOptions,
    seed,
    stamps: paged.stamps.get(l.id) ?? new Map(),
    knownRecurring: own.recurring,
    keyOf: (item) => ctx.compiled.keyOf(item.data, feed.keyBy),
    map: (item) => ctx.map(item, l.chatbot),
    dryRun: Boolean(opts.dryRun),
    pullMode: () => ctx.opened?.mode ?? 'full',
    ...(mirror && {
      rewriteKnown: (entry, item) => ctx.media?.rewriteKnown({ key: entry.key, listing: entry.listing, record: item.kind === 'record' ? item.data : undefined }) ?? true,
    }),
    ...(changes && { changes }),
  });
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
    onProgress: ({ done }) => ctx.progress('write', done),
    ...(changes && { changes }),
    ...(changes &&
      !opts.dryRun && {
        before: createBeforeCapture({
          api: deps.api,
          store: deps.store,
          feed: l.id,
          serialNumber: l.chatbot,
          keyBy: feed.keyBy,
          ignore,
          maxBytes: deps.maxWholeBytes ?? DEFAULT_WHOLE_BYTES,
          signal: ctx.clock.signal,
        }),
      }),
  });
  return { lane: l, planner, executor, remote, paged, own, missingSince: feed.deletes.graceHours > 0 ? own.missingSince : new Map(), planOptions };
}

/** The media mirror step of the feed (src/media/), when media.mirror is set and the feed does not opt out. */
async function mediaStepOf(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions, ctx: FeedContext): Promise<MediaStep | undefined> {
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
function reconcileAsk(feed: FeedConfig, compiled: CompiledMapping, live: readonly LiveLane[]): ReconcileAsk {
  const sources = keySources(compiled.rules[feed.keyBy === 'URL' ? 'Url' : 'MLSNumber']);
  return {
    keyFields: sources?.map((s) => s.field) ?? [],
    keyOf: (data) => compiled.keyOf(data, feed.keyBy),
    holds: (key) => live.some((l) => l.remote.has(key)),
  };
}

function markOf(marks: ReadonlyArray<string | undefined>): { mark?: string } {
  const mark = oldestMark(marks);
  return mark === undefined ? {} : { mark };
}
