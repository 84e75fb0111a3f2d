// One feed sync as the commands and the worker run it: the sync itself (sync/), with its changes
// recorded in the change log, then, after a real run, the opt-in chat check and the alert rules.
// Same arguments as syncFeed plus what those steps need; returns the report with its run id.
import type { LoadedConfig } from '../config/schema.js';
import type { FeedConfig } from '../config/schema.js';
import { alertAfterRun, type RunObservation } from '../alerts/index.js';
import { causeMessage } from '../errors.js';
import { mediaCounts } from '../media/report.js';
import { chatCheck, type ChatCheckResult } from '../smoke/chat-check.js';
import type { ListingChange } from '../sync/changes.js';
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

export type FeedRunReport = SyncReport & {
  runId: string;
  chat?: ChatCheckResult;
  /** what the change log kept of the run: changes recorded and dropped (maxPerRun, maxBytesPerRun), whole listings kept for undo */
  changeLog?: Pick<RunEntry, 'recorded' | 'dropped' | 'wholes'>;
};

/** The report's words when the change log did not keep the whole run (undo then cannot restore all of it). */
export function changeLogTrimmed(entry: Pick<RunEntry, 'dropped' | 'wholes'>): string | undefined {
  const parts = [
    entry.dropped ? `${entry.dropped} change(s) past changeLog.maxPerRun/maxBytesPerRun not kept` : '',
    entry.wholes?.notKept ? `${entry.wholes.notKept} listing(s) not kept whole for undo (changeLog.maxWholeBytesPerRun, or not readable)` : '',
  ].filter(Boolean);
  return parts.length ? `change log trimmed: ${parts.join('; ')}` : undefined;
}

export async function runFeed(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions, ctx: RunFeedContext): Promise<FeedRunReport> {
  const runId = newRunId(ctx.job);
  const recorder =
    ctx.changeLog &&
    createChangeRecorder(
      ctx.changeLog,
      { runId, ...(ctx.job && { jobId: ctx.job.jobId }), feed: feed.name, chatbot: feed.chatbot, dryRun: Boolean(opts.dryRun) },
      { maxPerRun: ctx.config.config.changeLog.maxPerRun, maxBytesPerRun: ctx.config.config.changeLog.maxBytesPerRun, logger: deps.logger },
    );
  const alert = (observation: RunObservation) =>
    opts.dryRun
      ? undefined
      : alertAfterRun(deps.store, ctx.config.config.alerts, { feed: feed.name, chatbot: feed.chatbot }, observation, deps.logger).catch((err: Error) =>
          deps.logger.warn({ err: err.message, feed: feed.name }, 'alert rules could not be checked'),
        );
  // what the chat check asks about: the first listings this run created or changed (bounded)
  const recent: ListingChange[] = [];
  const sink = (c: ListingChange) => {
    if ((c.op === 'create' || c.op === 'update') && recent.length < RECENT_KEPT) recent.push(c);
    recorder?.sink(c);
  };
  let report: SyncReport;
  try {
    report = await syncFeed(feed, { ...deps, changes: sink, maxWholeBytes: ctx.config.config.changeLog.maxWholeBytesPerRun }, opts);
  } catch (err) {
    // a run that could not even report (authentication refused, config the feed cannot use) still counts as failed
    const at = new Date().toISOString();
    await alert({ runId, at, outcome: 'error', message: causeMessage(err), records: 0, valid: 0, rejected: 0, unmapped: [] });
    throw err;
  }
  const chat = opts.dryRun ? undefined : await runChatCheck(feed, deps, ctx, report, recent);
  if (chat) report = { ...report, summary: `${report.summary}; chat check: answerable ${chat.answerable}/${chat.asked}${chat.missing.length ? ` (not answered: ${chat.missing.join(', ')})` : ''}` };
  const chatSummary = chat && { asked: chat.asked, answerable: chat.answerable, missing: chat.missing };
  const entry = await recorder?.finish({ ...runEntryOf(report), ...(chatSummary && { chat: chatSummary }) });
  // what the change log could not keep (Redis away at the end of the run too, a byte budget) is said in the report
  const unrecorded = recorder?.unrecorded();
  if (unrecorded) report = { ...report, summary: `${report.summary}; ${unrecorded}` };
  const trimmed = entry && changeLogTrimmed(entry);
  if (trimmed) report = { ...report, summary: `${report.summary}; ${trimmed}` };
  await alert({ ...observationOf(report, runId), ...(chatSummary && { chat: chatSummary }) });
  return { ...report, runId, ...(chat && { chat }), ...(entry && { changeLog: { recorded: entry.recorded, dropped: entry.dropped, ...(entry.wholes && { wholes: entry.wholes }) } }) };
}

const RECENT_KEPT = 50;

async function runChatCheck(feed: FeedConfig, deps: SyncDeps, ctx: RunFeedContext, report: SyncReport, recent: ListingChange[]): Promise<ChatCheckResult | undefined> {
  const { chatCheck: cfg, chatbots } = ctx.config.config;
  if (!cfg.enabled || (report.outcome !== 'ok' && report.outcome !== 'partial')) return undefined;
  const sessionId = chatbots.find((c) => c.serialNumber === feed.chatbot)?.smoke?.sessionId;
  if (sessionId === undefined) {
    deps.logger.warn({ feed: feed.name, chatbot: feed.chatbot }, `chat check skipped: chatbot ${feed.chatbot} has no chatbots[].smoke.sessionId in the config`);
    return undefined;
  }
  const result = await chatCheck(deps.api, recent, { sessionId, listings: cfg.listings, signal: deps.signal });
  if (result.asked === 0) return undefined;
  for (const r of result.results.filter((x) => !x.ok)) deps.logger.warn({ feed: feed.name, key: r.key, question: r.question }, `chat check: the chatbot cannot answer about ${r.key}: ${r.reason}`);
  return result;
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
    mode: r.source.mode,
    complete: r.source.complete,
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
    counts: { ...r.counts, ...(r.media && !r.dryRun && mediaCounts(r.media)) },
  };
}
