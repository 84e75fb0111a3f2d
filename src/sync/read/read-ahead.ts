// A feed read whole before the run's read step reads it (a run of pushed events, few records:
// run/read-early.ts readPushed), so that what its records name is known first. The records are kept
// as read and handed on in order; a read that failed part way hands on what it read, then fails
// where it failed. `keyOf` names each item's listing key (none: an item that names none).
import type { FeedItem, OpenedFeed } from '../../feeds/types.js';

export async function readAhead(
  opened: OpenedFeed,
  keyOf: (item: FeedItem) => string | undefined,
): Promise<{ opened: OpenedFeed; keys: Set<string> }> {
  const items: FeedItem[] = [];
  const keys = new Set<string>();
  let failure: { error: unknown } | undefined;
  try {
    for await (const item of opened.items) {
      items.push(item);
      const key = keyOf(item);
      if (key !== undefined && key !== '') keys.add(key);
    }
  } catch (error) {
    failure = { error };
  }
  async function* again(): AsyncIterable<FeedItem> {
    yield* items;
    if (failure) throw failure.error;
  }
  // (the opened feed as it was, but for its items: its mode, mark and stats are its own, read through)
  const read: OpenedFeed = Object.create(opened, { items: { value: again(), enumerable: true } }) as OpenedFeed;
  return { opened: read, keys };
}
