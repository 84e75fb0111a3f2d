// One feed sync as the commands and the worker run it: the sync itself (sync/), with its changes
// recorded in the change log, then, after a real run, the opt-in chat check and the alert rules.
// Same arguments as syncFeed plus what those steps need; returns the report with its run id.
import type { LoadedConfig } from '../config/schema.js';
import type { FeedConfig } from '../config/schema.js';
import type { ChangeLog, RunEntry } from '../history/change-log.js';
import { createChangeRecorder, newRunId } from '../history/recorder.js';
import { syncFeed, type SyncDeps, type SyncOptions, type SyncReport } from '../sync/index.js';

export interface RunFeedContext {
  config: LoadedConfig;
  /** where the run's changes go; none: the sync alone */
  changeLog?: ChangeLog;
  /** the queue job, when the worker runs it */
  job?: { jobId: string; attempt: number };
}

export type FeedRunReport = SyncReport & { runId: string };

export async function runFeed(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions, ctx: RunFeedContext): Promise<FeedRunReport> {
  const runId = newRunId(ctx.job);
  if (!ctx.changeLog) return { ...(await syncFeed(feed, deps, opts)), runId };
  const recorder = createChangeRecorder(
    ctx.changeLog,
    { runId, ...(ctx.job && { jobId: ctx.job.jobId }), feed: feed.name, chatbot: feed.chatbot, dryRun: Boolean(opts.dryRun) },
    { maxPerRun: ctx.config.config.changeLog.maxPerRun, logger: deps.logger },
  );
  const report = await syncFeed(feed, { ...deps, changes: recorder.sink }, opts);
  await recorder.finish(runEntryOf(report));
  return { ...report, runId };
}

export function runEntryOf(r: SyncReport): Omit<RunEntry, 'runId' | 'jobId' | 'feed' | 'chatbot' | 'dryRun' | 'recorded' | 'dropped'> {
  return {
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    durationMs: r.durationMs,
    outcome: r.outcome,
    summary: r.summary,
    ...(r.message && { message: r.message }),
    counts: { ...r.counts },
  };
}
