// A dry run's executor: the same interface as execute.ts's, taking the same jobs from the same pool,
// but it sends nothing. Each job is recorded instead: in the plan view (what would be created,
// updated and deleted), in the change log (the entries a real run would make, in the words of a
// planned change), and in the result, counted as a real run counts what it wrote, so the lane
// settles through the one tail (run/lane-settle.ts) and reports what the real run would.
import type { ChangeSink } from '../model/changes.js';
import { createChange, deleteChange, updateChange } from '../model/changes.js';
import type { Executor, Job } from '../model/execution.js';
import type { PlannedDelete } from '../model/plan-types.js';
import { stoppedOutcome, type PlanView } from '../model/outcome.js';
import { emptyResult, laneJobsOf } from './execute.js';
import { runPool } from './pool.js';

export interface RecordingDeps {
  /** told of each write the run would make (the change log) */
  changes?: ChangeSink;
  /** a run stopped by it ends 'aborted', as a real run does (settle) */
  signal?: AbortSignal;
}

/** An executor that records; `view`: what it was given to send. */
export interface RecordingExecutor extends Executor {
  view: PlanView;
}

export function createRecordingExecutor(deps: RecordingDeps): RecordingExecutor {
  const result = emptyResult();
  const view: PlanView = { creates: [], updates: [], deletes: [] };
  const record = (job: Job): void => {
    if (job.kind === 'create') {
      result.created++;
      view.creates.push(job.create.key);
      deps.changes?.(createChange(job.create));
    } else if (job.kind === 'update') {
      const { key, reason, changes } = job.update;
      result.updated++;
      view.updates.push({ key, reason, changes });
      deps.changes?.(updateChange(job.update));
    } else for (const d of job.batch) deleted(d, job.keyType);
  };
  const deleted = (d: PlannedDelete, keyType: string): void => {
    view.deletes.push({ key: d.key, reason: d.reason, keyType, deleteKey: d.deleteKey });
    deps.changes?.(deleteChange(d));
    if (d.reason === 'duplicate') result.duplicatesRemoved++;
    else {
      result.deleted++;
      result.deletedKeys.push(d.key);
      result.deletedByReason[d.reason] = (result.deletedByReason[d.reason] ?? 0) + 1;
    }
  };
  const executor: RecordingExecutor = {
    result,
    view,
    runOne: async (job) => record(job),
    settle() {
      if (deps.signal?.aborted && !result.stopped) {
        result.stopped = stoppedOutcome(deps.signal.reason);
        result.stopReason = 'stopped by a signal: nothing was sent (a dry run)';
      }
    },
    async run(jobs) {
      await runPool(laneJobsOf(jobs, executor), { concurrency: 1, ...(deps.signal && { signal: deps.signal }) });
      executor.settle();
    },
  };
  return executor;
}
