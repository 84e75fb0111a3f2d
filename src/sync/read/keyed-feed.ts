// The feed as the sync reads it: each item carrying its listing key (KeyedItem), read once as the
// item comes in (mapping/item-key.ts, at the least cost), so that routing, the stamp check, the read
// beside the paging and the pushed run's keys all use the key the item carries. The feed thread's
// items come keyed already (its worker read them: feed-thread.ts).
import { itemsOf } from '../../feeds/item-batches.js';
import { inBatches } from '../../feeds/item-batches.js';
import type { FeedItem, OpenedFeed } from '../../feeds/types.js';
import { itemKey, keyed, type KeyRule } from '../../mapping/item-key.js';
import type { KeyedItem } from '../../mapping/types.js';

/** An opened feed whose items carry their keys. */
export interface KeyedFeed extends OpenedFeed {
  items: AsyncIterable<KeyedItem> & { readonly batches?: AsyncIterable<KeyedItem[]> };
}

/** How the sync reads an item's key: the feed's key rule and keyBy. */
export interface FeedKey {
  rule: KeyRule;
  keyBy: 'MLSNumber' | 'URL';
}

/** Each item of `items` keyed. */
export function keyItems(items: readonly FeedItem[], key: FeedKey): KeyedItem[] {
  return items.map((item) => keyed(item, itemKey(item, key.rule, key.keyBy)));
}

/** The opened feed, its items keyed as they come (a batch at a time where the reader has them). */
export function keyedFeed(opened: OpenedFeed, key: FeedKey): KeyedFeed {
  const batches = inBatches(opened.items);
  async function* keyedBatches(): AsyncGenerator<KeyedItem[]> {
    for await (const batch of batches) yield keyItems(batch, key);
  }
  // (the opened feed as it was, but for its items: its mode, mark and stats are its own, read through)
  return Object.create(opened, { items: { value: itemsOf(keyedBatches()), enumerable: true } }) as KeyedFeed;
}

/**
 * A read of no record, whole: the feed as a run reads it when the lane's seal holds (run/feed-seal.ts),
 * each of its listings counted by the seal instead. A full read, with no mark (a file's reader keeps none).
 */
export function noRecords(): KeyedFeed {
  async function* none(): AsyncGenerator<KeyedItem[]> {}
  return { items: itemsOf(none()), mode: 'full', mark: undefined };
}
