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
import type { FeedConfig } from '../../config/schema.js';
import { stamped } from '../plan/record-stamp.js';
import { openFeedThread, type FeedThread } from '../read/feed-thread.js';
import { writersOf, type Lane } from '../read/lanes.js';
import { pagingTurns, startPaging, type ChatbotStateRead, type PagingHandle } from '../remote/page-chatbot.js';
import { readChatbotState, STATE_READS_AT_ONCE } from '../settle/state.js';
import type { SyncReport } from '../report/report.js';
import { groupBy } from '../util/collections.js';
import type { FeedClock, Paged, Run, RunOptions, SyncDeps, SyncOptions, SyncTestHooks } from './context.js';
import { runFeed, type RunPaging } from './feed-run.js';
import { writeSideOf } from './write-side.js';

/** Runs the lanes; one report per lane, in the order given. `hooks`: tests only. */
export async function runSync(
  lanes: readonly Lane[],
  deps: SyncDeps,
  options: SyncOptions = {},
  hooks: SyncTestHooks = {},
): Promise<SyncReport[]> {
  const opts: RunOptions = { ...options, ...hooks };
  const run = startRun(lanes, deps, opts);
  const feeds = groupBy(lanes, (l) => l.feed.name);
  // step page: each chatbot once per row options (a chatbot's lanes almost always agree on them), a few at once in order;
  // a feed may be read beside its chatbot's paging (feed-run.ts), and writes start once every chatbot is paged
  // an ask that names its records (SourceAsk.names): its chatbots are asked only about the keys they name, once read (read-early.ts readNamed)
  let resolveKeys: (keys: ReadonlySet<string>) => void = () => undefined;
  const keys = opts.ask?.names ? new Promise<ReadonlySet<string>>((resolve) => (resolveKeys = resolve)) : undefined;
  const paging = startPagings(lanes, deps, run, keys, opts);
  try {
    for (const [, its] of feeds) {
      const states = await Promise.all(its.map((l) => paging.of(l).state));
      // a large CSV file whose records will mostly be mapped is read by a thread of its own, beside the planning (feed-thread.ts)
      const mapped = mostlyMapped(its.map((l, i) => stampCounts(l, states[i]!)));
      const thread =
        opts.threadAlways || mapped
          ? await openThread(its[0]!.feed, deps, run.clock(its[0]!.feed).signal, opts)
          : undefined;
      try {
        // (a feed whose records are mostly in step by their stamps may be read beside its chatbot's paging)
        await runFeed(its, thread, deps, opts, run, {
          ...paging,
          readBeside: !mapped,
          ...(keys && { namedKeys: { resolve: resolveKeys } }),
        });
      } finally {
        await thread?.close();
      }
    }
  } finally {
    // (a run that failed before its named records were read: the pagings waiting for their keys ask none)
    resolveKeys(new Set());
    // (a feed that failed before every chatbot was paged: the paging in flight ends first)
    await paging.all; // (never rejects: pagingTurns keeps each paging's failure for its lanes)
    // every lane is settled: each chatbot's index lets go of its file of compared JSON (compared-store.ts)
    for (const paged of new Set(run.paged.values())) if (paged.ok) paged.remote.byKey.close();
  }
  return lanes.map(
    (l) =>
      run.reports.get(l) ??
      run.writes.unreported({
        feed: l.feed.name,
        chatbot: l.chatbot,
        message: 'the run ended before this lane was reported',
        stateLocation: deps.store.location,
      }),
  );
}

/**
 * Every chatbot of the run paged, a few groups at once in order (pagingTurns); each lane's paging
 * into run.paged as it ends. Their states are read a few at once too, in the same order and apart
 * from the pagings' turns (a paging waits for its state only once its pages are in): a job's 100
 * chatbots' state reads sent at once were 800 Redis commands queued on the connection ahead of the
 * first page's budget ask.
 */
function startPagings(
  lanes: readonly Lane[],
  deps: SyncDeps,
  run: Run,
  keys: Promise<ReadonlySet<string>> | undefined,
  opts: RunOptions,
): RunPaging {
  const of = new Map<Lane, PagingHandle>();
  const turns = pagingTurns(opts.pagingsAtOnce);
  const reads = pagingTurns(opts.stateReadsAtOnce ?? STATE_READS_AT_ONCE);
  for (const [, its] of groupBy(
    lanes,
    (l) => `${l.chatbot}\n${l.feed.keyBy}\n${[...l.feed.ignore].sort().join(',')}`,
  )) {
    const handle = pageGroup(its, deps, run, { paging: turns.turn(), state: reads.turn() }, keys);
    for (const l of its) of.set(l, handle);
    turns.ended(handle.done);
    reads.ended(handle.state);
  }
  return { of: (l) => of.get(l)!, all: turns.all() };
}

