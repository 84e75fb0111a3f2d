// A feed read whole before the run's read step reads it (the records an ask names, few:
// run/read-early.ts readNamed), so that the listing keys its items carry are known first. The
// records are kept as read and handed on in order; a read that failed part way hands on what it
// read, then fails where it failed.
import type { KeyedItem } from '../../mapping/types.js';
import type { KeyedFeed } from './keyed-feed.js';

export async function readAhead(opened: KeyedFeed): Promise<{ opened: KeyedFeed; keys: Set<string> }> {
  const items: KeyedItem[] = [];
  const keys = new Set<string>();
  let failure: { error: unknown } | undefined;
  try {
    for await (const item of opened.items) {
      items.push(item);
      if (item.key !== undefined && item.key !== '') keys.add(item.key);
    }
  } catch (error) {
    failure = { error };
  }
  async function* again(): AsyncIterable<KeyedItem> {
    yield* items;
    if (failure) throw failure.error;
  }
  // (the opened feed as it was, but for its items: its mode, mark and stats are its own, read through)
  const read: KeyedFeed = Object.create(opened, { items: { value: again(), enumerable: true } }) as KeyedFeed;
  return { opened: read, keys };
}
