// `feedsync undo RUN`, as the command and the worker run it (the caller holds the chatbot's lock, the
// same one a sync takes): read the run's changes from the change log, the later runs' writes, and the
// chatbot's listings now; plan (plan-undo.ts); then, unless a dry run, write through the sync's
// executor (the api client's budget and concurrency, its retries and breaker), recording every write
// in the change log as a run of its own (with the listing before each, so an undo can be undone),
// commit the sync state as if the undone run had not happened, and raise alerts by the usual rules.
import type { CallCounter } from '../api/call-counter.js';
import type { ChatbotApi } from '../api/types.js';
import { alertAfterRun } from '../alerts/index.js';
import type { FeedConfig, LoadedConfig } from '../config/schema.js';
import { causeMessage, ConfigError } from '../errors.js';
import type { ChangeEntry, ChangeLog, RunEntry } from '../change-log/change-log.js';
import { createChangeRecorder, newRunId } from '../change-log/recorder.js';
import { fingerprintListing, keptField } from '../listing/fingerprint.js';
import type { Logger } from '../log.js';
import type { KvStore } from '../state/kv-store.js';
import {
  authFailure,
  commitChanges,
  createBeforeCapture,
  createExecutor,
  deleteJobs,
  emptyChanges,
  type ExecutionResult,
  fetchRemote,
  laneId,
  MARK_NAMESPACE,
  thrownOutcome,
  type PagedItems,
  type PlannedCreate,
  type PlannedDelete,
  type PlannedUpdate,
  writeJobs,
} from '../sync/index.js';
import { displayNow, type DisplayNow } from './display-now.js';
import { planUndo, type CurrentCopy, type UndoPlan } from './plan-undo.js';
import { redisConfigured } from '../redis/settings.js';
import { feedsyncCommand } from '../format/invocation.js';
import { nextPulls, SHOWN, summaryOf, type UndoOutcome, type UndoReport } from './report.js';

export interface UndoDeps {
  api: ChatbotApi;
  store: KvStore;
  changeLog: ChangeLog;
  config: LoadedConfig;
  logger: Logger;
  signal?: AbortSignal;
  calls?: CallCounter;
}

export interface UndoOptions {
  dryRun?: boolean;
  force?: boolean;
  /** the queue job, when a worker runs it */
  job?: { jobId: string; attempt: number };
}

/** Later runs looked at for writes to the same keys (newest first, of every feed of the chatbot). */
const LATER_RUNS = 500;

/** The run and its feed, or a ConfigError a person can act on. */
export async function findUndoTarget(
  changeLog: ChangeLog,
  config: LoadedConfig,
  runId: string,
): Promise<{ run: RunEntry; changes: ChangeEntry[]; feed: FeedConfig & { chatbot: string }; lane: string }> {
  const { run, changes } = await changeLog.run(runId, config.config.changeLog.maxPerRun);
  const kept = `${changeLog.location}; runs are kept ${config.config.changeLog.retentionDays} days (changeLog.retentionDays)`;
  if (!run)
    throw new ConfigError(
      `no run ${JSON.stringify(runId)} in the change log (${kept}): \`${feedsyncCommand()} runs\` lists the runs it has; a run past retention cannot be undone`,
    );
  if (run.dryRun) throw new ConfigError(`run ${runId} was a dry run: it wrote nothing, there is nothing to undo`);
  const feed = config.config.feeds.find((f) => f.name === run.feed);
  if (!feed)
    throw new ConfigError(
      `run ${runId} synced feed ${run.feed}, which is not in ${config.file} any more: undo needs its chatbot and keyBy`,
      config.file,
    );
  // the chatbot the run wrote into (a routed feed writes into several: the run was one of them), and
  // the name its lane's sync state goes under (sync/read/lanes.ts)
  return {
    run,
    changes,
    feed: { ...feed, chatbot: run.chatbot },
    lane: feed.chatbots ? laneId(feed.name, run.chatbot) : feed.name,
  };
}

