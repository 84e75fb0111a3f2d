// The diff of a feed against the chatbot's listings: pure, no I/O. What it decides:
// - create: a feed key the service does not hold;
// - update: both hold it and a listed field differs (changes old → new, `ignore`d fields aside), or
//   the list fields agree but the fingerprint of the last write differs (a field the list does not
//   return changed); a listing with no fingerprint yet and equal list fields is unchanged, and its
//   fingerprint is recorded without a write;
// - delete (mirror mode only): a remote key the feed no longer has (a full feed), or one the feed
//   marks removed/skipped (either mode of feed); deleted by the feed's key (KeyType = keyBy);
// - duplicates: a key the service holds more than once. The copy that matches the feed (else the
//   newest ID) is kept; in mirror mode the others are deleted by their NewOaks ID;
// - a key whose feed record was rejected keeps its remote listing untouched, and so does a listing
//   another feed of the same chatbot wrote (several feeds may fill one chatbot).
import { canonicalFromListing, diffCanonical } from '../listing/canonical.js';
import { fingerprintListing } from '../listing/fingerprint.js';
import type { DesiredSide, DuplicateGroup, PlanOptions, PlannedDelete, RemoteListing, RemoteSide, SyncPlan } from './plan-types.js';

export function planSync(desired: DesiredSide, remote: RemoteSide, options: PlanOptions): SyncPlan {
  const ignore = new Set(options.ignore);
  const mirror = options.deletesMode === 'mirror';
  const plan: SyncPlan = {
    keyBy: options.keyBy,
    creates: [],
    updates: [],
    deletes: [],
    unchanged: 0,
    recordFingerprints: [],
    duplicates: [],
    protectedKeys: [],
    otherFeeds: 0,
  };

  for (const [key, { listing }] of desired.listings) {
    const fingerprint = fingerprintListing(listing, ignore);
    const copies = remote.byKey.get(key);
    if (!copies?.length) {
      plan.creates.push({ key, listing, fingerprint });
      continue;
    }
    const canonical = canonicalFromListing(listing);
    const diffs = copies.map((copy) => ({ copy, changes: diffCanonical(canonical, copy.canonical, ignore) }));
    const kept = diffs.find((d) => d.changes.length === 0) ?? diffs.reduce((a, b) => (b.copy.id > a.copy.id ? b : a));
    if (copies.length > 1) addDuplicates(plan, key, kept.copy, copies, mirror, options.ownedElsewhere);

    const stored = options.fingerprints.get(key);
    if (kept.changes.length) {
      plan.updates.push({ key, listing, fingerprint, remoteId: kept.copy.id, reason: 'fields', changes: kept.changes });
    } else if (stored !== undefined && stored !== fingerprint) {
      plan.updates.push({ key, listing, fingerprint, remoteId: kept.copy.id, reason: 'unlisted', changes: [] });
    } else {
      plan.unchanged++;
      if (stored === undefined) plan.recordFingerprints.push([key, fingerprint]);
    }
  }

  for (const [key, copies] of remote.byKey) {
    if (desired.listings.has(key)) continue;
    if (desired.protectedKeys.has(key)) {
      plan.protectedKeys.push(key);
      continue;
    }
    const gone = desired.goneKeys.get(key);
    const absentFromFullFeed = desired.mode === 'full';
    if (!mirror || (!gone && !absentFromFullFeed)) continue;
    if (options.ownedElsewhere && copies.every(options.ownedElsewhere)) {
      plan.otherFeeds++;
      continue;
    }
    plan.deletes.push({
      key,
      reason: gone ?? 'absent',
      deleteKey: key,
      keyType: options.keyBy,
      remoteIds: copies.map((c) => c.id),
    });
  }
  return plan;
}

function addDuplicates(
  plan: SyncPlan,
  key: string,
  kept: RemoteListing,
  copies: RemoteListing[],
  mirror: boolean,
  ownedElsewhere: PlanOptions['ownedElsewhere'],
): void {
  const extras = copies.filter((c) => c !== kept && !ownedElsewhere?.(c));
  if (extras.length === 0) return;
  const group: DuplicateGroup = { key, keepId: kept.id, extraIds: extras.map((c) => c.id) };
  plan.duplicates.push(group);
  if (!mirror) return;
  for (const id of group.extraIds) {
    const del: PlannedDelete = { key, reason: 'duplicate', deleteKey: String(id), keyType: 'NewOaks', remoteIds: [id] };
    plan.deletes.push(del);
  }
}
