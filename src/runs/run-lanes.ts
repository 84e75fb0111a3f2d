// One run as the commands and the worker run it: the sync itself (sync/, runSync) of a set of
// lanes (a feed into a chatbot), each lane's changes recorded in the change log, then, after a
// real run, each lane's opt-in chat check and alert rules. The one home of "run these feeds" for
// `feedsync sync` (runs/foreground.ts) and the worker's listing-sync job (jobs/listing-sync.ts);
// the caller holds the lock of every chatbot of the lanes. Returns each lane's report with its run id.
import type { LoadedConfig } from '../config/schema.js';
import { alertAfterRuns, type RunObservation } from '../alerts/index.js';
import { causeMessage } from '../errors.js';
import { mediaCounts } from '../media/report.js';
import { chatCheck, type ChatCheckResult } from '../smoke/chat-check.js';
import {
  displayCounts,
  type Lane,
  type ListingChange,
  runSync,
  stoppedOutcome,
  type SyncDeps,
  type SyncOptions,
  type SyncReport,
  type SyncTestHooks,
} from '../sync/index.js';
import type { ChangeLog, RunEntry } from '../change-log/change-log.js';
import { createChangeRecorder, finishRuns, newRunId } from '../change-log/recorder.js';
import { doneBefore, doneBeforeReport, inOrder, type DoneBefore } from './lanes-done.js';

export interface RunContext {
  config: LoadedConfig;
  /** where the run's changes go; none: the sync alone */
  changeLog?: ChangeLog;
  /** the queue job, when the worker runs it */
  job?: { jobId: string; attempt: number };
}

export type FeedRunReport = SyncReport & {
  runId: string;
  /** the lane was committed ok by an earlier attempt of the same job: this one left it out (lanes-done.ts) */
  doneBefore?: DoneBefore;
  chat?: ChatCheckResult;
  /** what the change log kept of the run: changes recorded and dropped (maxPerRun, maxBytesPerRun), whole listings kept for undo */
  changeLog?: Pick<RunEntry, 'recorded' | 'dropped' | 'wholes'>;
};

/** The report's words when the change log did not keep the whole run (undo then cannot restore all of it). */
function changeLogTrimmed(entry: Pick<RunEntry, 'dropped' | 'wholes'>): string | undefined {
  const parts = [
    entry.dropped ? `${entry.dropped} change(s) past changeLog.maxPerRun/maxBytesPerRun not kept` : '',
    entry.wholes?.notKept
      ? `${entry.wholes.notKept} listing(s) not kept whole for undo (changeLog.maxWholeBytesPerRun, or not readable)`
      : '',
  ].filter(Boolean);
  return parts.length ? `change log trimmed: ${parts.join('; ')}` : undefined;
}

/** What one lane's run keeps beside the sync: its run id, change recorder and the changes the chat check asks about. */
interface LaneExtras {
  runId: string;
  recorder: ReturnType<typeof createChangeRecorder> | undefined;
  recent: ListingChange[];
  sink: (c: ListingChange) => void;
}

export async function runLanes(
  lanes: readonly Lane[],
  deps: Omit<SyncDeps, 'changes'>,
  opts: SyncOptions,
  ctx: RunContext,
  /** tests and benches only (runSync's) */
  hooks: SyncTestHooks = {},
): Promise<FeedRunReport[]> {
  // a rerun of a job (another worker's after a crash, a retry): the lanes it already committed ok are left out
  const done = await doneBefore(lanes, deps.store, opts, ctx.job);
  const todo = lanes.filter((l) => !done.has(l));
  const reports = todo.length ? await runEach(todo, deps, opts, ctx, hooks) : [];
  return inOrder(lanes, todo, reports, done, (lane, d) =>
    doneBeforeReport(lane, d, { stateLocation: deps.store.location, runId: newRunId(ctx.job) }),
  );
}

/**
 * The sync of the lanes, then each lane's chat check, change log entry and alert rules: the lanes'
 * records in one write and their alert states at once (finishRuns, alertAfterRuns), not one lane's
 * round trips after another's (a routed feed's 100 lanes, the fleet's no-change tick).
 */