/** What every step of one undo knows: the run undone, its feed and lane, the report's frame. */
interface Undo {
  runId: string;
  deps: UndoDeps;
  opts: UndoOptions;
  config: LoadedConfig['config'];
  run: RunEntry;
  changes: ChangeEntry[];
  feed: FeedConfig & { chatbot: string };
  /** the name the lane's sync state goes under */
  lane: string;
  logger: Logger;
  base: Pick<UndoReport, 'runId' | 'undoOf' | 'feed' | 'chatbot' | 'dryRun' | 'force'>;
  /** the feed pulls incrementally: the lane's stored mark, where the next incremental pull starts */
  incremental?: { mark: string | undefined };
  startedAt: Date;
  t0: number;
  callsBefore: number;
}

/** What an undo ends with, for its report. */
interface Ending {
  outcome: UndoOutcome;
  message?: string;
  plan?: UndoPlan;
  exec?: ExecutionResult;
}

export async function undoRun(runId: string, deps: UndoDeps, opts: UndoOptions = {}): Promise<UndoReport> {
  const u = await startUndo(runId, deps, opts);
  const paging = await pageChatbot(u);
  if ('failed' in paging) return alerted(u, finish(u, paging.failed));
  const { current, paged } = paging;
  // what the feed's display rules let be shown now, as the key's last write (this run's or a later one's) says
  const display = displayNow(u.feed.displayRules);
  for (const e of u.changes) if (!e.dryRun) display.note(e.change);
  const plan = planUndo({
    run: u.run,
    changes: u.changes,
    laterWrites: await laterWrites(deps.changeLog, u.run, u.config.changeLog.maxPerRun, display),
    current,
    force: Boolean(opts.force),
    shown: display.shown,
  });
  const trimmed = plan.cannot.length > 0;
  const trimmedMessage = `the change log did not keep all of run ${runId}: ${plan.cannot.length} part(s) cannot be undone (listed below)`;
  if (opts.dryRun) {
    return finish(u, {
      outcome: trimmed && !opts.force ? 'guard' : 'ok',
      plan,
      ...(trimmed && {
        message: opts.force
          ? `${trimmedMessage}; with --force the rest would be undone`
          : `${trimmedMessage}; without --force nothing would be done`,
      }),
    });
  }
  if (trimmed && !opts.force)
    return alerted(
      u,
      finish(u, { outcome: 'guard', plan, message: `${trimmedMessage}; nothing was done (--force undoes the rest)` }),
    );
  return alerted(u, await writeUndo(u, plan, paged, trimmed ? trimmedMessage : undefined));
}

/** Step find: the run, its feed and lane, and the report's frame. */
async function startUndo(runId: string, deps: UndoDeps, opts: UndoOptions): Promise<Undo> {
  const startedAt = new Date();
  const t0 = performance.now();
  const callsBefore = deps.calls?.snapshot().total ?? 0;
  const { run, changes, feed, lane } = await findUndoTarget(deps.changeLog, deps.config, runId);
  const base = {
    runId: newRunId(opts.job),
    undoOf: runId,
    feed: feed.name,
    chatbot: feed.chatbot,
    dryRun: Boolean(opts.dryRun),
    force: Boolean(opts.force),
  };
  const logger = deps.logger.child({ feed: feed.name, chatbot: feed.chatbot, undo: runId });
  const incremental =
    feed.source.kind === 'reso' && feed.source.incremental
      ? { mark: markTime(await deps.store.get(MARK_NAMESPACE, lane)) }
      : undefined;
  return {
    runId,
    deps,
    opts,
    config: deps.config.config,
    run,
    changes,
    feed,
    lane,
    logger,
    base,
    startedAt,
    t0,
    callsBefore,
    ...(incremental && { incremental }),
  };
}

/** The time a stored RESO mark names (`{"ts": …}`), or undefined when there is none to read. */
function markTime(mark: string | undefined): string | undefined {
  if (mark === undefined) return undefined;
  try {
    const ts: unknown = (JSON.parse(mark) as { ts?: unknown }).ts;
    return typeof ts === 'string' ? ts : undefined;
  } catch {
    return undefined; // (not JSON: no time to read)
  }
}

/**
 * Step page: what the chatbot holds now, every listed field in the kept form (nothing ignored), and
 * each listing whole (the listing before each undo write, for the change log); or why it could not be told.
 */
