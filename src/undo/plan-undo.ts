// What undoing a run takes, listing by listing: pure, no I/O. From the run's changes (the change
// log, in the order they were made), each key's first write says what it was before the run (absent
// for a create; the whole listing the change kept for an update or delete) and its last write what
// the run left (absent after a delete; the listed fields it wrote, in the kept form, otherwise).
// - revert: a key the run created is deleted (unless gone already); one it updated or deleted is
//   put back whole (an update, or a create when it is gone); one already back as it was is left. Duplicate removals,
//   deletes the guard held back, failed writes and dry runs wrote nothing and are not undone; nor is
//   a removal by a display rule (docs/display-rules.md): the MLS does not allow that listing shown.
//   What is put back is the listing before as the display rules let it be shown now (`shown`,
//   display-now.ts): without a withheld address or a restricted entry, or not at all.
// - conflict: a later run wrote the key, or the service's current listing is not what the run left
//   (changed there, gone, copied, or back after a delete). Left alone and named, unless forced.
// - cannot: a key whose listing before the run was not kept (trimmed by a byte budget, retention,
//   or not among its run's pages), and changes the change log counted but did not keep.
import type { ChangeEntry, RunEntry } from '../change-log/change-log.js';
import { comparedChanges, keptFieldsDiffer, keptOfListing, listingHashes } from '../listing/fingerprint.js';
import type { FieldChange } from '../listing/canonical.js';
import type { ListingCreate } from '../listing/schema.js';
import { unpackListing } from '../listing/whole.js';
import type { WithheldField } from '../mapping/display-rules.js';
import type { ShownNow } from './display-now.js';
import { type ListingChange, ruleOf, withheldChanges } from '../sync/index.js';

/** A listing the service holds now: its ID and listed fields in the kept form. */
export interface CurrentCopy {
  id: number;
  kept: string;
  /** its MLSNumber (a URL-keyed feed reads listings back by it) */
  mlsNumber?: string;
}

/** `withheld`: fields the display rules withhold now, left out of `before` */
export type UndoAction =
  | { kind: 'delete'; key: string; remoteIds: number[]; mlsNumber?: string }
  | {
      kind: 'update';
      key: string;
      before: ListingCreate;
      remoteId: number;
      changes: FieldChange[];
      withheld?: readonly WithheldField[];
    }
  | { kind: 'create'; key: string; before: ListingCreate; withheld?: readonly WithheldField[] };

export interface UndoConflict {
  key: string;
  /** what the undo would do to it */
  action: UndoAction['kind'];
  /** what differs, for a person */
  reason: string;
  /** --force: reverted anyway */
  forced?: boolean;
}

export interface UndoPlan {
  actions: UndoAction[];
  conflicts: UndoConflict[];
  /** what cannot be undone, and why (the change log did not keep it) */
  cannot: Array<{ key?: string; reason: string }>;
  /** keys already as they were before the run (created by it and gone; put back already) */
  unchanged: number;
  /** writes of the run that are not undone: duplicate copies removed, deletes held back, failed writes, removals by a display rule */
  notUndone: { duplicates: number; withheld: number; failed: number; byRule: number };
}

export interface UndoInput {
  run: Pick<RunEntry, 'runId' | 'dropped'>;
  changes: readonly ChangeEntry[];
  /** key → the later run that wrote it (and how) */
  laterWrites: ReadonlyMap<string, string>;
  /** the service's copies of a key now */
  current(key: string): readonly CurrentCopy[];
  force: boolean;
  /** the listing before as the feed's display rules let it be shown now (display-now.ts); as it was when not given */
  shown?(key: string, before: ListingCreate): ShownNow;
}

type Write = Extract<ListingChange, { op: 'create' | 'update' | 'delete' }>;

export function planUndo(input: UndoInput): UndoPlan {
  const plan: UndoPlan = {
    actions: [],
    conflicts: [],
    cannot: [],
    unchanged: 0,
    notUndone: { duplicates: 0, withheld: 0, failed: 0, byRule: 0 },
  };
  if (input.run.dropped > 0) {
    plan.cannot.push({
      reason: `${input.run.dropped} change(s) of run ${input.run.runId} were counted but not kept by the change log (changeLog.maxPerRun / maxBytesPerRun): they cannot be undone`,
    });
  }
  for (const [key, { first, last }] of writesByKey(input.changes, plan)) {
    const action = revert(key, { first, last }, input, plan);
    if (!action) continue;
    const conflict = conflictOf(key, last, input.current(key), input.laterWrites.get(key));
    if (conflict) {
      plan.conflicts.push({ key, action: action.kind, reason: conflict, ...(input.force && { forced: true }) });
      if (!input.force) continue;
    }
    plan.actions.push(action);
  }
  return plan;
}

