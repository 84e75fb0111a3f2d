// What a preview warns about before a sync: keys that come more than once, how many records each
// rejection reason hit, and the lookup values no `map` covers (e.g. StandardStatus "Contingent"), so a
// mapping can be fixed first. Plain data in (mapped items, unmapped values), plain data out; bounded
// lists (the first N by count), exact counts.
import type { MappedItem } from './types.js';
import { createUnmappedTally } from './unmapped.js';

const LISTED = 50;

export interface FeedFindings {
  /** keys of more than one record (the later record wins in a sync) */
  keysSeenTwice: { count: number; keys: Array<{ key: string; times: number; places: string[] }> };
  /** rejected records by reason ("Status must be one of …"), most frequent first */
  rejectionReasons: Array<{ reason: string; records: number }>;
  /** source values that passed a `map` unmapped, most frequent first (the sync report's tally) */
  unmapped: Array<{ field: string; value: string; count: number }>;
}

export function createFindings() {
  const firstPlace = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const reasons = new Map<string, number>();
  const unmapped = createUnmappedTally();

  return {
    /** hand to compileMapping({ onUnmapped }) */
    onUnmapped: unmapped.add,
    add(item: MappedItem, place: string) {
      if (item.kind === 'rejected') {
        // worded as formatIssue words it on the record, without the value ("Bedrooms is missing")
        const reasonOf = (i: (typeof item.issues)[number]) =>
          i.rule === 'is required' ? `${i.field} is missing` : `${i.field} ${i.rule}`;
        for (const reason of new Set(item.issues.map(reasonOf))) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
      const key = 'key' in item ? item.key : undefined;
      if (key === undefined) return;
      const first = firstPlace.get(key);
      if (first === undefined) return void firstPlace.set(key, place);
      const places = repeated.get(key) ?? [first];
      places.push(place);
      repeated.set(key, places);
    },
    result(): FeedFindings {
      const keys = [...repeated].map(([key, places]) => ({ key, times: places.length, places: places.slice(0, 5) }));
      return {
        keysSeenTwice: { count: keys.length, keys: keys.sort((a, b) => b.times - a.times).slice(0, LISTED) },
        rejectionReasons: [...reasons]
          .map(([reason, records]) => ({ reason, records }))
          .sort((a, b) => b.records - a.records)
          .slice(0, LISTED),
        unmapped: unmapped.list(),
      };
    },
  };
}
