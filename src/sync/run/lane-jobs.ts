// A lane's planner as the read drives it (plan/lane-plan.ts decides; this composes): each decision
// to create or update made into its write job, for the lane's executor (a dry run's records it:
// write/record.ts). Nothing to write comes to nothing.
import type { Job } from '../model/execution.js';
import type { PlanDecision, PlannerSteps } from '../model/lane-planner.js';
import type { LanePlanner } from '../plan/lane-plan.js';
import { writeJob } from '../write/execute.js';

/** A lane's planner whose answers are write jobs. */
export type LaneJobs = Omit<LanePlanner, keyof PlannerSteps<PlanDecision>> & PlannerSteps<Job>;

export function laneJobs(planner: LanePlanner): LaneJobs {
  const jobOf = (d: PlanDecision | undefined): Job | undefined =>
    d === undefined || d.kind === 'unchanged' ? undefined : writeJob(d.kind === 'create' ? d.create : d.update);
  function* jobsOf(decisions: Generator<PlanDecision>): Generator<Job> {
    for (const d of decisions) {
      const job = jobOf(d);
      if (job) yield job;
    }
  }
  return {
    ...planner,
    take: (item, map) => jobOf(planner.take(item, map)),
    push: (entry) => jobOf(planner.push(entry)),
    drain: () => jobsOf(planner.drain()),
    held: () => jobsOf(planner.held()),
  };
}
