// What a lane's planner learns as the feed goes by (plan/lane-plan.ts): the record as mapped once
// for every lane, and the lane's tallies, which the guard, commit and report steps read.
import type { MappedItem } from '../../mapping/types.js';
import type { Entries } from './entries.js';
import type { PlannedDelete } from './plan-types.js';

/** A record mapped once for every lane of its feed; `clean`: no unmapped value met (it may get a stamp). */
export interface Mapped {
  item: MappedItem;
  clean: boolean;
}

export interface LaneTally {
  creates: number;
  updates: number;
  unchanged: number;
  unchangedByStamp: number;
  /** records readEarly remembered while the chatbot was still paged */
  besidePaging: number;
  /** listings the lane's seal showed in step: the feed was not read (settle/seal.ts) */
  unchangedBySeal: number;
  duplicates: number;
  /** second (or later) writes of a key in this run: a record of it came again after its first was planned */
  rewritten: number;
  /** valid listings never planned: the run stopped before they left the pending window (set when planning is over) */
  unplanned: number;
  /** key → fingerprint of listings in step that had none stored (recorded, nothing written) */
  recordFingerprints: Entries;
  /** key → the unlisted fields (JSON) of those listings: what the fingerprint recorded holds, so undo can complete them */
  recordUnlisted: Entries;
  /** key → stamp of listings in step whose stamp was not the stored one */
  recordStamps: Entries;
  duplicateDeletes: PlannedDelete[];
}
