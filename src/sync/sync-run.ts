// One sync run (docs/design.md, "The flow of one run"): lanes (a feed writing into a chatbot,
// lanes.ts) grouped by chatbot and by feed, so that each chatbot is paged once for every lane
// into it, and each feed is read once for every lane out of it. The steps, each a file:
//   page     page-chatbot.ts   each chatbot's listings, once, and its sync state
//   read     read-feed.ts      each feed, once; each record routed to its lanes, mapped at most once
//   plan     lane-plan.ts      per lane: stamp check, pending window, diff against the chatbot's copies
//   write    execute.ts        one pool of `api.concurrency` calls for the lanes of the feed
//   guard    lane-guard.ts     per lane: the deletes it may make
//   commit   lane-commit.ts    per lane: its state, atomically, after its writes
//   report   lane-report.ts    per lane: its report
// A lane that fails (paging, auth, breaker, guard) ends alone: the other lanes of its feed and of
// its chatbot go on. The caller holds the lock of every chatbot of the run.
import { setMaxListeners } from 'node:events';
import type { CallCounter } from '../api/call-counter.js';
import type { ChatbotApi } from '../api/types.js';
import type { Budgets } from '../budget/budget.js';
import type { ApiConfig, FeedConfig } from '../config/schema.js';
import { openFeed } from '../feeds/index.js';
import { oldestMark } from '../feeds/marks.js';
import type { OpenedFeed } from '../feeds/types.js';
import type { PlanOptions } from './plan-types.js';
import type { FeedState } from './state.js';
import type { Logger } from '../log.js';
import { compileMapping } from '../mapping/index.js';
import { mapItem } from '../mapping/map-feed.js';
import { createUnmappedTally } from '../mapping/unmapped.js';
import type { KvStore } from '../state/kv-store.js';
import { deleteChange, rejectChange, type ChangeSink } from './changes.js';
import { createExecutor, deleteJobs, groupBy, runPool } from './execute.js';
import { openFeedThread, type FeedThread } from './feed-thread.js';
import { commitLane } from './lane-commit.js';
import { createFeedCollector } from './desired.js';
import { guardLane } from './lane-guard.js';
import { createLanePlanner } from './lane-plan.js';
import { laneOutcome, laneReport, readMessage, remoteInfo, type LaneReportInput } from './lane-report.js';
import { writersOf, type Lane } from './lanes.js';
import type { EchoFiles } from './page-echo.js';
import { pageChatbot, type PagedChatbot } from './page-chatbot.js';
import { heldJobs, readFeed, type ReadingLane } from './read-feed.js';
import { stampSeed } from './record-stamp.js';
import { failedReport, type SyncReport } from './report.js';
import { ownedByOtherFeeds } from './state.js';

export interface SyncProgress {
  feed: string;
  phase: 'feed' | 'write';
  done: number;
  /** how many there will be, once known (the progress line shows done/total) */
  total?: number;
}

export interface SyncDeps {
  api: ChatbotApi;
  store: KvStore;
  /** every feed of the config: the writers of each chatbot are found among them (their listings are left alone) */
  configFeeds: ReadonlyArray<Pick<FeedConfig, 'name' | 'keyBy' | 'chatbot' | 'chatbots'>>;
  logger: Logger;
  /** folder relative feed paths resolve against (the config file's) */
  baseDir: string;
  apiConfig: ApiConfig;
  signal?: AbortSignal;
  /** counts this run's API calls for the report (fed by the client's onCall) */
  calls?: CallCounter;
  onProgress?: (p: SyncProgress) => void;
  /** feed source request budgets (source.limits), shared through Redis in a worker */
  budgets?: Budgets;
  /** each lane's change log: told of every write (or, in a dry run, planned write), rejected record and held-back delete */
  changes?: (lane: Lane) => ChangeSink | undefined;
  /** where the page echo is kept between processes (a CLI run; a worker remembers in memory) */
  echoFiles?: EchoFiles;
}

