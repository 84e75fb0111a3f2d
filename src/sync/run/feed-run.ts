// One feed of a run (sync-run.ts), read once through every lane out of it: the lanes are set up
// against their chatbot's paging (plan step, lane-plan.ts), the feed is read and routed
// (read-feed.ts) with the media mirror between mapping and planning, the write jobs go through one
// pool, and each lane is then settled on its own (lane-settle.ts: guard, deletes), the lanes
// committed together and reported.
import type { OpenedFeed } from '../../feeds/types.js';
import { type MediaStep } from '../../media/index.js';
import type { PagingHandle } from '../remote/page-chatbot.js';
import { createFeedCollector } from '../read/desired.js';
import type { FeedThread } from '../read/feed-thread.js';
import type { Lane } from '../read/lanes.js';
import { heldJobs } from '../read/read-feed.js';
import { runPool } from '../write/pool.js';
import type { AfterRead, FeedContext, LiveLane, Run, SyncDeps, RunOptions } from './context.js';
import { commitSettled, settleLane, type SettledLane } from './lane-settle.js';
import { sourceStateOf } from '../settle/state.js';
import { feedContext } from './feed-context.js';
import { listingKeys, mediaStepOf, openKeyed, openOptions, openRead, type ReadOpen } from './feed-open.js';
import { attachStored, setUpLane } from './lane-setup.js';
import { readEarly, readNamed, readsWhilePaging } from './read-early.js';
import { openSeal, sealable, type SealOfLane } from './feed-seal.js';
import { noRecords } from '../read/keyed-feed.js';

/** The run's pagings (sync-run.ts): each lane's, under way, and every one of them done. */
export interface RunPaging {
  of(lane: Lane): PagingHandle;
  /** every chatbot of the run is paged (run.paged holds each lane's): writes may start */
  all: Promise<void>;
  /** the feed's records are mostly in step by their stamps: it may be read beside the paging (readsWhilePaging) */
  readBeside?: boolean;
  /** a read of named records (SourceAsk.names): the listing keys they name go here once read (readNamed), and its chatbots' pagings ask only those */
  namedKeys?: { resolve(keys: ReadonlySet<string>): void };
}

export async function runFeed(
  lanes: readonly Lane[],
  thread: FeedThread | undefined,
  deps: SyncDeps,
  opts: RunOptions,
  run: Run,
  paging: RunPaging,
): Promise<void> {
  const feed = lanes[0]!.feed;
  const ctx = feedContext(feed, deps, opts, run, paging.readBeside === true);
  // an ask that names its records: they are fetched first, so the chatbot is asked only about their keys
  const named = paging.namedKeys ? await readNamed(lanes, ctx, paging.namedKeys) : undefined;
  // a feed of one lane read from a file: its seal, looked at while its chatbot is paged (feed-seal.ts);
  // while the seal holds, the feed is not read beside the paging, which may yet show it need not be read
  const seal = !named && sealable(lanes, ctx) ? openSeal(lanes[0]!, ctx, paging.of(lanes[0]!)) : undefined;
  const sealHolds = seal !== undefined && !opts.full && (await seal.holdsBeforePaging());
  // a feed of one lane whose records are mostly in step by their stamps is read while its chatbot is paged
  const early =
    !sealHolds && !thread && paging.readBeside && readsWhilePaging(lanes, ctx)
      ? await readEarly(lanes[0]!, ctx, paging.of(lanes[0]!))
      : undefined;
  await paging.all;
  const paged = pagedLanes(lanes, ctx);
  if (paged.length === 0) {
    await early?.read.read.close();
    return;
  }
  const sealOf = seal && { seal, sealed: false };
  if (sealHolds && (await seal.holds(paged[0]![1].remote))) return readSealed(ctx, paged[0]!, { seal, sealed: true });
  if (early) return readAndSettle(ctx, [early.live(paged[0]![1])], early.opened, undefined, early.read, sealOf);
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
  if (named) {
    // (its records were read before the paging; such a read keeps no mark, so nothing it read beside them is stored)
    feedOf.opened = named;
    return readAndSettle(ctx, live, named, media, openRead(ctx, named, live, media));
  }
  const opened =
    thread ??
    openKeyed(ctx, {
      ...openOptions(
        ctx,
        live.map((l) => l.own.mark),
      ),
      // the source's own state, each lane's copy (a lane whose run failed kept its own)
      state: sourceStateOf(
        deps.store,
        live.map((l) => l.lane.id),
      ),
      // what the run's caller asks of the source (opaque here: the source declares its asks), and what
      // the sync says of listing keys to a source that asks (a RESO keys-only read)
      ...(opts.ask && { ask: opts.ask }),
      keys: listingKeys(feed, ctx.compiled, (key) => live.some((l) => l.remote.has(key))),
    });
  feedOf.opened = opened;
  await readAndSettle(ctx, live, opened, media, openRead(ctx, opened, live, media), sealOf);
}

