// The diff of a feed against the chatbot's listings: pure, no I/O. What it decides:
// - create: a feed key the service does not hold;
// - update: both hold it and a listed field differs (changes old → new, `ignore`d fields aside), or
//   the list fields agree but the fingerprint of the last write differs (a field the list does not
//   return changed); a listing with no fingerprint yet and equal list fields is unchanged, and its
//   fingerprint is recorded without a write;
// - delete (mirror mode only): a remote key the feed no longer has (a full feed), or one whose last
//   record marks it gone (off-market, removed, moved: either mode of feed; one this run wrote from an
//   earlier record too); deleted by the feed's key (KeyType = keyBy), the reason on the delete. A
//   display rule's removal (`rule:<name>`) is planned in keep mode too;
// - duplicates: a key the service holds more than once. The copy that matches the feed (else the
//   newest ID) is kept; in mirror mode the others are deleted by their NewOaks ID;
// - a key whose feed record was rejected keeps its remote listing untouched, and so does a listing
//   another feed of the same chatbot wrote (several feeds may fill one chatbot); while another feed of
//   the chatbot has no committed state (never ran, or its state was lost), a key this feed lacks may
//   be that feed's: its delete is planned apart (DeleteDecision.unsynced), for the guard to hold.
// A listing whose address the display rules withhold (DesiredListing.withheld) carries them on its
// write, and its changes name those fields' old values withheld, not what they were.
// planListing decides one feed listing and planDeletes the rest, so a sync streams the feed
// through planListing without holding it (lane-plan.ts) and plans the deletes once it has been read.
import type { FieldChange } from '../../listing/canonical.js';
import { comparedChanges, keptField, listingHashes, storedFingerprintStatus } from '../../listing/fingerprint.js';
import type { WithheldField } from '../../mapping/display-rules.js';
import {
  ruleOf,
  type DesiredListing,
  type DeleteDecision,
  type DeleteReason,
  type DesiredSide,
  type DuplicateGroup,
  type PlannedCreate,
  type PlannedDelete,
  type PlannedUpdate,
  type PlanOptions,
  type RemoteListing,
  type RemoteSide,
} from '../model/plan-types.js';

export type { DeleteDecision } from '../model/plan-types.js';

export interface ListingDecision {
  create?: PlannedCreate;
  update?: PlannedUpdate;
  /** unchanged with no fingerprint yet, or one of an older version: record this one, write nothing */
  recordFingerprint?: string;
  duplicates?: DuplicateGroup;
  /** the extra copies to delete by NewOaks ID (mirror mode) */
  duplicateDeletes: PlannedDelete[];
  /** the listing's fingerprint and comparison hash, as the copy holds them once in step (what a stamp is taken of) */
  inStep: { fingerprint: string; hash: Uint8Array };
}

export function planListing(
  entry: DesiredListing,
  copies: readonly RemoteListing[] | undefined,
  options: PlanOptions,
): ListingDecision {
  const { key, listing, withheld } = entry;
  const { ignore } = options;
  const held = withheld?.length ? { withheld } : {};
  // both hashes from one serialization of the listing; a create's kept form (its change log entry) from the same one
  const creating = !copies?.length;
  const { fingerprint, hash, compared, kept: written } = listingHashes(listing, ignore, creating);
  const inStep = { fingerprint, hash };
  if (creating)
    return {
      create: { key, listing, fingerprint, ...(written !== undefined && { kept: written }), ...held },
      duplicateDeletes: [],
      inStep,
    };
  // The hashes tell whether anything listed differs (one rule, dry run or not); with the remote
  // compared JSON at hand (dry runs, change log) the changed fields are named old → new.
  const { kept, ...dups } = duplicatesOf(key, copies, hash, options);
  const decision: ListingDecision = { ...dups, inStep };
  const stored = options.fingerprints.get(key);
  const was = stored === undefined ? undefined : storedFingerprintStatus(stored, fingerprint, listing, ignore);
  if (!kept.same) {
    const old = kept.copy.compared;
    const changes = old === undefined ? [] : withheldChanges(comparedChanges(compared, old), withheld);
    decision.update = { key, listing, fingerprint, remoteId: kept.copy.id, reason: 'fields', changes, ...held };
  } else if (was === 'differs')
    decision.update = { key, listing, fingerprint, remoteId: kept.copy.id, reason: 'unlisted', changes: [], ...held };
  // none yet, or one of an older version for the same content: recorded, nothing written
  else if (was !== 'same') decision.recordFingerprint = fingerprint;
  return decision;
}

/**
 * The copies of a key the service holds: the one kept (the first whose comparison hash is `hash`,
 * the listing's, else the newest ID), and the others as duplicates (deleted by NewOaks ID in
 * mirror mode; a copy another feed wrote is left alone).
 */
export function duplicatesOf(
  key: string,
  copies: readonly RemoteListing[],
  hash: Uint8Array,
  options: Pick<PlanOptions, 'deletesMode' | 'ownedElsewhere'>,
): Pick<ListingDecision, 'duplicates' | 'duplicateDeletes'> & { kept: { copy: RemoteListing; same: boolean } } {
  const same = copies.find((c) => Buffer.compare(hash, c.hash) === 0);
  const kept = { copy: same ?? copies.reduce((a, b) => (b.id > a.id ? b : a)), same: same !== undefined };
  const extras = copies.filter((c) => c !== kept.copy && !options.ownedElsewhere?.(c));
  if (!extras.length) return { kept, duplicateDeletes: [] };
  return {
    kept,
    duplicates: { key, keepId: kept.copy.id, extraIds: extras.map((c) => c.id) },
    duplicateDeletes:
      options.deletesMode === 'mirror'
        ? extras.map((c) => ({
            key,
            reason: 'duplicate',
            deleteKey: String(c.id),
            keyType: 'NewOaks',
            remoteIds: [c.id],
          }))
        : [],
  };
}