export interface SyncOptions {
  dryRun?: boolean;
  force?: boolean;
  /** RESO: a full pull instead of an incremental one */
  full?: boolean;
  attempt?: { made: number; max: number };
  /** for tests of the grace period */
  now?: () => Date;
  /** CSV files of at least this many bytes are read by a thread of their own (default THREAD_MIN_BYTES; tests) */
  threadMinBytes?: number;
}

/** A feed's own deadline (feeds[].deadlineMinutes), joined with the caller's signal. */
interface FeedClock {
  signal: AbortSignal;
  deadline: AbortSignal;
  message(): string | undefined;
}

/** Runs the lanes; one report per lane, in the order given. */
export async function runSync(lanes: readonly Lane[], deps: SyncDeps, opts: SyncOptions = {}): Promise<SyncReport[]> {
  const run = startRun(lanes, deps, opts);
  const feeds = groupBy(lanes, (l) => l.feed.name);
  // A large CSV file is read by a thread of its own from now on, ahead of the planning (feed-thread.ts).
  const threads = new Map<string, FeedThread | undefined>();
  try {
    for (const [name, its] of feeds) threads.set(name, await openThread(its[0]!.feed, deps, run.clock(its[0]!.feed).signal, opts));
    // step page: each chatbot once per row options (a chatbot's lanes almost always agree on them)
    for (const [, its] of groupBy(lanes, (l) => `${l.chatbot}\n${l.feed.keyBy}\n${[...l.feed.ignore].sort().join(',')}`)) {
      const paged = await pageGroup(its, deps, opts, run);
      for (const l of its) run.paged.set(l, paged);
    }
    for (const [name, its] of feeds) await runFeedLanes(its, threads.get(name), deps, opts, run);
  } finally {
    for (const t of threads.values()) await t?.close();
  }
  return lanes.map((l) => run.reports.get(l) ?? failedReport({ feed: l.feed.name, chatbot: l.chatbot, message: 'the run ended before this lane was reported', stateLocation: deps.store.location, ...(opts.dryRun && { dryRun: true }) }));
}

interface Run {
  startedAt: Date;
  ms(): number;
  callsBefore: ReturnType<CallCounter['snapshot']> | undefined;
  clock(feed: FeedConfig): FeedClock;
  paged: Map<Lane, PagedChatbot & { remoteMs: number }>;
  reports: Map<Lane, SyncReport>;
}

function startRun(lanes: readonly Lane[], deps: SyncDeps, opts: SyncOptions): Run {
  const t0 = performance.now();
  const clocks = new Map<string, FeedClock>();
  // every call in flight listens on the signal (list pages, writes, their backoff sleeps):
  // api.concurrency of them at once is the design, not a leak, so Node's warning past 10 listeners would only alarm ops
  const listeners = Math.max(10, 4 * deps.apiConfig.concurrency + 10) * Math.max(1, lanes.length);
  const clock = (feed: FeedConfig): FeedClock => {
    let c = clocks.get(feed.name);
    if (c) return c;
    const deadline = AbortSignal.timeout(feed.deadlineMinutes * 60_000);
    const signal = deps.signal ? AbortSignal.any([deps.signal, deadline]) : deadline;
    setMaxListeners(listeners, signal);
    c = {
      signal,
      deadline,
      message: () =>
        deadline.aborted
          ? `the run passed its deadline (deadlineMinutes ${feed.deadlineMinutes} of feed ${feed.name}): calls in flight were finished, nothing new was sent; the next run goes on from what was written`
          : undefined,
    };
    clocks.set(feed.name, c);
    return c;
  };
  void opts;
  return { startedAt: new Date(), ms: () => Math.round(performance.now() - t0), callsBefore: deps.calls?.snapshot(), clock, paged: new Map(), reports: new Map() };
}

