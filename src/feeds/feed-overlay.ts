// A wrapper around an opened feed (the roster, the open houses) that changes a few of its parts.
// The parts of a reader's feed are getters whose values change as its items are read (mode, mark,
// since, present…), so a wrapper cannot copy them with a spread: the copy would keep what they were
// when the wrapper was made. Every part the wrapper does not give itself is read from the inner feed
// each time it is asked.
import type { FeedItem, KeyLookup, OpenedFeed, SourceReadStats, SourceSection } from './types.js';

/** `inner`, with `own`'s parts (getters kept as getters) in place of its own. */
export function overlayFeed(inner: OpenedFeed, own: Partial<OpenedFeed>): OpenedFeed {
  const delegated: PropertyDescriptorMap = {};
  for (const key of Object.keys(inner) as (keyof OpenedFeed)[]) {
    if (!(key in own)) delegated[key] = { get: () => inner[key], enumerable: true, configurable: true };
  }
  return Object.defineProperties({ ...inner }, { ...delegated, ...Object.getOwnPropertyDescriptors(own) });
}

/**
 * The inner feed's lookup with a layer's join applied to every record it finds: a record fetched by
 * key (an open-house or roster re-fetch, a reconcile's or an event's fetch, the sync's confirmation)
 * is the record a read would have yielded, so its mapping sees the same roster and related data.
 * Undefined when the inner feed has no lookup.
 */
export function joinedLookup(
  lookup: KeyLookup | undefined,
  join: (item: FeedItem) => Promise<FeedItem> | FeedItem,
): KeyLookup | undefined {
  if (!lookup) return undefined;
  return {
    get paging() {
      return lookup.paging;
    },
    // (the record's own id field: the sync asks a removal's other records by the key's other fields)
    ...(lookup.idField !== undefined && { idField: lookup.idField }),
    async *find(asks) {
      for await (const batch of lookup.find(asks)) yield await Promise.all(batch.map(join));
    },
  };
}

/** The inner feed's read stats (read when asked) with a wrapper's report sections after its own: a related resource's (related-resources.ts). */
export function statsWithSections(inner: OpenedFeed, own: () => readonly SourceSection[]): SourceReadStats | undefined {
  const stats = inner.stats;
  if (!stats) return undefined;
  return {
    get pages() {
      return stats.pages;
    },
    get requests() {
      return stats.requests;
    },
    get tally() {
      return stats.tally;
    },
    get bytes() {
      return stats.bytes;
    },
    get warnings() {
      return stats.warnings;
    },
    get sections() {
      return [...(stats.sections ?? []), ...own()];
    },
  };
}
