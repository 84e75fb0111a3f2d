// What the feed's display rules did, counted over the mapped items: the records each rule hid, the
// addresses withheld, the records held back. One count for the sync's feed side (sync/read/desired.ts)
// and for feed preview (cli/feed-preview.ts), so the two say the same of one feed.
import type { HideRule } from './display-config.js';
import type { MappedItem } from './types.js';

export interface DisplayTally {
  hidden: Partial<Record<HideRule, number>>;
  addressWithheld: number;
  held: number;
}

/** The item counted into `tally`, where a display rule shaped it. */
export function countDisplay(tally: DisplayTally, item: MappedItem): void {
  if (item.kind === 'listing' && item.shown?.addressWithheld) tally.addressWithheld++;
  else if (item.kind === 'rejected' && item.held) tally.held++;
  // (a display rule's removal carries the rule's name)
  else if (item.kind === 'skipped' && item.rule) tally.hidden[item.rule] = (tally.hidden[item.rule] ?? 0) + 1;
}