async function openThread(feed: FeedConfig, deps: SyncDeps, signal: AbortSignal, opts: SyncOptions): Promise<FeedThread | undefined> {
  return openFeedThread(feed.source, { baseDir: deps.baseDir, mapping: feed.mapping, keyBy: feed.keyBy, signal, ...(opts.threadMinBytes !== undefined && { minBytes: opts.threadMinBytes }) });
}

/** Step page for the lanes of one chatbot that share row options. */
async function pageGroup(its: readonly Lane[], deps: SyncDeps, opts: SyncOptions, run: Run): Promise<PagedChatbot & { remoteMs: number }> {
  const first = its[0]!;
  // the paging serves every lane of the group: it ends with the latest of their deadlines
  const longest = its.reduce((a, b) => (b.feed.deadlineMinutes > a.feed.deadlineMinutes ? b : a)).feed;
  const clock = run.clock(longest);
  const paged = await pageChatbot({
    api: deps.api,
    store: deps.store,
    apiConfig: deps.apiConfig,
    chatbot: first.chatbot,
    lanes: its,
    writers: withLanes(writersOf(deps.configFeeds, first.chatbot), its),
    stamped: new Set(its.filter(stamped).map((l) => l.id)),
    // the change log names each changed field old → new, in real runs too
    keepCompared: Boolean(opts.dryRun || its.some((l) => deps.changes?.(l))),
    ...(deps.echoFiles && { echoFiles: deps.echoFiles }),
    signal: clock.signal,
    deadlineMessage: clock.message,
  });
  return { ...paged, remoteMs: run.ms() };
}

/** The config's writers of the chatbot, and the run's lanes (a feed run from outside the config: tests, previews). */
function withLanes(writers: ReturnType<typeof writersOf>, lanes: readonly Lane[]) {
  const missing = lanes.filter((l) => !writers.some((w) => w.name === l.id)).map((l) => ({ name: l.id, keyBy: l.feed.keyBy }));
  return [...writers, ...missing];
}

/** Record stamps, unless a compared field reads the clock (record-stamp.ts). */
function stamped(lane: Lane): boolean {
  const ignore = new Set(lane.feed.ignore);
  return compileMapping(lane.feed.mapping).clockFields.every((f) => ignore.has(f));
}

/** A lane whose chatbot was paged: it reads, plans and writes. */
interface LiveLane extends ReadingLane {
  paged: Extract<PagedChatbot, { ok: true }>;
  own: FeedState;
  missingSince: ReadonlyMap<string, string>;
  planOptions: PlanOptions;
}

function markOf(marks: ReadonlyArray<string | undefined>): { mark?: string } {
  const mark = oldestMark(marks);
  return mark === undefined ? {} : { mark };
}

