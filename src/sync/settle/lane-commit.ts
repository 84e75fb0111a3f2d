// Step "commit" of a lane (docs/design.md): what the lane's run changed in its state, in one
// atomic apply after the writes it describes (state.ts): fingerprints and stamps of what was
// written or found in step, the grace period's first-missing marks, the sold windows, the feed mark (only when the
// run ended ok: a lane that failed reads again from its old mark next run), and the keys that
// recur in the feed. A dry run commits nothing. The lanes of a feed are committed a batch at a time
// (commitLanes): one apply for many lanes, each lane's changes as its own apply would make them.
import type { KvStore } from '../../state/kv-store.js';
import type { ExecutionResult } from '../model/execution.js';
import type { GuardDecision } from '../model/outcome.js';
import type { LaneTally } from '../model/lane-tally.js';
import { fingerprintNamespace, unlistedNamespace } from '../model/state-names.js';
import { applyOps, emptyChanges, stateOps, type FeedStateChanges } from './state.js';

export interface LaneCommitInput {
  /** the lane's state name (lanes.ts) */
  id: string;
  tally: Pick<LaneTally, 'recordFingerprints' | 'recordUnlisted' | 'recordStamps'>;
  exec: Pick<ExecutionResult, 'written' | 'stamped' | 'deletedKeys' | 'unlisted'>;
  guard: Pick<GuardDecision, 'marks'>;
  missingSince: ReadonlyMap<string, string>;
  /** the mark the reader reached, when the lane earned it */
  mark?: string;
  /** the valid records of a full run that ended ok (rejection.ts) */
  goodValid?: number;
  /** keys whose photos were not all mirrored: their stamps go, so the next run maps them again */
  unstamped?: readonly string[];
  /** other state written in the same apply (the media mirror's) */
  extra?: FeedStateChanges['extra'];
  /** sold windows (display.soldDays) the run found: to store, to clear; and those stored before (a deleted key's goes) */
  soldUntil?: {
    set: ReadonlyMap<string, string>;
    clear: ReadonlySet<string>;
    stored: ReadonlyMap<string, string>;
    /** the stored windows as a changed display.soldDays re-judged them (rule-change.ts): stored anew */
    rejudged?: ReadonlyMap<string, string>;
  };
  /** the display rules the run applied, when they differ from those stored (rule-change.ts) */
  rules?: string;
  /** '1': the lane had no committed state and this run read both sides whole (SYNCED_NAMESPACE) */
  synced?: string;
  /** the feed was read to its end: the recurring keys are known */
  recurring?: { now: ReadonlySet<string>; before: ReadonlySet<string> };
  /** the lane's seal stored anew, or the stored one deleted (settle/seal.ts; run/feed-seal.ts decides) */
  seal?: FeedStateChanges['seal'];
  /** how many of exec's written and unlisted pairs are in the store already, recorded as they were acknowledged (settle/acked.ts drain) */
  ackedStored?: number;
}

/**
 * Whether the store holds already what the commit would set of exec's written fingerprints and
 * unlisted fields, so that it sets none of them: every pair was recorded as acknowledged
 * (write/execute.ts tells each one to settle/acked.ts as it pushes it, in the same order, and the
 * applies follow that order: each key holds its last pair, as the commit's sets would leave it),
 * and nothing else of the commit sets those namespaces (a record's fingerprint set before a written
 * one of the same key would win over it). The commit is as atomic as before over what it writes;
 * what it leaves out was committed and flushed before it began. A first sync's commit read back
 * every one of those values to find it unchanged: 60,000 at 30k listings, on the wall after the
 * last create.
 */
export function ackedInStore(input: LaneCommitInput): boolean {
  const { exec, tally } = input;
  const namespaces = new Set([fingerprintNamespace(input.id), unlistedNamespace(input.id)]);
  return (
    input.ackedStored === exec.written.length &&
    exec.unlisted.length === exec.written.length &&
    tally.recordFingerprints.length === 0 &&
    tally.recordUnlisted.length === 0 &&
    !(input.extra ?? []).some((op) => namespaces.has(op.ns))
  );
}

