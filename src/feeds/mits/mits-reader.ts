// MITS 4.x ILS feed (PhysicalProperty → Property → Floorplan*, ILS_Unit*, File*) → one record per
// ILS_Unit (or per Floorplan), each carrying its property's and floorplan's fields (join.ts).
//
// Streamed as the XML feeds are (xml/xml-scanner.ts, the declared encoding honoured): each <Property>
// is built whole, joined, and dropped before the next, so memory holds one property — bounded by
// `maxPropertyChars` (default 16M characters; a larger property fails the read, naming its line) —
// and time is linear in the document.
//
// A property the scanner finds malformed (a stray `<`, a wrong close tag) may have lost units: each
// unit that could still be read is handed on as an error carrying its data (so its listing is kept,
// not taken for gone), and none is `standalone`, so that run deletes nothing.
import { RecordParseError } from '../../errors.js';
import { itemsOf, type BatchedItems } from '../item-batches.js';
import type { FeedItem } from '../types.js';
import { decodeDeclared } from '../xml/xml-reader.js';
import { createXmlScanner, type ScannedRecord } from '../xml/xml-scanner.js';
import { recordPathCheck } from '../xml/record-path-check.js';
import { joinProperty, type RecordPer } from './join.js';

export interface MitsOptions {
  label: string;
  /** dotted path of the property element (default PhysicalProperty.Property) */
  recordPath?: string;
  recordPer: RecordPer;
  /** overrides the encoding the document declares */
  encoding?: string;
  /** most characters of one <Property>, its units and floorplans included */
  maxPropertyChars?: number;
}

export const DEFAULT_MAX_PROPERTY_CHARS = 16 * 1024 * 1024;

export function readMits(bytes: AsyncIterable<Buffer>, opts: MitsOptions): BatchedItems<FeedItem> {
  return itemsOf(readMitsBatches(bytes, opts));
}

async function* readMitsBatches(bytes: AsyncIterable<Buffer>, opts: MitsOptions): AsyncIterable<FeedItem[]> {
  const file = opts.label;
  const recordPath = opts.recordPath ?? 'PhysicalProperty.Property';
  const scanner = createXmlScanner({
    recordPath,
    label: file,
    maxRecordChars: opts.maxPropertyChars ?? DEFAULT_MAX_PROPERTY_CHARS,
  });
  let index = 0;
  const toItems = (property: ScannedRecord): FeedItem[] => {
    const records = joinProperty(property.data, opts.recordPer);
    const at = (ids?: Record<string, string>, join?: string) => ({
      file,
      line: property.line,
      index: index++,
      ...(ids && { ids }),
      ...(join && { join }),
    });
    if (property.error === undefined)
      return records.map((r): FeedItem => ({ kind: 'record', position: at(r.ids, r.join), data: r.data }));
    const message = `malformed <Property> record: ${property.error}`;
    if (!records.length) {
      const position = at();
      return [
        {
          kind: 'error',
          position,
          error: new RecordParseError(message, { file, line: property.line, record: position.index }),
        },
      ];
    }
    // no record is standalone: the property's other units may be lost with what broke it
    return records.map((r): FeedItem => {
      const position = at(r.ids, r.join);
      return {
        kind: 'error',
        position,
        error: new RecordParseError(message, { file, line: property.line, record: position.index }),
        data: r.data,
      };
    });
  };
  // a document the path matches nothing in and that never opens its first element is not the feed (record-path-check.ts)
  const check = recordPathCheck(recordPath, file);
  for await (const text of decodeDeclared(bytes, file, opts.encoding)) {
    check.text(text);
    const items = scanner.push(text).flatMap(toItems);
    if (items.length) yield items;
  }
  let ended: ScannedRecord[] = [];
  try {
    ended = scanner.end();
  } catch (err) {
    check.end(index, err);
  }
  const last = ended.flatMap(toItems);
  check.end(index);
  if (last.length) yield last;
}
