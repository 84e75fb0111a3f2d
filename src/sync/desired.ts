// The feed side of a sync, gathered one mapped item at a time: counts, rejected records, the keys
// seen (to know what the feed no longer has), without holding the listings themselves, which go
// on to be planned and written as they are read. A key met twice is reported, and the later
// record wins from then on (the earlier one may have been written already). A feed that cannot be
// read whole (FeedReadError), or is aborted, keeps what was read and is marked incomplete, which
// blocks deletes.
import { AbortedError, FeedReadError, formatIssue, formatPlace } from '../errors.js';
import type { MappedItem } from '../mapping/types.js';
import type { DesiredListing, DesiredSide } from './plan-types.js';

export type FeedSide = Omit<DesiredSide, 'listings'> & { listings: Set<string>; readErrorRetryable?: boolean; readErrorRetryAt?: string };

export interface FeedCollector {
  side: FeedSide;
  /** counts the item; a valid listing comes back to be planned */
  add(item: MappedItem): DesiredListing | undefined;
  /** the feed stopped: a FeedReadError or an abort marks it incomplete, anything else is thrown */
  fail(err: unknown): void;
}

export function createFeedCollector(mode: DesiredSide['mode']): FeedCollector {
  const side: FeedSide = {
    listings: new Set(),
    protectedKeys: new Set(),
    goneKeys: new Map(),
    rejected: [],
    feedDuplicates: [],
    mode,
    complete: true,
    counts: { records: 0, valid: 0, rejected: 0, skipped: 0, removed: 0 },
  };
  const forget = (key: string) => side.listings.delete(key) || side.protectedKeys.delete(key) || side.goneKeys.delete(key);

  return {
    side,
    add(item) {
      side.counts.records++;
      const key = item.kind === 'error' ? undefined : item.key;
      if (key !== undefined && forget(key)) side.feedDuplicates.push({ key, position: item.position });
      switch (item.kind) {
        case 'listing':
          side.listings.add(item.key);
          side.counts.valid = side.listings.size;
          return { key: item.key, listing: item.listing, position: item.position };
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
      side.counts.valid = side.listings.size;
      return undefined;
    },
    fail(err) {
      if (!(err instanceof FeedReadError) && !(err instanceof AbortedError)) throw err;
      side.complete = false;
      side.readError = err.message;
      side.readErrorRetryable = err instanceof FeedReadError && err.retryable;
      if (err instanceof FeedReadError && err.retryAt) side.readErrorRetryAt = err.retryAt.toISOString();
    },
  };
}

/** The report prints the record's place beside its reasons: drop the copy the message starts with. */
function withoutPlace(message: string, place: string): string {
  return message.startsWith(`${place}: `) ? message.slice(place.length + 2) : message;
}
