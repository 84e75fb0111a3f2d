// A feed item's listing key, as the feed's mapping reads it (CompiledMapping.keyOf), at the least
// cost: a record kept as text whose key column the mapping only copies gives that column from its
// text (feeds/column-text.ts), its data not built (test/mapping/key-column.test.ts: keyOfText is
// keyOf for such a rule; test/feeds/csv-fast-path.test.ts: itemKey of lazy records is keyOf of eager
// ones). Read once per item where the sync takes it in (sync/read/keyed-feed.ts; the feed thread's
// worker) and carried by the item from there (KeyedItem).
import { columnText } from '../feeds/column-text.js';
import type { FeedItem } from '../feeds/types.js';
import { keyOfText, type CompiledMapping } from './compile.js';
import type { KeyedItem } from './types.js';

export type KeyRule = Pick<CompiledMapping, 'keyOf' | 'keyColumn'>;

/** The item's listing key: a record's, a removal's (the source's resolved key first: reso/reso-key-map.ts), or what a broken record's readable fields name (none without them). */
export function itemKey(item: FeedItem, compiled: KeyRule, keyBy: 'MLSNumber' | 'URL'): string | undefined {
  // (a removal whose key the source resolved from its own state: its data, of a record no longer returned, cannot say it)
  if (item.kind === 'removed' && item.key !== undefined) return item.key;
  if (item.kind === 'record') {
    const column = compiled.keyColumn[keyBy];
    const text = column === undefined ? undefined : columnText(item, column);
    if (text !== undefined) return keyOfText(text);
  }
  return item.data === undefined ? undefined : compiled.keyOf(item.data, keyBy);
}

/**
 * The item, carrying `key` from here on. The item itself, not a copy: a record kept as text keeps
 * its data unbuilt (a spread would read it, and lose a class's getters); the reader handed it on
 * and holds it no more.
 */
export function keyed<T extends FeedItem>(item: T, key: string | undefined): T & Pick<KeyedItem, 'key'> {
  return Object.assign(item, { key });
}

/** Whether the item carries its key (keyed: the sync read it where it took the item in). */
export function isKeyed(item: FeedItem): item is KeyedItem {
  return 'key' in item;
}
