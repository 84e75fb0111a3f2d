// Step "guard" of a lane (docs/design.md): once its feed has been read, the remote listings the
// lane no longer has (or that its records mark gone) are planned for deletion (plan.ts), then the
// delete guards decide which may go now (guards.ts). A lane deletes only its own listings: a copy
// another lane of the chatbot wrote is left alone (ownedElsewhere), whatever this feed says.
import type { DeletesConfig } from '../config/schema.js';
import { evaluateGuards, type GuardDecision } from './guards.js';
import { planDeletes, type DeleteDecision } from './plan.js';
import type { DesiredSide, PlannedDelete, PlanOptions, RemoteSide } from './plan-types.js';

export interface LaneGuardInput {
  remote: RemoteSide;
  desired: Pick<DesiredSide, 'protectedKeys' | 'goneKeys' | 'mode' | 'complete' | 'counts'> & { listings: { has(key: string): boolean }; readError?: string };
  planOptions: PlanOptions;
  /** extra copies of keys the feed holds, found while planning (plan.ts, planListing) */
  duplicateDeletes: readonly PlannedDelete[];
  deletes: Pick<DeletesConfig, 'maxFraction' | 'maxCount' | 'graceHours'>;
  force: boolean;
  now: Date;
  missingSince: ReadonlyMap<string, string>;
}

export interface LaneGuardResult {
  rest: DeleteDecision;
  guard: GuardDecision;
}

export function guardLane(input: LaneGuardInput): LaneGuardResult {
  const { remote, desired } = input;
  const rest = planDeletes(remote, desired, input.planOptions);
  const guard = evaluateGuards({
    plan: { deletes: [...input.duplicateDeletes, ...rest.deletes] },
    deletes: input.deletes,
    remote: { count: remote.count, complete: remote.complete, ...(remote.problem !== undefined && { problem: remote.problem }) },
    feed: { complete: desired.complete, ...(desired.readError !== undefined && { readError: desired.readError }), mode: desired.mode, valid: desired.counts.valid },
    force: input.force,
    now: input.now,
    missingSince: input.missingSince,
  });
  return { rest, guard };
}
