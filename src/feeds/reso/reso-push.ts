// A run of pushed EntityEvents (RESO RCP-028, webhook push; src/server/push-route.ts receives them and
// src/queue/push-events.ts coalesces them per feed): no pull, no EntityEvent poll. The keys the events
// named are fetched from the source by key (reso-fetch-keys.ts, the EntityEvent poll's code: batched,
// typed by $metadata, within the budget and the feed's own filter), so a forged or stale event can
// only make feedsync ask the source: what it writes is what the source holds. A key the source no
// longer returns is gone, deleted under the guards (counted toward deletes.maxCount/maxFraction),
// only when the lane wrote that listing and once deletes.graceHours have passed since its
// first-missing mark (sync/run/lane-guard-step.ts askedAloneScope). The run reads these records before it
// asks the chatbot anything, and then asks it about their keys alone (sync/run/read-early.ts
// readNamed). Its requests take a budget of their own besides the credential's, ctx.sourceShare
// (push.sourceShare of source.limits), so pushes never starve the pulls. A
// Media event names a Media record: its listing is asked of the Media resource (reso-media-events.ts).
// The mode is 'incremental' (keys not named are not absent) and the mark is none: the lanes keep
// their marks as they were. A pushed event's EntityEventSequence is not the log's: a producer pushes
// what it chooses, so a pushed sequence proves nothing about the events before it, and advancing the
// EntityEvent mark from it could skip events never pushed. The next poll reads them (again, harmless:
// a record in step writes nothing).
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import type { FeedContext, FeedItem, OpenedFeed, SourceReadStats } from '../types.js';
import type { PushedKeys } from './reso-asks.js';
import { fetchKeys, type EventStats } from './reso-fetch-keys.js';
import { eventsSection } from './reso-sections.js';
import { addMediaParents } from './reso-media-events.js';
import { openReso, type ResoOpenOptions } from './reso-reader.js';
import { resourceUrl } from './reso-query.js';

export function openResoPushed(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  pushed: PushedKeys,
  options: ResoOpenOptions = {},
): OpenedFeed {
  // (its items are never read: its lookup, on its client, fetches records by key)
  const base = openReso(feedName, source, ctx, options);
  const client = base.client!;
  const label = displayUrl(resourceUrl(source.url!, source.resource));
  const warnings: string[] = [];
  const events: EventStats = { read: pushed.events, keys: 0, fetched: 0, gone: 0, pushed: true };
  const stats: SourceReadStats = {
    // (no page is read: the records are fetched by key, requests of their own)
    pages: 0,
    get requests() {
      return client.tally.total;
    },
    tally: client.tally,
    get bytes() {
      return client.tally.bytes;
    },
    get warnings() {
      return [...base.stats.warnings, ...warnings];
    },
    get sections() {
      return [eventsSection(events)];
    },
  };

  async function* items(): AsyncIterable<FeedItem> {
    const keys = new Set(pushed.keys);
    await addMediaParents(keys, pushed.media, { client, source, label, events });
    events.keys = keys.size;
    ctx.logger.info(
      { feed: feedName, events: pushed.events, keys: keys.size },
      `pushed events: ${keys.size} key(s) fetched from the source by key`,
    );
    yield* fetchKeys(keys, {
      feedName,
      source,
      ctx,
      lookup: base.lookup!,
      label,
      stats: events,
      warnings,
      goneBy: 'pushed and no longer returned by the source',
      ...(options.keys && { keys: options.keys }),
    });
  }

  return {
    items: items(),
    mode: 'incremental',
    mark: undefined,
    ...(base.lookup && { lookup: base.lookup }),
    stats,
  };
}