/** each key's first and last write in the run, in the order the run made them */
function writesByKey(changes: readonly ChangeEntry[], plan: UndoPlan): Map<string, { first: Write; last: Write }> {
  const out = new Map<string, { first: Write; last: Write }>();
  for (const e of changes) {
    if (e.dryRun) continue;
    const c = e.change;
    if (c.op === 'fail') plan.notUndone.failed++;
    if (c.op !== 'create' && c.op !== 'update' && c.op !== 'delete') continue;
    if (c.op === 'delete' && c.withheld) {
      plan.notUndone.withheld++;
      continue;
    }
    // an extra copy the run removed is not brought back (its key's listing stays)
    if (c.op === 'delete' && c.reason === 'duplicate') {
      plan.notUndone.duplicates++;
      continue;
    }
    // a listing a display rule removed is not shown again: the MLS does not allow it
    if (c.op === 'delete' && ruleOf(c.reason)) {
      plan.notUndone.byRule++;
      continue;
    }
    const seen = out.get(c.key);
    if (seen) seen.last = c;
    else out.set(c.key, { first: c, last: c });
  }
  return out;
}

/** what puts the key back as it was before the run (as the display rules let it be shown now), given what the service holds now */
function revert(
  key: string,
  { first, last }: { first: Write; last: Write },
  input: UndoInput,
  plan: UndoPlan,
): UndoAction | undefined {
  const copies = input.current(key);
  if (first.op === 'create') {
    if (!copies.length) {
      plan.unchanged++;
      return undefined;
    }
    return {
      kind: 'delete',
      key,
      remoteIds: copies.map((c) => c.id),
      ...(copies[0]?.mlsNumber !== undefined && { mlsNumber: copies[0].mlsNumber }),
    };
  }
  const was = first.before === undefined ? undefined : unpackListing(first.before);
  if (!was) {
    plan.cannot.push({ key, reason: `its listing before the ${first.op} was ${first.beforeMissing ?? 'not kept'}` });
    return undefined;
  }
  const now = input.shown ? input.shown(key, was) : { listing: was };
  if ('hidden' in now) {
    plan.notUndone.byRule++;
    return undefined;
  }
  const before = now.listing;
  const withheld = now.withheld?.length ? { withheld: now.withheld } : {};
  const copy = copies[0];
  if (!copy) return { kind: 'create', key, before, ...withheld };
  // already put back (an earlier attempt of this undo): its listed fields are as before and not as
  // the run left them. An update that changed only fields the list does not return cannot be seen
  // to be back, and is always sent.
  const kept = keptOfListing(before);
  if (copies.length === 1 && copy.kept === kept && !(last.op !== 'delete' && last.after === kept)) {
    plan.unchanged++;
    return undefined;
  }
  // (what the service holds of a withheld field is not named: the rules do not let it be shown)
  const changes = withheldChanges(comparedChanges(listingHashes(before).compared, copy.kept), now.withheld);
  return { kind: 'update', key, before, remoteId: copy.id, changes, ...withheld };
}

/** why the key is not as the run left it, if it is not */
function conflictOf(
  key: string,
  last: Write,
  copies: readonly CurrentCopy[],
  later: string | undefined,
): string | undefined {
  if (later) return `changed by a later run: ${later}`;
  if (last.op === 'delete')
    return copies.length
      ? `the run deleted it, and the service holds it again (ID ${copies.map((c) => c.id).join(', ')})`
      : undefined;
  if (!copies.length) return `the run left it on the service, and it is gone now`;
  if (copies.length > 1)
    return `the service holds ${copies.length} copies of ${key} now (IDs ${copies.map((c) => c.id).join(', ')})`;
  if (last.after === undefined || last.after === copies[0]!.kept) return undefined;
  return `changed on the service since the run: ${keptFieldsDiffer(last.after, copies[0]!.kept).join(', ')}`;
}
