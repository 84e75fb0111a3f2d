// The sold window on every run (docs/display-rules.md, display.soldDays): a Closed listing shown
// is shown until CloseDate + soldDays, and removed by the first run after that, whether or not its
// record comes again. The end of each shown listing's window is stored (state.ts
// soldWindowNamespace). A record read this run was judged against the run's clock when it was
// mapped (a record whose window ended is mapped whatever its stamp: lane-plan.ts); this step takes
// the rest, the keys the source did not send again (an incremental pull sends only what changed),
// whose stored window has ended: a removal by the rule `sold-window`, if the chatbot holds them.
// It decides; the run marks the feed side so (sync/run/, applySoldWindows). A changed display.soldDays
// has re-judged the stored windows before they come here (rule-change.ts rejudgeWindows, at the lane's setup).
import type { FeedSide } from '../model/feed-side.js';

export interface SoldWindowsDue {
  /** keys whose stored window ended and that the chatbot holds: to remove by the rule `sold-window` */
  removed: string[];
  /** keys whose stored window ended and that the chatbot no longer holds: their window is forgotten */
  forgotten: string[];
}

/** The keys whose window ended, and that this run did not read: removed by the rule when the chatbot holds them, else forgotten. */
export function soldWindowsDue(
  stored: ReadonlyMap<string, string>,
  now: Date,
  side: Pick<FeedSide, 'listings' | 'protectedKeys' | 'goneKeys' | 'soldUntil'>,
  remote: { has(key: string): boolean },
): SoldWindowsDue {
  const out: SoldWindowsDue = { removed: [], forgotten: [] };
  for (const [key, until] of stored) {
    if (Date.parse(until) > now.getTime()) continue;
    // read this run: its own record decided (mapped against the run's clock)
    if (side.listings.has(key) || side.protectedKeys.has(key) || side.goneKeys.has(key) || side.soldUntil.set.has(key))
      continue;
    // (a removed key's window is cleared once the delete is made: lane-commit.ts; a failed one is tried again next run)
    (remote.has(key) ? out.removed : out.forgotten).push(key);
  }
  return out;
}
