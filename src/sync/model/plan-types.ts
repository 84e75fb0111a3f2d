// The data planning works on and returns: the feed side, the remote side and the plan. Plain data,
// so a plan can be printed (dry run), snapshotted in tests and handed to the executor.
import type { FeedItem } from '../../feeds/types.js';
import type { FieldChange } from '../../listing/canonical.js';
import type { KeyType, ListingCreate } from '../../listing/schema.js';
import { ADDRESS_FIELDS, type WithheldField } from '../../mapping/display-rules.js';
import type { MappedItem } from '../../mapping/types.js';
import { HIDE_RULES, type HideRule } from '../../mapping/display-config.js';

/** Where a record sits in its feed (structurally the feeds module's RecordPosition). */
export interface Position {
  file: string;
  line?: number;
  index: number;
  id?: string;
}

export type KeyBy = 'MLSNumber' | 'URL';

export interface DesiredListing {
  key: string;
  listing: ListingCreate;
  position: Position;
  /** the record as read (recordText, record-stamp.ts), when the run keeps stamps */
  text?: string;
  /** listing fields the display rules withhold from it (its address: docs/display-rules.md): no value of them is printed or kept for undo */
  withheld?: readonly WithheldField[];
}

/**
 * A record whose stamp matched (record-stamp.ts): unchanged on both sides since the last run, so it
 * was not mapped. It keeps the record as read (`item`, `text`) to be mapped after all, for the one
 * case that needs its listing: an earlier record of its key was written in this run.
 */
export interface RememberedListing {
  key: string;
  position: Position;
  item: FeedItem;
  text: string;
}

export interface RejectedRecord {
  position: Position;
  key?: string;
  reasons: string[];
}

export interface FeedDuplicate {
  key: string;
  /** the record that won (the later one) */
  position: Position;
}

/** Everything read from the feed, keyed by the feed's key. */
export interface DesiredSide {
  listings: Map<string, DesiredListing>;
  /** keys of records rejected by validation: their remote listing is left as it is */
  protectedKeys: Set<string>;
  /** keys whose last record says the listing is not to be shown: the reason the delete carries */
  goneKeys: Map<string, GoneReason>;
  /** the first rejected records (read/desired.ts KEPT_REJECTED); counts.rejected has them all */
  rejected: RejectedRecord[];
  feedDuplicates: FeedDuplicate[];
  mode: 'full' | 'incremental';
  /** false when the feed could not be read whole: what was read is kept, deletes are blocked */
  complete: boolean;
  readError?: string;
  /** the HTTP status the feed server answered with, when that stopped the read (FeedReadError.status) */
  readStatus?: number;
  counts: { records: number; valid: number; rejected: number; skipped: number; removed: number };
  /** what the feed's display rules did to the records mapped (docs/display-rules.md) */
  display: DisplayTally;
}

/**
 * The display rules' work in a run: records each rule hid (every record read: a hidden record is
 * never stamped, so it is judged every run), listings shown with their address withheld and records
 * held back for want of their attribution (of the records mapped: a record in step by its stamp is
 * not mapped again), and keys whose sold window ended while the source did not send them again.
 */
export interface DisplayTally {
  hidden: Partial<Record<HideRule, number>>;
  addressWithheld: number;
  held: number;
}

export interface RemoteListing {
  id: number;
  key: string;
  /** its key by the other field (URL when keyed by MLSNumber, and back): kept when another feed of the chatbot keys by it */
  otherKey?: string;
  /** comparedOf(...).hash of the listed fields, the feed's `ignore`d ones aside (the same set planSync is given) */
  hash: Uint8Array;
  /** its compared JSON in the kept form (comparedOfListItem): for dry runs and the change log, which name each change old → new */
  readonly compared?: string;
}

/** Every listing the chatbot holds, as the list endpoint gave it. */
/** What planning reads of the remote side: the chatbot's RemoteIndex (remote/remote-index.ts); a Map<string, RemoteListing[]> is one too (tests). */
export interface RemoteCopies {
  get(key: string): readonly RemoteListing[] | undefined;
  has(key: string): boolean;
  keys(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, readonly RemoteListing[]]>;
  readonly size: number;
}

/**
 * What a lane's planner asks of its chatbot's copies beyond RemoteCopies (remote/remote-index.ts
 * RemoteIndex): the paging so far, for a record read beside it, and the copy a stamp is checked against.
 */
export interface PlannedCopies extends RemoteCopies {
  /** the one copy of `key` paged so far (its row and hash); 'not yet': none paged; 'not one': several */
  pagedCopy(key: string): { row: number; hash: Uint8Array } | 'not yet' | 'not one';
  /** a copy taken while paging (its key's record in step by its stamp) */
  takeEarly(row: number): void;
  /** the copy of `key` taken while paging, if one was */
  takenCopy(key: string): number | undefined;
  /** keys the finished paging holds more than once */
  severalCopies(): readonly string[];
  /** what a record's stamp is taken of: the copy's hash and its stored fingerprint */
  stampInputs(key: string): { hash: Uint8Array; fingerprint: string } | undefined;
}

