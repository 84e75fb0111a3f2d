// A lane's planner as the steps around it see it (plan/lane-plan.ts makes it): what it decides of
// each listing, and the calls the read makes on it. The planner decides; it writes nothing and
// logs no change: sync/run/ makes a decision into a write job (in a dry run, into the plan view
// and the change log's entry) and hands the read a planner whose answers are those jobs.
import type { FeedItem } from '../../feeds/types.js';
import type { KeyedItem } from '../../mapping/types.js';
import type { FeedCollector } from './feed-side.js';
import type { Mapped } from './lane-tally.js';
import type { DesiredListing, PlannedCreate, PlannedUpdate, RememberedListing } from './plan-types.js';

/**
 * What planning decided of one listing out of the pending window: to create it, to update a copy
 * the chatbot holds, or nothing to write (in step, by its stamp or by the diff). A key the chatbot
 * holds more than once is a duplicate: its extra copies' deletes are the planner's tally's
 * (LaneTally.duplicateDeletes), which the guard step takes with the absences.
 */
export type PlanDecision =
  | { kind: 'create'; create: PlannedCreate }
  | { kind: 'update'; update: PlannedUpdate }
  | { readonly kind: 'unchanged' };

/** The decision to write nothing (one object: most records of a rerun are in step). */
export const UNCHANGED: PlanDecision = Object.freeze({ kind: 'unchanged' });

/** The calls the read makes on a lane's planner; `Out`: what a record planned comes to (a decision, or the run's job). */
export interface PlannerSteps<Out> {
  collector: FeedCollector;
  /** one record routed to the lane: what it comes to now, if anything */
  take(item: KeyedItem, map: () => Mapped): Out | undefined;
  /**
   * A record read while the chatbot is still paged (read-feed.ts, whilePaging): remembered when its
   * stamp shows it in step with the one copy of its key paged so far, as read() would remember it
   * (the entry comes back, to be pushed); 'not yet' when no copy of its key has been paged yet; 'later' when
   * only the finished paging can tell (no stamp, a changed record, several copies...): it is read
   * with read() once paging is over. Nothing is mapped.
   */
  readEarly(item: FeedItem, key: string): RememberedListing | 'not yet' | 'later';
  /** take in two halves, for a step between them (the media mirror): the record read (mapped unless in step)... */
  read(item: KeyedItem, map: () => Mapped): DesiredListing | RememberedListing | undefined;
  /** ...and planned (through the pending window) */
  push(entry: DesiredListing | RememberedListing): Out | undefined;
  /** a listing whose photos were not all mirrored: no stamp, so the next run maps it again */
  unstamp(entry: DesiredListing): void;
  /** the feed ended: what still waits in the window */
  drain(): Generator<Out>;
  /** the held records (keys that recur): planned once every earlier write has finished */
  held(): Generator<Out>;
}
