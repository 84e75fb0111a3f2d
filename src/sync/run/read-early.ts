// Reads begun before the feed's chatbots are all paged (feed-run.ts): the records an ask names
// (SourceAsk.names) fetched first, so its chatbots are asked about their keys alone (readNamed), and a
// file whose records are mostly in step by their stamps read beside its one chatbot's paging (readEarly).
import type { OpenedFeed } from '../../feeds/types.js';
import { mirrorOf } from '../../media/index.js';
import type { PagingHandle } from '../remote/page-chatbot.js';
import { stamped } from '../plan/record-stamp.js';
import type { KeyedFeed } from '../read/keyed-feed.js';
import type { Lane } from '../read/lanes.js';
import { readAhead } from '../read/read-ahead.js';
import type { FeedContext, LiveLane } from './context.js';
import { sourceStateOf } from '../settle/state.js';
import { listingKeys, openKeyed, openOptions, openRead, type ReadOpen } from './feed-open.js';
import { attachStored, setUpLane } from './lane-setup.js';

/**
 * A read of the records an ask names (SourceAsk.names: a RESO run of pushed events, reso-push.ts):
 * fetched from the source before the chatbot is asked anything, and the listing keys they name handed
 * to its paging (`keys`), which then asks the chatbot about those keys alone (remote.ts
 * fetchRemoteKeys). The records are few (push.maxKeysPerJob); they are read again, as read, by the
 * run's read step. A read that failed part way hands on the keys read so far, and fails the read step
 * where it failed.
 */
export async function readNamed(
  lanes: readonly Lane[],
  ctx: FeedContext,
  keys: { resolve(keys: ReadonlySet<string>): void },
): Promise<KeyedFeed> {
  const { feed, deps, opts } = ctx;
  const opened = openKeyed(ctx, {
    ...openOptions(ctx, []),
    state: sourceStateOf(
      deps.store,
      lanes.map((l) => l.id),
    ),
    ...(opts.ask && { ask: opts.ask }),
    // its requests within push.sourceShare of the credential's budget: pulls keep the rest
    ...(feed.push && { sourceShare: { feed: feed.name, share: feed.push.sourceShare } }),
    // (only the key fields are read of it: which source field names the listing)
    keys: listingKeys(feed, ctx.compiled, () => false),
  });
  const read = await readAhead(opened);
  keys.resolve(read.keys);
  return read.opened;
}

/**
 * Whether the feed is read while its chatbot is paged (read-feed.ts whilePaging): a feed of one lane,
 * its records stamped, from a file (a live RESO pull asks the sync what the chatbot holds as it
 * reads), without the media mirror, related records or a thread of its own (those read as before,
 * once paging is done).
 */
export function readsWhilePaging(lanes: readonly Lane[], ctx: FeedContext): boolean {
  const { feed, deps, opts } = ctx;
  return (
    opts.besidePaging !== false &&
    lanes.length === 1 &&
    stamped(lanes[0]!, ctx.compiled) &&
    feed.source.kind !== 'reso' &&
    !mirrorOf(deps.media, feed) &&
    // (a read the caller asks of the source goes as the source answers it, once paging is done)
    !opts.ask
  );
}

/** The early read of a feed's one lane: its read, begun beside the paging, and the lane once paged. */
export interface EarlyRead {
  opened: OpenedFeed;
  read: ReadOpen;
  live(paged: LiveLane['paged']): LiveLane;
}

/**
 * The lane set up on its chatbot's state and the index paging fills, the feed opened and read while
 * the chatbot is paged. Returns once paging is done (or failed: then the lane is reported failed by
 * the caller, and what was read is let go).
 */
export async function readEarly(l: Lane, ctx: FeedContext, paging: PagingHandle): Promise<EarlyRead | undefined> {
  const [parts, index] = await Promise.all([paging.state, paging.index]);
  if (!index) return undefined;
  const lane = setUpLane(l, { ...parts, index }, ctx, { media: undefined, pullMode: () => opened.mode });
  const own = lane.own;
  const opened = openKeyed(ctx, openOptions(ctx, [own.mark]));
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