/** One feed, read once, through every lane out of it. */
async function runFeedLanes(lanes: readonly Lane[], thread: FeedThread | undefined, deps: SyncDeps, opts: SyncOptions, run: Run): Promise<void> {
  const feed = lanes[0]!.feed;
  const clock = run.clock(feed);
  const logger = deps.logger.child({ feed: feed.name });
  const unmapped = createUnmappedTally();
  let unmappedSeen = 0;
  const compiled = compileMapping(feed.mapping, {
    onUnmapped: (u) => {
      unmappedSeen++;
      unmapped.add(u);
    },
  });
  const ignore: ReadonlySet<string> = new Set(feed.ignore);
  const timings = new Map<Lane, LaneReportInput['timings']>();
  const base = (l: Lane, paged: { remoteMs: number }) => {
    const t = { remoteMs: paged.remoteMs, feedMs: 0, planMs: 0, executeMs: 0 };
    timings.set(l, t);
    return t;
  };
  const reportOf = (l: Lane, r: Omit<LaneReportInput, 'feed' | 'chatbot' | 'unmapped' | 'calls' | 'stateLocation' | 'timings' | 'startedAt' | 'durationMs' | 'attempt'>) =>
    run.reports.set(
      l,
      laneReport(
        {
          ...r,
          feed: feed.name,
          chatbot: l.chatbot,
          unmapped: unmapped.list(),
          calls: { before: run.callsBefore, after: deps.calls?.snapshot() },
          stateLocation: deps.store.location,
          timings: timings.get(l) ?? { remoteMs: 0, feedMs: 0, planMs: 0, executeMs: 0 },
          startedAt: run.startedAt,
          durationMs: run.ms(),
          ...(opts.attempt && { attempt: opts.attempt }),
        },
        logger.child({ chatbot: l.chatbot }),
      ),
    );

  // lanes whose chatbot could not be paged end here, with the paging's failure
  const live: LiveLane[] = [];
  let writeTotal: number | undefined;
  let feedMs = 0;
  const progress = (phase: 'feed' | 'write', done: number) => deps.onProgress?.({ feed: feed.name, phase, done, ...(phase === 'write' && writeTotal !== undefined && { total: writeTotal }) });
  for (const l of lanes) {
    const paged = run.paged.get(l)!;
    base(l, paged);
    if (!paged.ok) {
      reportOf(l, { outcome: paged.outcome, message: paged.message, remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: paged.problem }, count: 0, desired: createFeedCollector('full').side, source: {} });
      continue;
    }
    const own = paged.state.feeds.get(l.id)!;
    const remote = paged.remote.byKey;
    // this lane's fingerprints go into the chatbot's index (asked only of keys the chatbot holds)
    remote.attachFingerprints(own.fingerprints);
    own.fingerprints = new Map(); // (what was read is not held past here)
    const planOptions = { keyBy: feed.keyBy, deletesMode: feed.deletes.mode, ignore, fingerprints: remote.fingerprints, ownedElsewhere: ownedByOtherFeeds(paged.state, l.id) };
    const changes = deps.changes?.(l);
    const seed = stamped(l) ? stampSeed({ mapping: feed.mapping, chatbot: l.chatbot, keyBy: feed.keyBy, ignore }) : undefined;
    const planner = createLanePlanner({
      chatbot: l.chatbot,
      keyBy: feed.keyBy,
      remote,
      planOptions,
      seed,
      stamps: paged.stamps.get(l.id) ?? new Map(),
      knownRecurring: own.recurring,
      keyOf: (item) => compiled.keyOf(item.data, feed.keyBy),
      map: (item) => mapItem(item, compiled, { serialNumber: l.chatbot, keyBy: feed.keyBy }),
      dryRun: Boolean(opts.dryRun),
      ...(changes && { changes }),
    });
    const executor = createExecutor({
      api: deps.api,
      serialNumber: l.chatbot,
      keyBy: feed.keyBy,
      concurrency: deps.apiConfig.concurrency,
      batchSize: feed.deletes.batchSize,
      retries: deps.apiConfig.retries,
      logger: logger.child({ chatbot: l.chatbot }),
      feed: feed.name,
      signal: clock.signal,
      onProgress: ({ done }) => progress('write', done),
      ...(changes && { changes }),
    });
    live.push({ lane: l, planner, executor, remote, paged, missingSince: feed.deletes.graceHours > 0 ? own.missingSince : new Map(), own, planOptions });
  }
  if (live.length === 0) return;

  const opened: OpenedFeed =
    thread ??
    openFeed(feed.name, feed.source, {
      baseDir: deps.baseDir,
      logger,
      signal: clock.signal,
      full: opts.full,
      budgets: deps.budgets,
      ...markOf(live.map((l) => l.own.mark)),
    });
  const read = readFeed({ feedName: feed.name, opened, lanes: live, compiled, keyBy: feed.keyBy, unmappedSeen: () => unmappedSeen,
    onRecords: (n) => progress('feed', n),
    onEnd: () => {
      writeTotal = live.reduce((n, l) => n + l.planner.tally.creates + l.planner.tally.updates, 0);
      feedMs = run.ms();
    },
  });
  const allStopped = () => live.every((l) => l.executor.result.stopped);
  if (opts.dryRun) {
    for await (const _ of read.jobs);
    if (!read.auth) for (const _ of heldJobs(live));
  } else {
    await runPool(read.jobs, { concurrency: deps.apiConfig.concurrency, signal: clock.signal, allStopped });
    if (!read.auth) await runPool(heldJobs(live), { concurrency: deps.apiConfig.concurrency, signal: clock.signal, allStopped });
  }
  for (const l of live) {
    const t = timings.get(l.lane)!;
    t.feedMs = feedMs;
    await settleLane(l, t);
  }

  /** Steps guard, deletes, commit and report of one lane, once its feed has been read. */
  async function settleLane(l: LiveLane, t: LaneReportInput['timings']): Promise<void> {
    const { planner, executor, remote, paged } = l;
    executor.settle();
    remote.dropFingerprints(); // not needed past planning
    planner.done();
    const desired = planner.collector.side;
    // Read only now: an incremental RESO feed with no stored mark turns into a full pull once read.
    desired.mode = opened.mode;
    if (!read.done) {
      desired.complete = false;
      desired.readError ??= 'the run stopped before the feed was read whole';
    }
    const { rest, guard } = guardLane({
      remote: paged.remote,
      desired,
      planOptions: l.planOptions,
      duplicateDeletes: planner.tally.duplicateDeletes,
      deletes: feed.deletes,
      force: Boolean(opts.force),
      now: (opts.now ?? (() => new Date()))(),
      missingSince: l.missingSince,
    });
    t.planMs = run.ms();
    const changes = deps.changes?.(l.lane);
    if (changes) {
      for (const r of desired.rejected) changes(rejectChange(r));
      for (const d of guard.withheld) changes(deleteChange(d, true));
      if (opts.dryRun) for (const d of guard.allowed) changes(deleteChange(d));
    }
    const { tally } = planner;
    const counted = { protected: rest.protectedKeys.length, otherFeeds: rest.otherFeeds, unchanged: tally.unchanged, unchangedByStamp: tally.unchangedByStamp, duplicates: tally.duplicates };
    const common = { remote: remoteInfo(paged.remote), count: paged.remote.count, desired, guard, counted, source: { ...(opened.since !== undefined && { since: opened.since }), ...(opened.stats && { stats: opened.stats }) }, ...(read.routedNowhere > 0 && { routedNowhere: read.routedNowhere }) };
    if (opts.dryRun) {
      const shown = [...guard.allowed, ...guard.withheld];
      planner.view.deletes = shown.map((d) => ({ key: d.key, reason: d.reason, keyType: d.keyType, deleteKey: d.deleteKey }));
      const outcome = laneOutcome({ stopped: read.auth ? 'failed' : undefined, guard, failures: 0, complete: desired.complete });
      reportOf(l.lane, { ...common, outcome, message: read.auth ?? guard.message ?? readMessage(desired.readError), planned: { creates: tally.creates, updates: tally.updates, deletes: guard.allowed }, view: planner.view });
      return;
    }
    const exec = executor.result;
    if (!exec.stopped && !read.auth && guard.allowed.length) {
      const batches = [...deleteJobs(guard.allowed, feed.deletes.batchSize)];
      writeTotal = (writeTotal ?? 0) + batches.length;
      await executor.run(batches);
    }
    t.executeMs = run.ms();
    const outcome = laneOutcome({ stopped: exec.stopped ?? (read.auth ? 'failed' : undefined), guard, failures: exec.failures.length, complete: desired.complete });
    const message = (clock.message() ?? exec.stopReason ?? read.auth) ?? guard.message ?? readMessage(desired.readError);
    await commitLane(deps.store, {
      id: l.lane.id,
      tally,
      exec,
      guard,
      missingSince: l.missingSince,
      ...(outcome === 'ok' && opened.mark !== undefined && { mark: opened.mark }),
      ...(read.done && { recurring: { now: planner.pending.recurring, before: l.own.recurring } }),
    });
    reportOf(l.lane, { ...common, outcome, ...(message && { message }), exec });
  }
}
