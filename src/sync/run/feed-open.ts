// What a feed's read is opened with (feed-run.ts): its options and oldest mark, what the sync says of
// listing keys to a source that asks, the media mirror's step; and the read itself, routed to the
// lanes (read-feed.ts).
import type { FeedConfig } from '../../config/schema.js';
import { oldestMark } from '../../feeds/marks.js';
import { openFeed } from '../../feeds/index.js';
import type { FeedContext as FeedOpenContext, ListingKeys } from '../../feeds/types.js';
import type { CompiledMapping } from '../../mapping/compile.js';
import { columnsNeeded } from '../../mapping/columns-needed.js';
import { keySources } from '../../mapping/key-sources.js';
import { loadMediaState, mirrorOf, type MediaStep } from '../../media/index.js';
import type { FeedRead } from '../read/read-feed.js';
import { readFeed } from '../read/read-feed.js';
import { keyedFeed, type FeedKey, type KeyedFeed } from '../read/keyed-feed.js';
import type { FeedContext, LiveLane } from './context.js';

/** A feed's read (read-feed.ts) and when it ended, in ms into the run. */
export interface ReadOpen {
  read: FeedRead;
  feedMs(): number;
}

/** The feed's read, routed to its lanes (each lane's planner, executor and chatbot index, which may still be paged). */
export function openRead(
  ctx: FeedContext,
  opened: KeyedFeed,
  live: ReadonlyArray<Omit<LiveLane, 'paged'>>,
  media: MediaStep | undefined,
): ReadOpen {
  const { feed, run } = ctx;
  let feedMs = 0;
  const read = readFeed({
    feedName: feed.name,
    opened,
    lanes: live,
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

/** The media mirror step of the feed (src/media/), when media.mirror is set and the feed does not opt out. */
export async function mediaStepOf(ctx: FeedContext): Promise<MediaStep | undefined> {
  const { feed, deps } = ctx;
  const mirror = mirrorOf(deps.media, feed);
  if (!mirror) return undefined;
  const state = await loadMediaState(deps.store, mirror.namespaces);
  // (a dry run's plans its photos: the run's write side, write-side.ts)
  return ctx.run.writes.mediaStep({
    feed: feed.name,
    source: feed.source,
    ...mirror,
    state,
    signal: ctx.clock.signal,
    logger: ctx.logger,
    budgets: deps.budgets,
  });
}

/** What the sync says of listing keys to a source that asks (feeds/types.ts ListingKeys): the key's source fields, a record's listing key, whether a lane holds a key. */
export function listingKeys(feed: FeedConfig, compiled: CompiledMapping, holds: (key: string) => boolean): ListingKeys {
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
export function openOptions(ctx: FeedContext, marks: ReadonlyArray<string | undefined>) {
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

/** How the feed's items get their listing keys: the feed's compiled mapping, by its keyBy. */
function feedKey(ctx: FeedContext): FeedKey {
  return { rule: ctx.compiled, keyBy: ctx.feed.keyBy };
}

/** The feed opened, its items keyed as they come (read-feed.ts and all after it use the key each item carries). */
export function openKeyed(ctx: FeedContext, options: FeedOpenContext): KeyedFeed {
  return keyedFeed(openFeed(ctx.feed.name, ctx.feed.source, options), feedKey(ctx));
}