/**
 * The feed's one lane, its seal holding for the file, config, code, stored state and the chatbot's
 * list as paged: each listing the chatbot holds is counted as the read would count its record (in
 * step by its stamp), and the lane settles as a read one does, on a read of no record.
 */
async function readSealed(ctx: FeedContext, [l, paged]: [Lane, LiveLane['paged']], seal: SealOfLane): Promise<void> {
  const lane = setUpLane(l, { state: paged.state, stamps: paged.stamps, index: paged.remote.byKey }, ctx, {
    media: undefined,
    pullMode: () => 'full',
  });
  attachStored(lane, paged);
  const live: LiveLane = { ...lane, paged };
  live.planner.sealed(paged.remote.byKey.keys(), seal.seal.file);
  const counted = live.planner.collector.side.counts.records;
  ctx.progress('feed', counted);
  ctx.logger.info(
    { feed: ctx.feed.name, chatbot: l.chatbot, listings: counted },
    `feed ${ctx.feed.name}: its file, config and chatbot ${l.chatbot}'s listings are as the last run left them, every record in step: not read`,
  );
  const opened = noRecords();
  await readAndSettle(ctx, [live], opened, undefined, openRead(ctx, opened, [live], undefined), seal);
}

/** The lanes whose chatbot was paged; each other lane ends here, reported with its paging's failure. */
function pagedLanes(lanes: readonly Lane[], ctx: FeedContext): Array<[Lane, LiveLane['paged']]> {
  const paged: Array<[Lane, LiveLane['paged']]> = [];
  for (const l of lanes) {
    const p = ctx.run.paged.get(l)!;
    if (!p.ok)
      ctx.report(l, {
        outcome: p.outcome,
        message: ctx.refusalMessage(p.refused) ?? p.message,
        remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: p.problem },
        count: 0,
        desired: createFeedCollector('full').side,
        source: {},
        timings: { remoteMs: p.remoteMs, feedMs: 0, planMs: 0, executeMs: 0 },
      });
    else paged.push([l, p]);
  }
  return paged;
}

/** Steps read, plan and write, then each lane settled (guard, deletes, commit, report). */
async function readAndSettle(
  ctx: FeedContext,
  live: readonly LiveLane[],
  opened: OpenedFeed,
  media: MediaStep | undefined,
  read: ReadOpen,
  seal?: SealOfLane,
): Promise<void> {
  const after = await readAndWrite(ctx, opened, live, media, read);
  const atOnce = ctx.opts.lanesSettledAtOnce ?? Infinity;
  // the lanes settled and not yet committed: committed a batch at a time (a routed feed's 100 lanes of a no-change
  // run in one apply, not one after another), and before any lane's calls (deletes, the source asked about absences)
  let settled: SettledLane[] = [];
  const commit = async () => {
    const batch = settled;
    settled = [];
    await commitSettled(ctx, batch);
  };
  try {
    for (const [i, l] of live.entries()) {
      // the media mirror's state and report go with the feed's last lane, once every lane has written
      // (settled once its settle is done: `commit` may swap the array out meanwhile)
      const lane = await settleLane(l, ctx, after, {
        last: i === live.length - 1,
        beforeCalls: commit,
        ...(seal && live.length === 1 && { seal }),
      });
      settled.push(lane);
      if (settled.length >= atOnce) await commit();
    }
  } catch (err) {
    // (the lanes settled before the one that failed are committed, as when each lane was committed in turn)
    await commit();
    throw err;
  }
  await commit();
}

/** Steps read, plan and write: the feed read once and routed to its lanes, their jobs through one pool. */
async function readAndWrite(
  ctx: FeedContext,
  opened: OpenedFeed,
  live: readonly LiveLane[],
  media: MediaStep | undefined,
  open: ReadOpen,
): Promise<AfterRead> {
  const { deps } = ctx;
  const { read } = open;
  const pool = {
    concurrency: deps.apiConfig.concurrency,
    signal: ctx.clock.signal,
    allStopped: () => live.every((l) => l.executor.result.stopped),
  };
  // (a dry run's executors record what they are given: write/record.ts)
  await runPool(read.jobs, pool);
  if (!read.auth) await runPool(heldJobs(live), pool);
  return { read, opened, media, lanes: live, feedMs: open.feedMs() };
}
