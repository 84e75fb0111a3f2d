// One column of a feed record read from the record's text, its data not built, where the reader
// kept the record as text (a CSV record: csv/csv-record.ts). The mapping reads a listing key this
// way when its key rule only copies a column (mapping/item-key.ts): a rerun whose records are in
// step by their stamps then never builds their data. Only the readers know their record classes.
import { CsvRecord } from './csv/csv-record.js';
import type { FeedItem } from './types.js';

/** `data[name]` of a record kept as text, read from the text; undefined for any other item, or a header without the column. */
export function columnText(item: FeedItem, name: string): string | undefined {
  return item instanceof CsvRecord ? item.column(name) : undefined;
}
