// What the settle steps decide, written into the lane's feed side by the run (the steps change
// nothing they are given: sync/settle/ returns, sync/run/ applies). The feed side is the read's
// (read/desired.ts fills it); past the read only the run writes it.
import type { FeedSide } from '../model/feed-side.js';
import { ruleReason } from '../model/plan-types.js';
import type { SoldWindowsDue } from '../settle/sold-window.js';

/** Sold windows that ended (settle/sold-window.ts): a held key is removed by the rule `sold-window` (counted as it hid it), a window of a key no longer held forgotten. */
export function applySoldWindows(side: FeedSide, due: SoldWindowsDue): void {
  for (const key of due.removed) {
    side.goneKeys.set(key, ruleReason('sold-window'));
    side.display.hidden['sold-window'] = (side.display.hidden['sold-window'] ?? 0) + 1;
  }
  for (const key of due.forgotten) side.soldUntil.clear.add(key);
}

/** The read is not whole, for this reason (absences that could not be confirmed, or records the paging missed). */
export function notWhole(side: FeedSide, reason: string | undefined): void {
  if (reason === undefined) return;
  side.complete = false;
  side.readError = reason;
}
