// A whole feed planned and executed in memory, from the steps the sync streams (plan.ts's
// planListing and planDeletes, execute.ts's executor): the unit tests state a plan's rules on a
// handful of listings at once. The sync itself never holds a plan whole (lane-plan.ts).
import {
  createExecutor,
  deleteJobs,
  writeJobs,
  type ExecuteDeps,
  type ExecutionResult,
} from '../../../src/sync/write/execute.js';
import { planDeletes, planListing } from '../../../src/sync/plan/plan.js';
import type {
  DesiredSide,
  DuplicateGroup,
  KeyBy,
  PlannedCreate,
  PlannedDelete,
  PlannedUpdate,
  PlanOptions,
  RemoteSide,
} from '../../../src/sync/model/plan-types.js';

export interface SyncPlan {
  keyBy: KeyBy;
  creates: PlannedCreate[];
  updates: PlannedUpdate[];
  deletes: PlannedDelete[];
  unchanged: number;
  recordFingerprints: Array<[string, string]>;
  duplicates: DuplicateGroup[];
  protectedKeys: string[];
  otherFeeds: number;
}

export function planSync(desired: DesiredSide, remote: RemoteSide, options: PlanOptions): SyncPlan {
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
  const duplicateDeletes: PlannedDelete[] = [];
  for (const entry of desired.listings.values()) {
    const d = planListing(entry, remote.byKey.get(entry.key), options);
    if (d.create) plan.creates.push(d.create);
    else if (d.update) plan.updates.push(d.update);
    else plan.unchanged++;
    if (d.recordFingerprint) plan.recordFingerprints.push([entry.key, d.recordFingerprint]);
    if (d.duplicates) plan.duplicates.push(d.duplicates);
    duplicateDeletes.push(...d.duplicateDeletes);
  }
  const rest = planDeletes(remote, desired, options);
  plan.deletes = [...duplicateDeletes, ...rest.deletes];
  plan.protectedKeys = rest.protectedKeys;
  plan.otherFeeds = rest.otherFeeds;
  return plan;
}

/** Writes first, then the delete batches, as a lane's run sends them. */
export async function executePlan(
  plan: { creates: PlannedCreate[]; updates: PlannedUpdate[]; deletes: PlannedDelete[] },
  deps: ExecuteDeps,
): Promise<ExecutionResult> {
  const executor = createExecutor(deps);
  await executor.run(writeJobs([...plan.creates, ...plan.updates]));
  await executor.run(deleteJobs(plan.deletes, deps.batchSize));
  return executor.result;
}