async function pageChatbot(
  u: Undo,
): Promise<{ current: (key: string) => CurrentCopy[]; paged: PagedItems } | { failed: Ending }> {
  const { deps, feed, config, logger } = u;
  const signal = deps.signal;
  let remote;
  try {
    remote = await fetchRemote(deps.api, {
      serialNumber: feed.chatbot,
      // (the paging's warnings: a compared store kept in memory, its temporary file failed)
      logger,
      keyBy: feed.keyBy,
      pageSize: config.api.pageSize,
      maxPages: config.api.maxPages,
      concurrency: config.api.concurrency,
      keepCompared: true,
      echoRows: 0,
      ...(signal && { signal }),
    });
  } catch (err) {
    // (the sync's rule: an undo its worker's shutdown or a lost job lock stopped says so, as a sync does)
    const outcome: UndoOutcome = thrownOutcome(err, signal);
    return {
      failed: {
        outcome,
        message: `the chatbot's listings could not be paged: ${causeMessage(err)}; nothing was written`,
      },
    };
  }
  if (!remote.complete) {
    const message = `the chatbot's listings could not be paged whole (${remote.problem ?? 'unstable paging'}): conflicts cannot be told; nothing was written`;
    return { failed: { outcome: 'unavailable', message } };
  }
  const byKey = remote.byKey;
  const current = (key: string): CurrentCopy[] =>
    (byKey.get(key) ?? []).map((c) => {
      const mls = c.compared === undefined ? undefined : keptField(c.compared, 'MLSNumber');
      return { id: c.id, kept: c.compared ?? '', ...(typeof mls === 'string' && { mlsNumber: mls }) };
    });
  return { current, paged: byKey };
}

/**
 * Step write: the plan through the sync's executor, each write recorded in the change log as a run
 * of its own (with the listing before each, so an undo can be undone), then the lane's sync state
 * as if the undone run had not happened. `trimmed`: what the change log did not keep (--force).
 */
async function writeUndo(u: Undo, plan: UndoPlan, paged: PagedItems, trimmed: string | undefined): Promise<UndoReport> {
  const { deps, opts, config, feed, logger } = u;
  const signal = deps.signal;
  const recorder = createChangeRecorder(
    deps.changeLog,
    {
      runId: u.base.runId,
      ...(opts.job && { jobId: opts.job.jobId }),
      feed: feed.name,
      chatbot: feed.chatbot,
      dryRun: false,
      undoOf: u.runId,
    },
    { maxPerRun: config.changeLog.maxPerRun, maxBytesPerRun: config.changeLog.maxBytesPerRun, logger },
  );
  const ignore: ReadonlySet<string> = new Set(feed.ignore);
  const executor = createExecutor({
    api: deps.api,
    serialNumber: feed.chatbot,
    keyBy: feed.keyBy,
    concurrency: config.api.concurrency,
    batchSize: feed.deletes.batchSize,
    retries: config.api.retries,
    logger,
    feed: feed.name,
    ...(signal && { signal }),
    changes: recorder.sink,
    before: createBeforeCapture({
      paged,
      store: deps.store,
      feed: u.lane,
      serialNumber: feed.chatbot,
      keyBy: feed.keyBy,
      ignore,
      maxBytes: config.changeLog.maxWholeBytesPerRun,
    }),
  });
  await executor.run(writeJobs(writesOf(plan, ignore)));
  if (!executor.result.stopped) await executor.run(deleteJobs(deletesOf(plan, feed), feed.deletes.batchSize));
  const exec = executor.result;
  await commitChanges(deps.store, stateAfterUndo(u.lane, exec));

  const left = plan.conflicts.filter((c) => !c.forced).length;
  const outcome: UndoOutcome = exec.stopped ?? (exec.failures.length || left || trimmed ? 'partial' : 'ok');
  const message =
    (exec.refused && authFailure(exec.refused)) ??
    exec.stopReason ??
    [
      left ? `${left} conflict(s) left alone (--force reverts them)` : '',
      trimmed ? `${trimmed}; the rest was undone (--force)` : '',
    ]
      .filter(Boolean)
      .join('; ');
  const report = finish(u, { outcome, plan, exec, ...(message && { message }) });
  await recorder.finish({
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    durationMs: report.durationMs,
    outcome: report.outcome,
    summary: report.summary,
    ...(report.message && { message: report.message }),
    counts: { ...report.counts },
  });
  return report;
}