/** The run's clock, its lanes' calls before it, and where its writes go (decided here, once: write-side.ts). */
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
  const callsBefore = new Map(lanes.map((l) => [l, deps.calls?.snapshot(l.id)]));
  return {
    startedAt: new Date(),
    ms: () => Math.round(performance.now() - t0),
    callsBefore,
    clock,
    paged: new Map(),
    reports: new Map(),
    writes: writeSideOf(opts, deps),
  };
}

async function openThread(
  feed: FeedConfig,
  deps: SyncDeps,
  signal: AbortSignal,
  opts: RunOptions,
): Promise<FeedThread | undefined> {
  return openFeedThread(feed.source, {
    baseDir: deps.baseDir,
    mapping: feed.mapping,
    keyBy: feed.keyBy,
    signal,
    ...(opts.threadMinBytes !== undefined && { minBytes: opts.threadMinBytes }),
  });
}

/**
 * Whether the feed's records will mostly be mapped: its lanes hold record stamps for fewer than
 * half of the listings they wrote (a first sync, a feed whose mapping reads the clock). Only then
 * does a feed thread earn its place: it takes the file's parsing off the thread that maps. A rerun
 * whose records are in step by their stamps maps almost none; there the thread bought no time
 * and cost about 150 MB of RSS and 2 s of CPU (a 100k no-change rerun, measured on 25 Nov 2026).
 */
export function mostlyMapped(lanes: ReadonlyArray<{ stamps: number; written: number }>): boolean {
  let stamps = 0;
  let written = 0;
  for (const l of lanes) {
    stamps += l.stamps;
    written += l.written;
  }
  return written === 0 || stamps * 2 < written;
}

/**
 * A lane's stored record stamps and fingerprints (the listings it wrote), as its chatbot's state read
 * them. Counted: both counts at 100k listings cost about 5 ms once a feed (LMDB counts keys natively);
 * a bounded comparison (count the fingerprints, then skip half as many stamps) measured about as
 * slow, LMDB's skip costing more a key than its count, so the rule stays plain.
 */
function stampCounts(l: Lane, read: ChatbotStateRead): { stamps: number; written: number } {
  return { stamps: read.stamps.get(l.id)?.size ?? 0, written: read.state.feeds.get(l.id)?.fingerprints.size ?? 0 };
}

/**
 * Step page for the lanes of one chatbot that share row options, once `after.paging` has settled,
 * its state read once `after.state` has. The paging's calls are counted in the report of the
 * group's first lane (the others name it: remote.pagingCountedIn).
 */
function pageGroup(
  its: readonly Lane[],
  deps: SyncDeps,
  run: Run,
  after: { paging: Promise<unknown>; state: Promise<unknown> },
  keys: Promise<ReadonlySet<string>> | undefined,
): PagingHandle {
  const first = its[0]!;
  // the paging serves every lane of the group: it ends with the latest of their deadlines
  const longest = its.reduce((a, b) => (b.feed.deadlineMinutes > a.feed.deadlineMinutes ? b : a)).feed;
  const clock = run.clock(longest);
  const input = {
    api: deps.api,
    apiConfig: deps.apiConfig,
    chatbot: first.chatbot,
    lanes: its,
    writers: withLanes(writersOf(deps.configFeeds, first.chatbot), its),
    // (a dry run's view and the change log name each changed field old → new)
    keepCompared: run.writes.keepsCompared(its),
    ...(deps.echoFiles && { echoFiles: deps.echoFiles }),
    signal: clock.signal,
    deadlineMessage: clock.message,
    callScope: first.id,
    logger: deps.logger,
    ...(keys && { keys }),
  };
  const state = after.state.then(() =>
    readChatbotState(
      deps.store,
      first.chatbot,
      input.writers,
      its,
      new Set(its.filter((l) => stamped(l)).map((l) => l.id)),
    ),
  );
  // (as readChatbotState's own: a run whose paging fails ends with that failure)
  state.catch(() => undefined);
  const handle = startPaging(input, after.paging, state);
  const done = handle.done.then((paged): Paged => {
    const out = { ...paged, remoteMs: run.ms(), countedIn: first.id };
    for (const l of its) run.paged.set(l, out);
    return out;
  });
  return { ...handle, done };
}

/** The config's writers of the chatbot, and the run's lanes (a feed run from outside the config: tests, previews). */
function withLanes(writers: ReturnType<typeof writersOf>, lanes: readonly Lane[]) {
  const missing = lanes
    .filter((l) => !writers.some((w) => w.name === l.id))
    .map((l) => ({ name: l.id, keyBy: l.feed.keyBy }));
  return [...writers, ...missing];
}
