// The feed side of a lane as its read gathers it (read/desired.ts makes the collector): counts,
// rejected records, the keys seen. Kernel types: the planner fills it, the settle steps judge it,
// the report prints it.
import type { MappedItem } from '../../mapping/types.js';
import type { DesiredListing, DesiredSide, RememberedListing } from './plan-types.js';

export type FeedSide = Omit<DesiredSide, 'listings'> & {
  listings: Set<string>;
  readErrorRetryable?: boolean;
  readError?: string;
  readErrorRetryAt?: string;
  /** the source's answer is not the feed (FeedReadError.refused): why, and the run is rejected */
  refused?: string;
  /** sold windows (display.soldDays) to store: key → when it ends, for the Closed listings shown; keys that no longer have one */
  soldUntil: { set: Map<string, string>; clear: Set<string> };
};

export interface FeedCollector {
  side: FeedSide;
  /** counts the item; a valid listing comes back to be planned */
  add(item: MappedItem): DesiredListing | undefined;
  /** counts a record whose stamp matched (a valid listing, not mapped) */
  addRemembered(entry: RememberedListing): void;
  /** a record of `key` went to another chatbot (routing): a copy this chatbot holds goes */
  movedAway(key: string): void;
  /** the feed stopped: a FeedReadError or an abort marks it incomplete, anything else is thrown */
  fail(err: unknown): void;
}
