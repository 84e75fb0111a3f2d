// A rerun of a queue job runs only the lanes the job has not finished (docs/contracts.md, "A rerun
// of a job"). Every lane that ends ok in a job's run records the job in its commit (sync's
// settle/lane-done.ts); an attempt of the same job taken over after a crash, handed back by a
// worker's shutdown, or retried after a failure, finds those lanes done and leaves them out: their
// chatbots are not paged, the source is read once for the others, nothing of theirs is written
// again. Their reports say so: outcome ok, no count of this attempt (it read, compared and wrote
// nothing for them), and what the earlier attempt recorded in `doneBefore`.
import type { KvStore } from '../state/kv-store.js';
import {
  failedReport,
  lanesDoneBy,
  type Lane,
  type LaneDone,
  type SyncOptions,
  type SyncReport,
} from '../sync/index.js';

export type DoneBefore = LaneDone;

/** The lanes an earlier attempt of this job committed ok; none outside a job, and none for a dry run (it commits nothing). */
export async function doneBefore(
  lanes: readonly Lane[],
  store: KvStore,
  opts: Pick<SyncOptions, 'dryRun'>,
  job: { jobId: string } | undefined,
): Promise<Map<Lane, LaneDone>> {
  const out = new Map<Lane, LaneDone>();
  if (!job || opts.dryRun) return out;
  const done = await lanesDoneBy(
    store,
    job.jobId,
    lanes.map((l) => l.id),
  );
  for (const l of lanes) {
    const d = done.get(l.id);
    if (d) out.set(l, d);
  }
  return out;
}

/** The report of a lane this attempt left out: done by an earlier attempt of the job. */
export function doneBeforeReport(
  lane: Lane,
  done: LaneDone,
  run: { stateLocation: string; runId: string },
): SyncReport & { runId: string; doneBefore: LaneDone } {
  const base = failedReport({
    feed: lane.feed.name,
    chatbot: lane.chatbot,
    message: '',
    stateLocation: run.stateLocation,
  });
  const { message: _unused, ...rest } = base;
  return {
    ...rest,
    outcome: 'ok',
    retryable: false,
    source: { mode: 'full', complete: false },
    summary: `sync ${lane.feed.name} → ${lane.chatbot}: ${doneWords(done)}`,
    runId: run.runId,
    doneBefore: done,
  };
}

/** What an earlier attempt did of a lane, in words. */
export function doneWords(d: LaneDone): string {
  return `done by an earlier attempt of this job at ${d.at} (created ${d.created}, updated ${d.updated}, deleted ${d.deleted}); not paged, read or written again`;
}

/** The reports in the order of the job's lanes: those run (in `ran` order) and those left out. */
export function inOrder<R>(
  lanes: readonly Lane[],
  ran: readonly Lane[],
  reports: readonly R[],
  done: ReadonlyMap<Lane, LaneDone>,
  report: (lane: Lane, d: LaneDone) => R,
): R[] {
  const byLane = new Map(ran.map((l, i) => [l, reports[i]!]));
  return lanes.map((l) => byLane.get(l) ?? report(l, done.get(l)!));
}
