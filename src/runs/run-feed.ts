// One feed sync as the commands and the worker run it: the sync itself (sync/), with its changes
// recorded in the change log, then, after a real run, the opt-in chat check and the alert rules.
// Same arguments as syncFeed plus what those steps need; returns the report with its run id.
import type { LoadedConfig } from '../config/schema.js';
import type { FeedConfig } from '../config/schema.js';
import { alertAfterRun, type RunObservation } from '../alerts/index.js';
import { causeMessage } from '../errors.js';
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
  const recorder =
    ctx.changeLog &&
    createChangeRecorder(
      ctx.changeLog,
      { runId, ...(ctx.job && { jobId: ctx.job.jobId }), feed: feed.name, chatbot: feed.chatbot, dryRun: Boolean(opts.dryRun) },
      { maxPerRun: ctx.config.config.changeLog.maxPerRun, logger: deps.logger },
    );
  const alert = (observation: RunObservation) =>
    opts.dryRun
      ? undefined
      : alertAfterRun(deps.store, ctx.config.config.alerts, { feed: feed.name, chatbot: feed.chatbot }, observation, deps.logger).catch((err: Error) =>
          deps.logger.warn({ err: err.message, feed: feed.name }, 'alert rules could not be checked'),
        );
  let report: SyncReport;
  try {
    report = await syncFeed(feed, recorder ? { ...deps, changes: recorder.sink } : deps, opts);
  } catch (err) {
    // a run that could not even report (authentication refused, config the feed cannot use) still counts as failed
    const at = new Date().toISOString();
    await alert({ runId, at, outcome: 'error', message: causeMessage(err), records: 0, valid: 0, rejected: 0, unmapped: [] });
    throw err;
  }
  await recorder?.finish(runEntryOf(report));
  await alert(observationOf(report, runId));
  return { ...report, runId };
}

export function observationOf(r: SyncReport, runId: string): RunObservation {
  return {
    runId,
    at: r.finishedAt,
    outcome: r.outcome,
    ...(r.message && { message: r.message }),
    records: r.counts.feedRecords,
    valid: r.counts.valid,
    rejected: r.counts.rejected,
    unmapped: (r.unmapped ?? []).map((u) => `${u.field}: ${JSON.stringify(u.value)}`),
  };
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
