// The names of a chatbot's sync state (settle/state.ts loads and commits it): each lane's store
// namespaces, and the shapes a run reads it as. Here, not beside the loading, because the paging
// (remote/), the undo capture (write/) and the lanes (read/) name them too.
import type { KeyBy } from './plan-types.js';

export const fingerprintNamespace = (feed: string) => `fp:${feed}`;
export const missingNamespace = (feed: string) => `missing:${feed}`;
/** key → the stamp of the record that left its listing in step (record-stamp.ts) */
export const stampNamespace = (feed: string) => `stamp:${feed}`;
/** key → the fields the list does not return (Location, AreaUnit) as last written, JSON: what the change log's whole listings are completed with (undo) */
export const unlistedNamespace = (feed: string) => `unlisted:${feed}`;
/** key → when a Closed listing's sold window ends (ISO; display.soldDays): a run after it removes the listing, read again or not (sold-window.ts) */
export const soldWindowNamespace = (feed: string) => `until:${feed}`;
/** feed name → the mark its reader reached in the last successful run */
export const MARK_NAMESPACE = 'reso-hwm';
/** lane → the valid records of its last full run that ended ok (rejection.ts compares a run with it) */
export const GOOD_VALID_NAMESPACE = 'good-valid';
/** lane → the display rules its last run applied, resolved, with their fingerprint (JSON; settle/rule-change.ts) */
export const RULES_NAMESPACE = 'display-rules';
/**
 * lane → '1' once it committed a run that read the feed and the chatbot whole: with a
 * GOOD_VALID_NAMESPACE entry (a full run read whole that ended ok), the sign that its fingerprints
 * name every listing it has on the chatbot (FeedState.committed). Written by a lane that had neither.
 * Fingerprints alone are no such sign: the writes a run stopped midway recorded as they landed
 * (settle/acked.ts), after the state was lost, name only those listings.
 */
export const SYNCED_NAMESPACE = 'synced';

/**
 * lane → its seal (JSON; settle/seal.ts): what its last run rested on when it found every record in
 * step by its stamp, wrote nothing and stored nothing; a run that finds all of it as it was reads no
 * record. Written and deleted by the lane's commit alone.
 */
export const SEAL_NAMESPACE = 'feed-seal';

/** A feed writing to the chatbot, as the config names it. */
export interface ChatbotFeed {
  name: string;
  keyBy: KeyBy;
}

export interface FeedState {
  name: string;
  keyBy: KeyBy;
  /** key → fingerprint of the last successful write */
  fingerprints: ReadonlyMap<string, string>;
  /** key → ISO time the key was first found missing */
  missingSince: ReadonlyMap<string, string>;
  /** keys the feed repeated in its last run */
  recurring: Set<string>;
  /** key → when its sold window ends (soldWindowNamespace) */
  soldUntil: ReadonlyMap<string, string>;
  mark?: string;
  /** valid records of the lane's last full run that ended ok (GOOD_VALID_NAMESPACE) */
  lastGoodValid?: number;
  /** the display rules the lane's last run applied (RULES_NAMESPACE); none stored before rules were kept */
  rules?: string;
  /** the lane's seal as stored (SEAL_NAMESPACE), unread */
  seal?: string;
  /**
   * the lane's state names every listing it has on the chatbot: a SYNCED_NAMESPACE or
   * GOOD_VALID_NAMESPACE entry (a run read whole); false when it never ran, or its state was lost and
   * no run has read whole since, whatever fingerprints such runs recorded (the other feeds of the
   * chatbot hold the deletes it could be owed)
   */
  committed: boolean;
}

export interface ChatbotState {
  chatbot: string;
  location: string;
  /** every feed of the chatbot in the config, by name */
  feeds: Map<string, FeedState>;
}

/** A chatbot's sync state, as its paging's lanes read it: the chatbot's state and each lane's stored stamps. */
export interface ChatbotStateRead {
  state: ChatbotState;
  stamps: Map<string, ReadonlyMap<string, string>>;
}