/** Step report: the undo's report (a dry run's counts are what it would do) and its summary line in the log. */
function finish(u: Undo, r: Ending): UndoReport {
  const p = r.plan;
  const e = r.exec;
  const lists = planLists(p);
  const undone = e
    ? e.deleted + e.updated + e.created
    : lists.creates.length + lists.updates.length + lists.deletes.length;
  const out: Omit<UndoReport, 'summary'> = {
    ...u.base,
    outcome: r.outcome,
    retryable: r.outcome === 'unavailable' || r.outcome === 'aborted' || Boolean(e?.failures.some((f) => f.retryable)),
    ...(r.message && { message: r.message }),
    counts: countsOf(r, lists, u.opts.dryRun === true),
    plan: shownPlan(lists),
    conflicts: (p?.conflicts ?? []).slice(0, SHOWN),
    cannot: (p?.cannot ?? []).slice(0, SHOWN),
    failures: (e?.failures ?? []).slice(0, SHOWN),
    next: nextPulls(
      undone,
      u.incremental,
      redisConfigured(u.deps.config) ? `${feedsyncCommand()} pause --feed ${u.feed.name}` : undefined,
    ),
    calls: (u.deps.calls?.snapshot().total ?? 0) - u.callsBefore,
    startedAt: u.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: Math.round(performance.now() - u.t0),
  };
  const report = { ...out, summary: summaryOf(out) };
  u.logger.info({ outcome: report.outcome }, report.summary);
  return report;
}

type PlanLists = Omit<UndoReport['plan'], 'omitted'>;

/** The plan's creates, updates and deletes, each list whole. */
function planLists(p: UndoPlan | undefined): PlanLists {
  const actions = p?.actions ?? [];
  const pick = <K extends string>(kind: K) => actions.filter((a) => a.kind === kind);
  return {
    creates: pick('create').map((a) => a.key),
    updates: pick('update').flatMap((a) => (a.kind === 'update' ? [{ key: a.key, changes: a.changes }] : [])),
    deletes: pick('delete').map((a) => a.key),
  };
}

/** The lists as the report carries them: the first SHOWN of each, and how many were left out. */
function shownPlan(lists: PlanLists): UndoReport['plan'] {
  const { creates, updates, deletes } = lists;
  const omitted = Object.fromEntries(
    Object.entries({ creates, updates, deletes }).flatMap(([list, all]) =>
      all.length > SHOWN ? [[list, all.length - SHOWN]] : [],
    ),
  );
  return {
    creates: creates.slice(0, SHOWN),
    updates: updates.slice(0, SHOWN),
    deletes: deletes.slice(0, SHOWN),
    ...(Object.keys(omitted).length && { omitted }),
  };
}

/** What was done (a dry run: what it would do, from the plan; nothing executed: none). */
function countsOf(r: Ending, lists: PlanLists, dryRun: boolean): UndoReport['counts'] {
  const { plan: p, exec: e } = r;
  return {
    deleted: e ? e.deleted : dryRun ? lists.deletes.length : 0,
    updated: e ? e.updated : dryRun ? lists.updates.length : 0,
    created: e ? e.created : dryRun ? lists.creates.length : 0,
    unchanged: p?.unchanged ?? 0,
    conflicts: p?.conflicts.length ?? 0,
    cannot: p?.cannot.length ?? 0,
    failed: e?.failures.length ?? 0,
    duplicatesNotRecreated: p?.notUndone.duplicates ?? 0,
    removedByRuleNotRecreated: p?.notUndone.byRule ?? 0,
  };
}

