// The listing key of a feed record, as the feed's mapping reads it (CompiledMapping.keyOf), at the
// least cost: the feed thread's record brings the key it read; a CSV record whose key column the
// mapping only copies gives that column from its text, its data not built (test/mapping/key-column.test.ts:
// keyOfText is keyOf for such a rule; test/feeds/csv-fast-path.test.ts: recordKey of lazy records is keyOf of eager ones).
import { CsvRecord } from '../../feeds/csv/csv-record.js';
import type { FeedItem } from '../../feeds/types.js';
import { keyOfText, type CompiledMapping } from '../../mapping/compile.js';
import { ThreadRecord } from './feed-thread.js';

export function recordKey(
  item: FeedItem & { kind: 'record' },
  compiled: Pick<CompiledMapping, 'keyOf' | 'keyColumn'>,
  keyBy: 'MLSNumber' | 'URL',
): string | undefined {
  if (item instanceof ThreadRecord) return item.key;
  if (item instanceof CsvRecord) {
    const column = compiled.keyColumn[keyBy];
    const text = column === undefined ? undefined : item.column(column);
    if (text !== undefined) return keyOfText(text);
  }
  return compiled.keyOf(item.data, keyBy);
}
