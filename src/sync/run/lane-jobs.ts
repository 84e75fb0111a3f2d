// A lane's planner as the read drives it (plan/lane-plan.ts decides; this composes): each decision
// to create or update made into its write job, or, in a dry run, into a line of the plan view and
// the change log's entry of what the run would write. Nothing to write comes to nothing.
import type { ChangeSink } from '../model/changes.js';
import { createChange, updateChange } from '../model/changes.js';
import type { Job } from '../model/execution.js';
import type { PlanDecision, PlannerSteps } from '../model/lane-planner.js';
import type { PlanView } from '../model/outcome.js';
import type { LanePlanner } from '../plan/lane-plan.js';
import { writeJob } from '../write/execute.js';

/** A lane's planner whose answers are write jobs; `view`: what a dry run would write. */
export interface LaneJobs extends Omit<LanePlanner, keyof PlannerSteps<PlanDecision>>, PlannerSteps<Job> {
  view: PlanView;
}

export function laneJobs(planner: LanePlanner, opts: { dryRun: boolean; changes?: ChangeSink }): LaneJobs {
  const view: PlanView = { creates: [], updates: [], deletes: [] };
  const jobOf = (d: PlanDecision | undefined): Job | undefined => {
    if (d === undefined || d.kind === 'unchanged') return undefined;
    if (!opts.dryRun) return writeJob(d.kind === 'create' ? d.create : d.update);
    if (d.kind === 'create') {
      view.creates.push(d.create.key);
      opts.changes?.(createChange(d.create));
    } else {
      const { key, reason, changes } = d.update;
      view.updates.push({ key, reason, changes });
      opts.changes?.(updateChange(d.update));
    }
    return undefined;
  };
  function* jobsOf(decisions: Generator<PlanDecision>): Generator<Job> {
    for (const d of decisions) {
      const job = jobOf(d);
      if (job) yield job;
    }
  }
  return {
    ...planner,
    view,
    take: (item, map) => jobOf(planner.take(item, map)),
    push: (entry) => jobOf(planner.push(entry)),
    drain: () => jobsOf(planner.drain()),
    held: () => jobsOf(planner.held()),
  };
}