/** Alerts by the same rules as a sync, after a real undo (an undo reads no feed: the feed's own conditions stay as they were). */
async function alerted(u: Undo, report: UndoReport): Promise<UndoReport> {
  if (u.opts.dryRun) return report;
  const { feed, logger } = u;
  await alertAfterRun(
    u.deps.store,
    u.config.alerts,
    { feed: feed.name, chatbot: feed.chatbot, lane: u.lane },
    {
      runId: report.runId,
      at: report.finishedAt,
      outcome: report.outcome,
      ...(report.message && { message: report.message }),
      records: 0,
      valid: 0,
      rejected: 0,
      unmapped: [],
      feedRead: false,
    },
    logger,
  ).catch((err: Error) => logger.warn({ err: err.message }, 'alert rules could not be checked'));
  return report;
}

/** The undo's creates and updates, in the plan's order: each listing as it was before the run. */
function* writesOf(plan: UndoPlan, ignore: ReadonlySet<string>): Generator<PlannedCreate | PlannedUpdate> {
  for (const a of plan.actions) {
    if (a.kind === 'delete') continue;
    // (fields the display rules withhold are named on the write: its change log entry keeps none of them)
    const write = {
      key: a.key,
      listing: a.before,
      fingerprint: fingerprintListing(a.before, ignore),
      ...(a.withheld && { withheld: a.withheld }),
    };
    if (a.kind === 'create') yield write;
    else yield { ...write, remoteId: a.remoteId, reason: a.changes.length ? 'fields' : 'unlisted', changes: a.changes };
  }
}

function deletesOf(plan: UndoPlan, feed: FeedConfig): PlannedDelete[] {
  return plan.actions.flatMap((a) =>
    a.kind === 'delete'
      ? [
          {
            key: a.key,
            reason: 'undone' as const,
            deleteKey: a.key,
            keyType: feed.keyBy,
            remoteIds: a.remoteIds,
            ...(a.mlsNumber !== undefined && { mlsNumber: a.mlsNumber }),
          },
        ]
      : [],
  );
}

/**
 * The sync state as if the undone run had not happened, for the keys the undo wrote: a listing put
 * back has the fingerprint and unlisted fields of what was put back; one deleted has none. Stamps
 * and first-missing marks of those keys go: the next sync maps their records again and, finding
 * them in step, writes nothing and records new stamps.
 */
function stateAfterUndo(lane: string, exec: ExecutionResult) {
  const changes = emptyChanges(lane);
  const touched = [...exec.written.keys(), ...exec.deletedKeys];
  changes.fingerprints.set = exec.written;
  changes.fingerprints.delete = exec.deletedKeys;
  changes.unlisted = { set: exec.unlisted, delete: exec.deletedKeys };
  changes.stamps.delete = touched;
  changes.missingSince.delete = touched;
  return changes;
}

/**
 * key → the first later run (of any feed of the chatbot) that wrote it, as a person reads it; the
 * later writes of the run's feed noted in `display` (what its rules let be shown now).
 */
async function laterWrites(
  log: ChangeLog,
  run: RunEntry,
  maxPerRun: number,
  display: DisplayNow,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const runs = await log.runs(undefined, LATER_RUNS);
  const at = runs.findIndex((r) => r.runId === run.runId);
  const later = (at >= 0 ? runs.slice(0, at) : runs.filter((r) => r.finishedAt > run.finishedAt)).filter(
    (r) => r.chatbot === run.chatbot && !r.dryRun && r.runId !== run.runId,
  );
  // oldest first: each key names the first run after the undone one that wrote it
  for (const r of later.reverse()) {
    const { changes } = await log.run(r.runId, maxPerRun);
    for (const { change: c } of changes) {
      if (r.feed === run.feed) display.note(c);
      // (an earlier undo of this same run is not a later change: what it put back reads as already back)
      if (r.undoOf === run.runId) continue;
      if (
        (c.op === 'create' || c.op === 'update' || c.op === 'delete') &&
        !(c.op === 'delete' && c.withheld) &&
        !out.has(c.key)
      ) {
        out.set(
          c.key,
          `run ${r.runId}${r.undoOf ? ` (an undo of ${r.undoOf})` : ''} of ${r.feed} at ${r.finishedAt} made a ${c.op}`,
        );
      }
    }
  }
  return out;
}
