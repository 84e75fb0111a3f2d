// The feed side of a sync: the mapped items of a feed gathered by key. A key met twice is reported
// and the later record wins (whatever its kind). A feed that cannot be read whole (FeedReadError)
// keeps what was read and is marked incomplete, which blocks deletes.
import { FeedReadError, formatIssue, formatPlace } from '../errors.js';
import type { MappedItem } from '../mapping/types.js';
import type { DesiredSide } from './plan-types.js';

export async function collectDesired(
  items: AsyncIterable<MappedItem>,
  mode: DesiredSide['mode'],
  onRecord?: (records: number) => void,
): Promise<DesiredSide & { readErrorRetryable?: boolean }> {
  const side: DesiredSide & { readErrorRetryable?: boolean } = {
    listings: new Map(),
    protectedKeys: new Set(),
    goneKeys: new Map(),
    rejected: [],
    feedDuplicates: [],
    mode,
    complete: true,
    counts: { records: 0, valid: 0, rejected: 0, skipped: 0, removed: 0 },
  };
  const forget = (key: string) => side.listings.delete(key) || side.protectedKeys.delete(key) || side.goneKeys.delete(key);
  try {
    for await (const item of items) {
      side.counts.records++;
      onRecord?.(side.counts.records);
      const key = item.kind === 'error' ? undefined : item.key;
      if (key !== undefined && forget(key)) side.feedDuplicates.push({ key, position: item.position });
      switch (item.kind) {
        case 'listing':
          side.counts.valid++;
          side.listings.set(item.key, { key: item.key, listing: item.listing, position: item.position });
          break;
        case 'rejected':
          side.counts.rejected++;
          side.rejected.push({ position: item.position, ...(key !== undefined && { key }), reasons: item.issues.map(formatIssue) });
          if (key !== undefined) side.protectedKeys.add(key);
          break;
        case 'error':
          side.counts.rejected++;
          side.rejected.push({ position: item.position, reasons: [withoutPlace(item.error.message, formatPlace(item.error.place))] });
          break;
        case 'skipped':
          side.counts.skipped++;
          if (key !== undefined) side.goneKeys.set(key, 'skipped');
          break;
        case 'removed':
          side.counts.removed++;
          if (key !== undefined) side.goneKeys.set(key, 'removed');
          break;
      }
    }
  } catch (err) {
    if (!(err instanceof FeedReadError)) throw err;
    side.complete = false;
    side.readError = err.message;
    side.readErrorRetryable = err.retryable;
  }
  // `valid` counts listings kept, after later records replaced earlier ones.
  side.counts.valid = side.listings.size;
  return side;
}

/** The report prints the record's place beside its reasons: drop the copy the message starts with. */
function withoutPlace(message: string, place: string): string {
  return message.startsWith(`${place}: `) ? message.slice(place.length + 2) : message;
}