export interface RemoteSide {
  /** key → its copies, lowest ID first (a RemoteIndex in a sync) */
  byKey: RemoteCopies;
  /** distinct listings seen */
  count: number;
  virtualCount: number;
  /** false when paging could not be made to agree with VirtualCount: deletes are blocked */
  complete: boolean;
  problem?: string;
  pages: number;
  rounds: number;
  /** listings whose rows came from the last paging's memory (page-echo.ts), not decoded again */
  recalled?: number;
  /**
   * the keys a run of pushed events is about: the only ones paged (remote.ts fetchRemoteKeys), or (a
   * URL-keyed chatbot, paged whole) the only ones it concludes anything of: no grace mark, sold window
   * or delete of another key comes of it
   */
  asked?: ReadonlySet<string>;
}

export interface PlanOptions {
  keyBy: KeyBy;
  deletesMode: 'mirror' | 'keep';
  /** fields that alone never cause an update (the feed's `ignore`) */
  ignore: ReadonlySet<string>;
  /** key → fingerprint of the last successful write (asked only of keys the chatbot holds) */
  fingerprints: { get(key: string): string | undefined };
  /** true for a remote listing another feed of the same chatbot wrote: never deleted by this one */
  ownedElsewhere?: (remote: RemoteListing) => boolean;
  /**
   * the other feeds of the chatbot that have no committed state (never ran, or their state was lost):
   * a remote listing this feed lacks may be theirs, so its delete is held (settle/state.ts unsyncedWriters)
   */
  unsyncedWriters?: readonly string[];
}

export interface PlannedCreate {
  key: string;
  listing: ListingCreate;
  fingerprint: string;
  /** stored with the fingerprint once written (record-stamp.ts) */
  stamp?: string;
  /** with the stamp: the listing's comparison hash, which the stamp takes as the chatbot's copy's once written */
  hash?: Uint8Array;
  /** keptOfListing(listing), when planning made it with the fingerprint (a create): what the change log keeps of the write */
  kept?: string;
  /** DesiredListing.withheld: the old values of those fields are named withheld, and the listing kept for undo lacks them */
  withheld?: readonly WithheldField[];
}

export interface PlannedUpdate extends PlannedCreate {
  remoteId: number;
  /** 'fields': list fields differ (see changes); 'unlisted': only the fingerprint differs */
  reason: 'fields' | 'unlisted';
  changes: FieldChange[];
}

/**
 * A removal by a display rule (docs/display-rules.md), named by the rule: `rule:InternetEntireListingDisplayYN`,
 * `rule:sold-window`. The record itself says the listing may not be shown: planned in either
 * deletes.mode, sent at once, not counted toward the delete limits (settle/guards.ts).
 */
export type RuleReason = `rule:${HideRule}`;

/**
 * Why a key's last record takes its listing away, whatever order its records came in and whether
 * the chatbot held it before (a delete planned for it is not an absence: it is sent without asking
 * the source again). off-market: the mapping's `skip` (an off-market status); removed: the source's
 * own word (RESO MlgCanView: false on a feed of purpose internal, an EntityEvent key the source no
 * longer returns); moved: a routed record that no longer matches the chatbot's where (lanes.ts);
 * `rule:<name>`: a display rule hides it (RuleReason).
 */
export type GoneReason = 'off-market' | 'removed' | 'moved' | RuleReason;

/** The listing fields the display rules withhold from a mapped listing (its address), as a DesiredListing carries them. */
export function withheldOf(item: MappedItem & { kind: 'listing' }): Pick<DesiredListing, 'withheld'> {
  return item.shown?.addressWithheld ? { withheld: ADDRESS_FIELDS } : {};
}

export const ruleReason = (rule: HideRule): RuleReason => `rule:${rule}`;

/** The display rule of a delete reason, when it is a removal by one. */
export function ruleOf(reason: string): HideRule | undefined {
  return reason.startsWith('rule:') ? HIDE_RULES.find((r) => r === reason.slice(5)) : undefined;
}

/** absent: a full pull lacked the key; duplicate: an extra copy of a key; undone: `feedsync undo` deletes a listing the undone run created */
export type DeleteReason = 'absent' | GoneReason | 'duplicate' | 'undone';

export interface PlannedDelete {
  /** the feed's key of the listing */
  key: string;
  reason: DeleteReason;
  /** what is sent in Keys: the feed key, or the NewOaks ID of one duplicate copy */
  deleteKey: string;
  keyType: KeyType;
  remoteIds: number[];
  /** the remote copy's MLSNumber when the feed is keyed by URL (undo reads the listing back by it) */
  mlsNumber?: string;
}

/** The deletes planned once the whole feed has been seen (plan.ts planDeletes), and the keys left alone. */
export interface DeleteDecision {
  deletes: PlannedDelete[];
  /** keys whose record was rejected: their remote listing is left as it is */
  protectedKeys: string[];
  /** remote listings only another feed of the chatbot wrote: left alone */
  otherFeeds: number;
  /**
   * deletes of listings this feed lacks, held because another feed of the chatbot has no committed
   * state (PlanOptions.unsyncedWriters): they may be that feed's (the guard withholds them)
   */
  unsynced?: { writers: readonly string[]; deletes: PlannedDelete[] };
}

export interface DuplicateGroup {
  key: string;
  keepId: number;
  extraIds: number[];
}