function laneChanges(input: LaneCommitInput): FeedStateChanges {
  const { exec, guard } = input;
  const changes = emptyChanges(input.id);
  const inStore = ackedInStore(input);
  changes.fingerprints.set = inStore ? [] : input.tally.recordFingerprints.concat(exec.written);
  changes.fingerprints.delete = exec.deletedKeys;
  changes.stamps.set = input.tally.recordStamps.concat(exec.stamped);
  changes.stamps.delete = [...exec.deletedKeys, ...(input.unstamped ?? [])];
  if (input.extra) changes.extra = input.extra;
  // the unlisted fields of what was written or found in step with no record (undo restores them)
  changes.unlisted = { set: inStore ? [] : input.tally.recordUnlisted.concat(exec.unlisted), delete: exec.deletedKeys };
  changes.missingSince.set = guard.marks.set;
  changes.missingSince.delete = [...guard.marks.clear, ...exec.deletedKeys.filter((k) => input.missingSince.has(k))];
  const w = input.soldUntil;
  if (w) {
    const gone = exec.deletedKeys.filter((k) => w.stored.has(k) && !w.set.has(k) && !w.clear.has(k));
    const deleted = new Set(exec.deletedKeys);
    const rejudged = [...(w.rejudged ?? [])].filter(([k]) => !w.set.has(k) && !w.clear.has(k) && !deleted.has(k));
    changes.soldUntil = { set: [...rejudged, ...w.set], delete: [...w.clear, ...gone] };
  }
  if (input.rules !== undefined) changes.rules = input.rules;
  if (input.mark !== undefined) changes.mark = input.mark;
  if (input.goodValid !== undefined) changes.goodValid = input.goodValid;
  if (input.synced !== undefined) changes.synced = input.synced;
  if (input.seal) changes.seal = input.seal;
  const r = input.recurring;
  if (r)
    changes.recurring = {
      set: [...r.now].filter((k) => !r.before.has(k)),
      delete: [...r.before].filter((k) => !r.now.has(k)),
    };
  return changes;
}

/**
 * Entries (sets and deletes) one apply of several lanes' commits holds at most: a no-change run's
 * lanes hold one or two each, so a routed feed's 100 lanes go in one MULTI, not 100 round trips
 * after one another (the fleet's no-change tick, docs/benchmarks.md); a lane larger than this is
 * applied alone, as every lane was before.
 */
export const COMMIT_BATCH_ENTRIES = 10_000;

/**
 * The lanes' commits, in their order, a batch of lanes in one apply (all or nothing, as each lane's
 * own). A batch whose apply fails is applied again lane by lane, so that the lanes committed when a
 * lane's commit fails are the lanes before it, as one apply a lane leaves them; the first failure
 * is thrown.
 */
export async function commitLanes(store: KvStore, inputs: readonly LaneCommitInput[]): Promise<void> {
  for (const batch of batchesOf(inputs.map((i) => stateOps(laneChanges(i))))) {
    try {
      await applyOps(store, batch.flat());
    } catch (err) {
      if (batch.length === 1) throw err;
      for (const ops of batch) await applyOps(store, ops);
    }
  }
}

/** Consecutive lanes' changes, grouped up to COMMIT_BATCH_ENTRIES entries a group (a larger lane alone). */
function batchesOf(lanes: ReadonlyArray<ReturnType<typeof stateOps>>): Array<Array<ReturnType<typeof stateOps>>> {
  const batches: Array<Array<ReturnType<typeof stateOps>>> = [];
  let size = Infinity;
  for (const ops of lanes) {
    const n = ops.reduce((sum, op) => sum + op.set.length + op.delete.length, 0);
    if (size + n > COMMIT_BATCH_ENTRIES) {
      batches.push([]);
      size = 0;
    }
    batches.at(-1)!.push(ops);
    size += n;
  }
  return batches;
}