async function runEach(
  lanes: readonly Lane[],
  deps: Omit<SyncDeps, 'changes'>,
  opts: SyncOptions,
  ctx: RunContext,
  hooks: SyncTestHooks,
): Promise<FeedRunReport[]> {
  const extras = new Map<Lane, LaneExtras>();
  for (const lane of lanes) extras.set(lane, laneExtras(lane, deps, opts, ctx));
  const alert = (runs: ReadonlyArray<readonly [Lane, RunObservation]>) => alertLanes(runs, deps, opts, ctx);
  let reports: SyncReport[];
  try {
    reports = await runSync(
      lanes,
      {
        ...deps,
        changes: (lane) => extras.get(lane)?.sink,
        maxWholeBytes: ctx.config.config.changeLog.maxWholeBytesPerRun,
      },
      // (each lane that ends ok records the job: a rerun of it leaves the lane out)
      { ...opts, ...(ctx.job && { jobId: ctx.job.jobId }) },
      hooks,
    );
  } catch (err) {
    // a run that could not even report (authentication refused, config the feed cannot use) still counts as
    // failed; unless its signal stopped it first: then in the word its reports would say (stoppedOutcome), so
    // a run its worker's shutdown handed back or another attempt took over is no failure here either
    const outcome = deps.signal?.aborted ? stoppedOutcome(deps.signal.reason) : 'error';
    const failed = failedObservation(outcome, causeMessage(err));
    await alert(lanes.map((lane) => [lane, { ...failed, runId: extras.get(lane)!.runId }] as const));
    throw err;
  }
  // (hooks.lanesSettledAtOnce 1: each lane's in turn, the plain rule the tests hold this to)
  const atOnce = hooks.lanesSettledAtOnce ?? Infinity;
  const out: FeedRunReport[] = [];
  for (let from = 0; from < lanes.length; from += atOnce) {
    const group = lanes
      .slice(from, from + atOnce)
      .map((lane, i) => ({ lane, x: extras.get(lane)!, report: reports[from + i]! }));
    out.push(...(await recordAndAlert(group, deps, opts, ctx, alert)));
  }
  return out;
}

/** Lanes' chat checks (one after another), then their change log records (one write) and alert rules (at once). */
async function recordAndAlert(
  group: ReadonlyArray<{ lane: Lane; x: LaneExtras; report: SyncReport }>,
  deps: Omit<SyncDeps, 'changes'>,
  opts: SyncOptions,
  ctx: RunContext,
  alert: (runs: ReadonlyArray<readonly [Lane, RunObservation]>) => Promise<void>,
): Promise<FeedRunReport[]> {
  const checked = [];
  for (const { lane, x, report } of group) {
    const chat = opts.dryRun ? undefined : await runChatCheck(lane, deps, ctx, report, x.recent);
    const chatSummary = chat && { asked: chat.asked, answerable: chat.answerable, missing: chat.missing };
    checked.push({
      lane,
      x,
      chat,
      chatSummary,
      report: chat
        ? {
            ...report,
            summary: `${report.summary}; chat check: answerable ${chat.answerable}/${chat.asked}${chat.missing.length ? ` (not answered: ${chat.missing.join(', ')})` : ''}`,
          }
        : report,
    });
  }
  const entries = ctx.changeLog
    ? await finishRuns(
        ctx.changeLog,
        checked.map(
          (c) => [c.x.recorder!, { ...runEntryOf(c.report), ...(c.chatSummary && { chat: c.chatSummary }) }] as const,
        ),
      )
    : undefined;
  const done = checked.map((c, i) => {
    let { report } = c;
    const entry = entries?.[i];
    // what the change log could not keep (Redis away at the end of the run too, a byte budget) is said in the report
    const unrecorded = c.x.recorder?.unrecorded();
    if (unrecorded) report = { ...report, summary: `${report.summary}; ${unrecorded}` };
    const trimmed = entry && changeLogTrimmed(entry);
    if (trimmed) report = { ...report, summary: `${report.summary}; ${trimmed}` };
    return { ...c, report, entry };
  });
  await alert(
    done.map(
      (c) =>
        [c.lane, { ...observationOf(c.report, c.x.runId), ...(c.chatSummary && { chat: c.chatSummary }) }] as const,
    ),
  );
  return done.map(({ report, x, chat, entry }) => ({
    ...report,
    runId: x.runId,
    ...(chat && { chat }),
    ...(entry && {
      changeLog: { recorded: entry.recorded, dropped: entry.dropped, ...(entry.wholes && { wholes: entry.wholes }) },
    }),
  }));
}

/** What the alert rules see of a run that failed (or was stopped) before it could report: its outcome, nothing read. */
function failedObservation(
  outcome: 'error' | 'failed' | ReturnType<typeof stoppedOutcome>,
  message: string,
): Omit<RunObservation, 'runId'> {
  return { at: new Date().toISOString(), outcome, message, records: 0, valid: 0, rejected: 0, unmapped: [] };
}

/**
 * The alert rules of a job's lanes when the job failed without running (queue/processor.ts
 * stalledTooOften): each sees a `failed` run under the run id the job's attempt has, as a run that
 * threw is seen (its attempts taken over before counted for none). A lane whose rules could not be
 * checked is logged.
 */
export async function alertFailedUnrun(
  lanes: readonly Lane[],
  message: string,
  deps: Pick<SyncDeps, 'store' | 'logger'>,
  ctx: RunContext & { job: { jobId: string; attempt: number } },
): Promise<void> {
  const failed = { ...failedObservation('failed', message), runId: newRunId(ctx.job) };
  await alertLanes(
    lanes.map((lane) => [lane, failed] as const),
    deps,
    {},
    ctx,
  );
}

