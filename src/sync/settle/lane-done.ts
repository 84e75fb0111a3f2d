// Which lanes of a queue job are done (docs/contracts.md, "A rerun of a job"): a lane that ended ok
// in a job's run records the job's id in the same atomic apply as the rest of its commit
// (lane-commit.ts), so the record exists exactly when the lane's state does. A later attempt of the
// same job (another worker's, after a crash or a hand-back; a retry of the lanes that failed) finds
// the lanes done and leaves them out: it pages and writes only the others, and reads the source once
// for them. One entry per lane, overwritten by its next job: bounded by the config's lanes.
import type { KvStore, StateChange } from '../../state/kv-store.js';
import type { ExecutionResult } from '../model/execution.js';
import type { SyncOutcome } from '../model/outcome.js';
import type { LaneCommitInput } from './lane-commit.js';

/** lane → the job that last committed it ok, JSON (LaneDone) */
export const LANE_DONE_NAMESPACE = 'lane-done';

/** What a lane's ok commit in a job records: the job, when, and what the lane wrote. */
export interface LaneDone {
  job: string;
  /** ISO time of the commit */
  at: string;
  created: number;
  updated: number;
  deleted: number;
}

/** The record of a lane's ok commit in a job, as a change of that commit. */
export function laneDoneChange(lane: string, done: LaneDone): StateChange {
  return { ns: LANE_DONE_NAMESPACE, set: [[lane, JSON.stringify(done)]] };
}

/**
 * A lane's commit, with the record that its job is done with it when the run is a job's and the lane
 * ended ok (a lane that failed, was held by a guard or wrote in part is run again by the next attempt).
 * A dry run's commit stores nothing (run/write-side.ts), this record with the rest.
 */
export function doneIn(
  run: { jobId?: string },
  input: LaneCommitInput,
  outcome: SyncOutcome,
  exec: Pick<ExecutionResult, 'created' | 'updated' | 'deleted'>,
): LaneCommitInput {
  if (run.jobId === undefined || outcome !== 'ok') return input;
  const done = { job: run.jobId, at: new Date().toISOString(), ...pick(exec) };
  return { ...input, extra: [...(input.extra ?? []), laneDoneChange(input.id, done)] };
}

const pick = ({ created, updated, deleted }: Pick<ExecutionResult, 'created' | 'updated' | 'deleted'>) => ({
  created,
  updated,
  deleted,
});

/** The lanes (by id) that this job already committed ok, with what each recorded. */
export async function lanesDoneBy(
  store: KvStore,
  job: string,
  lanes: readonly string[],
): Promise<Map<string, LaneDone>> {
  const stored = await store.getAll(LANE_DONE_NAMESPACE);
  const done = new Map<string, LaneDone>();
  for (const lane of lanes) {
    const record = parse(stored.get(lane));
    if (record?.job === job) done.set(lane, record);
  }
  return done;
}

function parse(text: string | undefined): LaneDone | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as Partial<LaneDone>;
    if (typeof v.job !== 'string' || typeof v.at !== 'string') return undefined;
    return { job: v.job, at: v.at, created: v.created ?? 0, updated: v.updated ?? 0, deleted: v.deleted ?? 0 };
  } catch {
    return undefined; // (not JSON: as none recorded)
  }
}
