// The feed side of a lane as its read gathers it (read/desired.ts makes the collector): counts,
// rejected records, the keys seen. Kernel types: the planner fills it, the settle steps judge it,
// the report prints it.
import type { MappedItem } from '../../mapping/types.js';
import type { DesiredListing, DesiredSide, RejectedRecord, RememberedListing } from './plan-types.js';

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
  /** counts a record whose stamp matched, or a listing a seal shows in step (a valid listing, not mapped) */
  addRemembered(entry: Pick<RememberedListing, 'key' | 'position'>): void;
  /** a record of `key` went to another chatbot (routing): a copy this chatbot holds goes */
  movedAway(key: string): void;
  /** the feed stopped: a FeedReadError or an abort marks it incomplete, anything else is thrown */
  fail(err: unknown): void;
}

export interface CollectorOptions {
  /**
   * Whether a record listed twice in one pull means the source shifted (default: always). Only a
   * key-ordered full pull says so; in an incremental (time, key) pull a repeat is the record's later
   * version, changed while the pull ran (the later record wins, as for any repeated key).
   */
  repeatIsShift?: () => boolean;
  /** each rejected record, as it is read (the change log's sink) */
  onRejected?: (r: RejectedRecord) => void;
  /** keys whose sold window is stored (state.ts soldWindowNamespace): a record of one that no longer has a window clears it */
  soldUntil?: { has(key: string): boolean };
}

/** Makes a lane's feed side (read/desired.ts createFeedCollector, as the run hands it to the planner). */
export type NewCollector = (mode: DesiredSide['mode'], options: CollectorOptions) => FeedCollector;
