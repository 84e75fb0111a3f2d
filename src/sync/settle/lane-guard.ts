// Step "guard" of a lane (docs/design.md): once its feed has been read and the remote listings the
// lane no longer has (or that its records mark gone) are planned for deletion (plan.ts planDeletes,
// called by the run), a full pull's absences are confirmed with the source (confirm-absent.ts), then
// the delete guards decide which may go now (guards.ts). It decides and changes nothing it is
// given: absences that could not be confirmed come back as `notWhole`, which the run writes into
// the feed side. A lane deletes only its own listings: a copy another lane of the
// chatbot wrote is left alone (ownedElsewhere), whatever this feed says. A routed lane whose where
// selected no record of a feed that yielded listings is not an empty feed: its deletes go within
// deletes.maxFraction / maxCount (docs/configuration.md, feeds[].chatbots).
import type { DeletesConfig } from '../../config/schema.js';
import type { AbsenceResult } from './confirm-absent.js';
import { evaluateGuards, type GuardDecision } from './guards.js';
import type { RuleDiff } from './rule-change.js';
import type { DeleteDecision, DesiredSide, PlannedDelete, RemoteSide } from '../model/plan-types.js';

export interface LaneGuardInput {
  remote: RemoteSide;
  desired: Pick<DesiredSide, 'mode' | 'complete'> & { readError?: string };
  /** the deletes planned of what the feed no longer has or marks gone (plan.ts planDeletes) */
  planned: DeleteDecision;
  /** extra copies of keys the feed holds, found while planning (plan.ts, planListing) */
  duplicateDeletes: readonly PlannedDelete[];
  deletes: Pick<DeletesConfig, 'maxFraction' | 'maxCount' | 'graceHours'>;
  force: boolean;
  now: Date;
  missingSince: ReadonlyMap<string, string>;
  /**
   * valid listings the feed yielded for any of its lanes: a routed lane's own may be none (no record
   * matched its where) while the feed is not empty; the empty-feed guard looks at the feed's
   */
  feedValid: number;
  /** why the run is rejected (rejection.ts): every delete is held, no absence is asked about */
  rejected?: string;
  /**
   * why the run is rejected, judged once the absences are confirmed (the records the source still
   * has, read again, count); `complete`: whether the read is whole, absences confirmed
   */
  judge?: (complete: boolean) => string | undefined;
  /** asks the source whether the absent keys are really gone (a full pull read whole, writes not stopped); none: absence suffices */
  confirm?: (deletes: readonly PlannedDelete[]) => Promise<AbsenceResult>;
  /**
   * a read of named records, whose chatbot was asked about their keys alone (FeedContext.ask names:
   * a run of pushed events): the keys it may delete (those this lane wrote, by its stored
   * fingerprints; a listing it never wrote is left alone, whatever the source says), and the reasons
   * that wait out deletes.graceHours besides an absence ('removed')
   */
  askedAlone?: { wrote: { has(key: string): boolean }; graceFor: ReadonlySet<string> };
  /** the display rules changed since the lane's last run applied them: their removals are guarded (rule-change.ts) */
  ruleChange?: readonly RuleDiff[];
}

export interface LaneGuardResult {
  rest: DeleteDecision;
  /** a read of named records (askedAlone): deletes of listings this lane never wrote, not made */
  leftAlone: PlannedDelete[];
  absences: AbsenceResult;
  guard: GuardDecision;
  /** why the run is rejected (rejection.ts), if it is */
  rejected?: string;
  /** the absences could not be confirmed (AbsenceResult.problem): the read is not whole, for this reason */
  notWhole?: string;
}

/**
 * The deletes held for feeds of the chatbot with no state (plan.ts), and those a read of named
 * records leaves alone: of keys this lane never wrote (`wrote`), held or not.
 */
function apart(planned: DeleteDecision, wrote: { has(key: string): boolean } | undefined) {
  const held = planned.unsynced;
  const mine = (d: PlannedDelete) => !wrote || wrote.has(d.key);
  const deletes = held?.deletes.filter(mine) ?? [];
  const leftAlone = wrote ? [...planned.deletes, ...(held?.deletes ?? [])].filter((d) => !mine(d)) : [];
  return { leftAlone, ...(held && deletes.length && { unsynced: { writers: held.writers, deletes } }) };
}

export async function guardLane(input: LaneGuardInput): Promise<LaneGuardResult> {
  const { remote, desired } = input;
  const wrote = input.askedAlone?.wrote;
  const rest = wrote
    ? { ...input.planned, deletes: input.planned.deletes.filter((d) => wrote.has(d.key)) }
    : input.planned;
  const { unsynced, leftAlone } = apart(input.planned, wrote);
  const absences: AbsenceResult = input.confirm
    ? await input.confirm(rest.deletes)
    : { deletes: rest.deletes, asked: 0 };
  const notWhole = absences.problem;
  const complete = desired.complete && notWhole === undefined;
  const readError = notWhole ?? desired.readError;
  const rejected = input.rejected ?? input.judge?.(complete);
  const guard = evaluateGuards({
    plan: { deletes: [...input.duplicateDeletes, ...absences.deletes] },
    deletes: input.deletes,
    remote: {
      count: remote.count,
      complete: remote.complete,
      ...(remote.problem !== undefined && { problem: remote.problem }),
    },
    feed: {
      complete,
      ...(readError !== undefined && { readError }),
      mode: desired.mode,
      valid: input.feedValid,
      ...(rejected !== undefined && { rejected }),
    },
    force: input.force,
    now: input.now,
    missingSince: input.missingSince,
    ...(input.askedAlone && { graceFor: input.askedAlone.graceFor }),
    ...(input.ruleChange?.length && { ruleChange: input.ruleChange }),
    ...(unsynced && { unsynced }),
  });
  return {
    rest,
    leftAlone,
    absences,
    guard,
    ...(rejected !== undefined && { rejected }),
    ...(notWhole !== undefined && { notWhole }),
  };
}