/** The alert rules after the lanes' runs (none in a dry run); a lane whose rules could not be checked is logged. */
async function alertLanes(
  runs: ReadonlyArray<readonly [Lane, RunObservation]>,
  deps: Pick<SyncDeps, 'store' | 'logger'>,
  opts: Pick<SyncOptions, 'dryRun'>,
  ctx: RunContext,
): Promise<void> {
  if (opts.dryRun || runs.length === 0) return;
  const results = await alertAfterRuns(
    deps.store,
    ctx.config.config.alerts,
    runs.map(([lane, run]) => ({ target: { feed: lane.feed.name, chatbot: lane.chatbot, lane: lane.id }, run })),
    deps.logger,
  );
  for (const [i, r] of results.entries())
    if (r.status === 'rejected')
      deps.logger.warn(
        { err: r.reason instanceof Error ? r.reason.message : String(r.reason), feed: runs[i]![0].feed.name },
        'alert rules could not be checked',
      );
}

function laneExtras(lane: Lane, deps: Omit<SyncDeps, 'changes'>, opts: SyncOptions, ctx: RunContext): LaneExtras {
  const runId = newRunId(ctx.job);
  const recorder =
    ctx.changeLog &&
    createChangeRecorder(
      ctx.changeLog,
      {
        runId,
        ...(ctx.job && { jobId: ctx.job.jobId }),
        feed: lane.feed.name,
        chatbot: lane.chatbot,
        dryRun: Boolean(opts.dryRun),
      },
      {
        maxPerRun: ctx.config.config.changeLog.maxPerRun,
        maxBytesPerRun: ctx.config.config.changeLog.maxBytesPerRun,
        logger: deps.logger,
      },
    );
  // what the chat check asks about (pickListings): the first listings this run created or changed, as answered (bounded)
  const recent: ListingChange[] = [];
  const sink = (c: ListingChange) => {
    if ((c.op === 'create' || c.op === 'update') && recent.length < RECENT_KEPT) recent.push(c);
    recorder?.sink(c);
  };
  return { runId, recorder, recent, sink };
}

const RECENT_KEPT = 50;

async function runChatCheck(
  lane: Lane,
  deps: Omit<SyncDeps, 'changes'>,
  ctx: RunContext,
  report: SyncReport,
  recent: ListingChange[],
): Promise<ChatCheckResult | undefined> {
  const { chatCheck: cfg, chatbots } = ctx.config.config;
  if (!cfg.enabled || (report.outcome !== 'ok' && report.outcome !== 'partial')) return undefined;
  const feed = lane.feed;
  const sessionId = chatbots.find((c) => c.serialNumber === lane.chatbot)?.smoke?.sessionId;
  if (sessionId === undefined) {
    deps.logger.warn(
      { feed: feed.name, chatbot: lane.chatbot },
      `chat check skipped: chatbot ${lane.chatbot} has no chatbots[].smoke.sessionId in the config`,
    );
    return undefined;
  }
  const result = await chatCheck(deps.api, recent, { sessionId, listings: cfg.listings, signal: deps.signal });
  if (result.asked === 0) return undefined;
  for (const r of result.results.filter((x) => !x.ok))
    deps.logger.warn(
      { feed: feed.name, key: r.key, question: r.question },
      `chat check: the chatbot cannot answer about ${r.key}: ${r.reason}`,
    );
  return result;
}

function observationOf(r: SyncReport, runId: string): RunObservation {
  return {
    runId,
    at: r.finishedAt,
    outcome: r.outcome,
    ...(r.message && { message: r.message }),
    records: r.counts.feedRecords,
    valid: r.counts.valid,
    rejected: r.counts.rejected,
    unmapped: (r.unmapped ?? []).map((u) => `${u.field}: ${JSON.stringify(u.value)}`),
    // (a reconcile reads the records of changed keys only: its valid count says nothing of the feed's size,
    // and compares with no kind of run)
    ...(r.source.mode !== 'reconcile' && { mode: r.source.mode }),
    complete: r.source.complete && !r.source.reconcile,
  };
}

/** A lane's report as its change log's run entry records it (the status page and `feedsync runs` read it). */
export function runEntryOf(
  r: SyncReport,
): Omit<RunEntry, 'runId' | 'jobId' | 'feed' | 'chatbot' | 'dryRun' | 'recorded' | 'dropped'> {
  return {
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    durationMs: r.durationMs,
    outcome: r.outcome,
    summary: r.summary,
    ...(r.message && { message: r.message }),
    counts: {
      ...r.counts,
      ...(r.media && !r.dryRun && mediaCounts(r.media)),
      ...(r.display && displayCounts(r.display)),
    },
  };
}