/**
 * The remote listings the feed no longer has (or marks gone), once the whole feed has been seen; and
 * a listing this run wrote (`written`) before a later record of its key took it away (a create the
 * chatbot's list, paged before the run, does not show).
 */
export function planDeletes(remote: RemoteSide, feed: DeletesFeed, options: PlanOptions): DeleteDecision {
  const out: DeleteDecision = { deletes: [], protectedKeys: [], otherFeeds: 0 };
  const goes = goesIn(options);
  // keys first: the copies are looked up (made, from a RemoteIndex) only for keys the feed lacks
  for (const key of remote.byKey.keys()) {
    // (unread: the source holds the key unchanged, its record not read: OpenedFeed.unread)
    if (feed.listings.has(key) || feed.unread?.has(key)) continue;
    if (feed.protectedKeys.has(key)) {
      out.protectedKeys.push(key);
      continue;
    }
    const gone = feed.goneKeys.get(key);
    if (options.deletesMode !== 'mirror' && !goes(gone)) continue;
    if (!gone && feed.mode !== 'full') continue;
    const copies = remote.byKey.get(key)!;
    if (options.ownedElsewhere && copies.every(options.ownedElsewhere)) {
      out.otherFeeds++;
      continue;
    }
    planned(out, absenceDelete(key, gone ?? 'absent', copies, options), options.unsyncedWriters);
  }
  if (feed.written) {
    for (const [key, reason] of feed.goneKeys) {
      if (goes(reason) && !remote.byKey.has(key) && feed.written.has(key))
        out.deletes.push({ key, reason, deleteKey: key, keyType: options.keyBy, remoteIds: [] });
    }
  }
  return out;
}

/**
 * A delete planned: an absence while another feed of the chatbot has no committed state may be that
 * feed's listing, so it goes apart, for the guard to hold (a record's own word that it is gone does not).
 */
function planned(out: DeleteDecision, d: PlannedDelete, unsynced: readonly string[] | undefined): void {
  if (d.reason === 'absent' && unsynced?.length) (out.unsynced ??= { writers: unsynced, deletes: [] }).deletes.push(d);
  else out.deletes.push(d);
}

/** What planDeletes reads of the feed side. */
export type DeletesFeed = Pick<DesiredSide, 'protectedKeys' | 'goneKeys' | 'mode'> & {
  listings: { has(key: string): boolean };
  written?: { has(key: string): boolean };
  unread?: { has(key: string): boolean };
};

/**
 * Which reasons a lane's deletes mode plans: keep mode deletes nothing the feed lacks or marks gone,
 * but a display rule's removal (the MLS does not allow the listing shown, whatever the mode).
 */
function goesIn(options: Pick<PlanOptions, 'deletesMode'>) {
  const mirror = options.deletesMode === 'mirror';
  return (reason: string | undefined): reason is string =>
    reason !== undefined && (mirror || ruleOf(reason) !== undefined);
}

/** The delete of a key's copies by the feed's key; a URL-keyed feed's names the copy's MLSNumber (undo reads it back by it). */
function absenceDelete(
  key: string,
  reason: DeleteReason,
  copies: readonly RemoteListing[],
  options: Pick<PlanOptions, 'keyBy'>,
): PlannedDelete {
  const mlsNumber =
    options.keyBy === 'URL' && copies[0]?.compared !== undefined
      ? keptField(copies[0].compared, 'MLSNumber')
      : undefined;
  return {
    key,
    reason,
    deleteKey: key,
    keyType: options.keyBy,
    remoteIds: copies.map((c) => c.id),
    ...(typeof mlsNumber === 'string' && { mlsNumber }),
  };
}

/**
 * A later record of a key this run already planned a write for (the service holds, or is being
 * sent, the earlier record): an update by key, never a second create. The list snapshot predates
 * that write, so no field diff can be named.
 */
export function planAgain(
  entry: DesiredListing,
  copies: readonly RemoteListing[] | undefined,
  options: PlanOptions,
): ListingDecision {
  const { key, listing, withheld } = entry;
  const { fingerprint, hash } = listingHashes(listing, options.ignore);
  const remoteId = copies?.length ? Math.max(...copies.map((c) => c.id)) : 0;
  const update: PlannedUpdate = {
    key,
    listing,
    fingerprint,
    remoteId,
    reason: 'unlisted',
    changes: [],
    ...(withheld?.length && { withheld }),
  };
  return { update, duplicateDeletes: [], inStep: { fingerprint, hash } };
}

/** The changes with the old value of each withheld field left out (named withheld): the chatbot held it, the display rules no longer let it be shown. */
export function withheldChanges(changes: FieldChange[], withheld: readonly WithheldField[] | undefined): FieldChange[] {
  const names = new Set<string>(withheld);
  if (!changes.some((c) => names.has(c.field))) return changes;
  return changes.map((c) => {
    if (!names.has(c.field)) return c;
    const { old: _old, oldNotKept: _notKept, cut, ...rest } = c;
    const newCut = cut?.new;
    return { ...rest, old: undefined, oldWithheld: true, ...(newCut && { cut: { new: newCut } }) };
  });
}
