// Turns a job definition into a BullMQ processor: parse the payload, take the locks of its chatbots (or its target's), run,
// record the report in history, and tell BullMQ whether to retry (retry-policy.ts).
import { DelayedError, Queue, UnrecoverableError, type Job, type Processor } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import type { LoadedConfig } from '../config/schema.js';
import { createCallCounter } from '../api/call-counter.js';
import { formatPath } from '../config/load.js';
import { FeedsyncError, GuardError } from '../errors.js';
import { withCallCounter } from './call-scope.js';
import { createProgressThrottle } from './job-progress.js';
import type { Logger } from '../log.js';
import { maskDeep, maskError } from '../secrets.js';
import { createHistoryWriter, runRecord, saveRunRecord } from './run-records.js';
import { boundReport } from './report-size.js';
import type { JobContext, JobDefinition, JobRuntime, RunReport, RunTarget } from './job-definition.js';
import { isFailedOutcome, reportError, toJobError, verdictFor } from './retry-policy.js';
import { CancelRequest, pausedAmong, pausedFor, type CancelWatcher } from './control.js';
import {
  acquireTargetLock,
  chatbotLockName,
  freeIfHolderGone,
  lockChatbots,
  lockFreedWhileMoving,
  releaseAll,
  targetLockKey,
  type LockWaiters,
  type TargetLock,
} from '../locks/target-lock.js';

export interface ProcessorDeps {
  config: LoadedConfig;
  runtime: JobRuntime;
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  historySize: number;
  /** TTL of the per-target lock; a crashed worker's lock frees itself after this */
  lockTtlMs: number;
  /**
   * how long a job waits (delayed) before trying again when its target is busy, unless the release
   * wakes it first (the usual case): a backstop for a holder that died
   */
  busyDelayMs: number;
  /** operator cancels reach the running job through this (control.ts); none: no cancel */
  cancels?: CancelWatcher;
  /** one line per finished run (metrics) */
  onRun?: (run: { job: string; target: RunTarget; report: RunReport; jobId: string }) => void;
}

export function createProcessor<P, R extends RunReport>(def: JobDefinition<P, R>, deps: ProcessorDeps): Processor {
  const waiters = lockWaiters(deps);
  const history = createHistoryWriter((r) => saveRunRecord(deps.redis, deps.prefix, deps.historySize, r), {
    onKept: (r, err) =>
      deps.logger.warn(
        { err, jobId: r.jobId, feed: r.feed, chatbot: r.chatbot },
        'run history could not be saved yet; kept, written again when Redis answers',
      ),
    onLost: (r) =>
      deps.logger.error(
        { record: r },
        'run history: too many records waiting for Redis; this one is given up (here whole)',
      ),
  });
  return async (job: Job, token?: string, signal?: AbortSignal) => {
    const jobId = job.id ?? '?';
    const jobLogger = deps.logger.child({ job: def.name, jobId });
    const attempt = { made: job.attemptsMade + 1, max: job.opts.attempts ?? 1 };
    const prepared = await prepareRun(
      def,
      deps,
      payloadOf(def, job, jobId),
      jobLogger,
      Boolean(job.repeatJobKey || jobId.startsWith('repeat:')),
    );
    if ('skipped' in prepared) return prepared.skipped;
    const { payload, target, chatbots, logger } = prepared;

    const locks = def.exclusive
      ? await takeLocks(deps, job, target, chatbots, def.lockKind ?? def.kind, waiters(job.queueName))
      : { held: [] };
    if (locks.busy) {
      // Another job (or a foreground run) of this target or of one of its chatbots runs: wait behind
      // it holding no lock (its release wakes this job), never beside it, never dropped.
      logger.info(
        { backstopMs: deps.busyDelayMs, lock: locks.busy.name },
        `${locks.busy.name} is busy with another job; job waits for it`,
      );
      await job.moveToDelayed(Date.now() + deps.busyDelayMs, token);
      if (await lockFreedWhileMoving(deps.redis, locks.busy.key, jobId, waiters(job.queueName)))
        await job.promote().catch(() => undefined);
      throw new DelayedError();
    }

    const cancel = deps.cancels?.watch(jobId);
    const cancelled = (report: RunReport, about: RunTarget = target): RunReport => {
      const reason: unknown = cancel?.signal.reason;
      const by = reason instanceof CancelRequest ? reason.by : 'an operator';
      return {
        ...report,
        outcome: 'cancelled',
        retryable: false,
        retryAt: undefined,
        summary: `${def.name} ${describe(about)} cancelled by ${by}: ${report.summary}`,
      };
    };
    const signals = [signal, ...locks.held.map((l) => l.lost), cancel?.signal].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    const jobSignal = signals.length ? AbortSignal.any(signals) : new AbortController().signal;
    // the run's history rows (a job of several feeds: one per feed), each also one metrics observation
    const record = async (report: RunReport, as: (r: RunReport, about: RunTarget) => RunReport = (r) => r) => {
      for (const row of def.historyRows?.(payload, report, deps.config) ?? [{ target, report }]) {
        const rowReport = as(row.report, row.target);
        await history.record(
          runRecord({ jobId, job: def.name, queue: job.queueName, attempt, ...row.target, report: rowReport }),
        );
        deps.onRun?.({ job: def.name, target: row.target, report: rowReport, jobId });
      }
    };
    try {
      let report: RunReport;
      try {
        const calls = createCallCounter();
        report = await runJob(def, job, payload, {
          config: deps.config,
          runtime: deps.runtime,
          logger: jobLogger,
          signal: jobSignal,
          jobId,
          attempt,
          calls,
        });
      } catch (err) {
        if (cancel?.signal.aborted) {
          const error: RunReport = { outcome: 'error', summary: err instanceof Error ? err.message : String(err) };
          await record(error, cancelled);
          const report = cancelled(error);
          logger.warn({ outcome: report.outcome }, report.summary);
          return report;
        }
        const jobErr = toJobError(err, jobSignal);
        const outcome = err instanceof GuardError ? 'guard' : 'error';
        const failed: RunReport & { code?: string } = {
          outcome,
          code: err instanceof FeedsyncError ? err.code : undefined,
          summary: `${def.name} ${describe(target)} ${isFailedOutcome(outcome) ? 'failed' : outcome}: ${jobErr.message}`,
          retryable: !(jobErr instanceof UnrecoverableError),
        };
        await record(failed);
        // a guard that held the run back is its outcome, not a failure of the job (retry-policy.ts)
        if (!isFailedOutcome(outcome)) return await settle(def, job, token, failed, { target, attempt, logger });
        logger.error({ err, attempt: `${attempt.made}/${attempt.max}`, retry: failed.retryable }, failed.summary);
        // BullMQ stores the message and stack in Redis (failedReason, stacktrace) and the UI shows them
        throw maskError(jobErr);
      }
      if (cancel?.signal.aborted) {
        await record(report, cancelled);
        report = cancelled(report);
      } else await record(report);
      return await settle(def, job, token, report, { target, attempt, logger });
    } finally {
      cancel?.done();
      await releaseAll(locks.held, (err) => logger.warn({ err }, 'lock release failed; it expires by itself'));
    }
  };
}

/** The job's run, its progress sent to BullMQ (throttled: job-progress.ts) until it ends. */
async function runJob<P>(
  def: JobDefinition<P, RunReport>,
  job: Job,
  payload: P,
  ctx: Omit<JobContext, 'progress'>,
): Promise<RunReport> {
  const progress = createProgressThrottle((data) => job.updateProgress(data), {
    onError: (err) => ctx.logger.debug({ err }, 'job progress not saved'),
  });
  try {
    return await withCallCounter(ctx.calls, () => def.process(payload, { ...ctx, progress: progress.report }));
  } finally {
    await progress.flush();
  }
}

/** The job's payload as its definition's schema parses it; a payload that does not parse can never run. */
function payloadOf<P>(def: JobDefinition<P, RunReport>, job: Job, jobId: string): P {
  const parsed = def.payload.safeParse(job.data);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${formatPath(i.path) || '(root)'}: ${i.message}`).join('; ');
  throw new UnrecoverableError(`job ${def.name} ${jobId}: payload invalid: ${issues}`);
}

/**
 * What a finished run's report makes of the job: delayed until a spent budget resets, failed (to be
 * retried or not), or done with the report as its return value; and the run's one summary line.
 */
async function settle<P>(
  def: JobDefinition<P, RunReport>,
  job: Job,
  token: string | undefined,
  report: RunReport,
  run: { target: RunTarget; attempt: { made: number; max: number }; logger: Logger },
): Promise<RunReport> {
  const { target, attempt, logger } = run;
  const verdict = verdictFor(report, attempt);
  const retryAt = verdict === 'retry' && report.retryAt ? Date.parse(report.retryAt) : NaN;
  if (!Number.isNaN(retryAt)) {
    // A spent budget: try again once it resets; a backoff retry before that would fail for sure. A
    // reset already past by now (a slow end of the run) is still a budget wait, never a failed attempt.
    logger.warn(
      { outcome: report.outcome, retryAt: report.retryAt },
      `${def.name} ${describe(target)}: retried at ${report.retryAt}, when the request budget resets`,
    );
    await job.moveToDelayed(Math.max(retryAt, Date.now() + 1), token);
    throw new DelayedError();
  }
  // One summary line per run: the job's own, or this one.
  const decision =
    verdict === 'done' ? '' : verdict === 'retry' && attempt.made < attempt.max ? 'will retry' : 'job failed, no retry';
  if (!def.logsSummary)
    logger[verdict === 'done' ? 'info' : 'warn'](
      { outcome: report.outcome },
      decision ? `${report.summary} — ${decision}` : report.summary,
    );
  else if (decision)
    logger.warn(
      { outcome: report.outcome, attempt: `${attempt.made}/${attempt.max}` },
      `${def.name} ${describe(target)}: ${decision}`,
    );
  if (verdict !== 'done') throw maskError(reportError(report, verdict));
  // the return value is stored in Redis and shown by the queue UI and `enqueue --wait`
  return maskDeep(boundReport(report), target.feed);
}

/**
 * The run of a job: its payload, target, the chatbots it locks and the logger of this wrapper's lines
 * (the job's own code scopes its lines by feed or chatbot, as syncFeed and pushSettings do, so it
 * gets the job scope alone). A scheduler's run of a paused feed (or of anything while all are
 * paused) starts nothing (`skipped`); a scheduler's run of several feeds runs those not paused.
 */
async function prepareRun<P>(
  def: JobDefinition<P, RunReport>,
  deps: ProcessorDeps,
  payload: P,
  jobLogger: Logger,
  scheduled: boolean,
): Promise<{ payload: P; target: RunTarget; chatbots: string[]; logger: Logger } | { skipped: RunReport }> {
  const resolve = (p: P) => {
    try {
      const target = def.target(p, deps.config);
      const chatbots = def.chatbots?.(p, deps.config) ?? (target.chatbot !== undefined ? [target.chatbot] : []);
      return { payload: p, target, chatbots, logger: jobLogger.child({ ...target }) };
    } catch (err) {
      throw toJobError(err);
    }
  };
  const run = resolve(payload);
  if (!scheduled) return run;
  const { paused, each } = await scheduledPause(deps, def.pausable?.feeds(payload) ?? [], run.target);
  if (paused) {
    run.logger.info({ outcome: 'paused' }, `${def.name} ${describe(run.target)}: ${paused}; scheduled run skipped`);
    return {
      skipped: { outcome: 'paused', summary: `${paused}: scheduled run skipped (feedsync resume to start again)` },
    };
  }
  if (!each.size || !def.pausable) return run;
  for (const why of each.values())
    run.logger.info(
      { outcome: 'paused' },
      `${def.name} ${describe(run.target)}: ${why}; skipped in this scheduled run`,
    );
  return resolve(def.pausable.without(payload, [...each.keys()]));
}

/**
 * What keeps a scheduler's run from starting: `paused`, why it starts nothing (its feed, or each of
 * its feeds, paused; every schedule paused); else `each`, those of its feeds paused on their own.
 */
async function scheduledPause(
  deps: ProcessorDeps,
  feeds: readonly string[],
  target: RunTarget,
): Promise<{ paused?: string; each: Map<string, string> }> {
  const each = await pausedAmong(deps.redis, deps.prefix, feeds);
  const paused =
    (await pausedFor(deps.redis, deps.prefix, target)) ??
    (feeds.length && each.size === feeds.length ? [...each.values()].join('; ') : undefined);
  return { ...(paused && { paused }), each };
}

/**
 * The locks an exclusive job runs under: the lock of every chatbot it writes into (def.chatbots: a
 * routed feed writes into several; default the target's), all or none, taken in the order a foreground run takes them
 * (lockChatbots); a target with no chatbot: its feed's lock, the same way. `busy`: the lock that was not free.
 */
async function takeLocks(
  deps: ProcessorDeps,
  job: Job,
  target: RunTarget,
  chatbots: readonly string[],
  kind: string,
  waiters: LockWaiters,
): Promise<{ held: TargetLock[]; busy?: { name: string; key: string } }> {
  const jobId = job.id ?? '?';
  const take = (key: string) => acquireTargetLock(deps.redis, key, jobId, deps.lockTtlMs, waiters);
  // a holder found gone (a run killed as PID 1 of its container, a reused PID): its lock is freed now, not at its expiry
  const takeOrFree = async (key: string) =>
    (await take(key)) ?? ((await freeIfHolderGone(deps.redis, key)) ? await take(key) : undefined);
  const names = chatbots.length
    ? chatbots.map((chatbot) => chatbotLockName({ chatbot }, kind))
    : [chatbotLockName(target, kind)];
  const { held, refused } = await lockChatbots(names, (name) => takeOrFree(targetLockKey(deps.prefix, name)), {
    allOrNone: true,
  });
  const [busy] = refused.keys();
  return busy === undefined ? { held } : { held, busy: { name: busy, key: targetLockKey(deps.prefix, busy) } };
}

/**
 * The line of jobs waiting for a lock, per queue: a release promotes the oldest delayed waiter.
 * One Queue handle per queue name, on the processor's connection, made when first needed.
 */
function lockWaiters(deps: ProcessorDeps): (queueName: string) => LockWaiters {
  const made = new Map<string, LockWaiters>();
  return (queueName) => {
    let w = made.get(queueName);
    if (w) return w;
    const queue = new Queue(queueName, { connection: deps.redis, prefix: deps.prefix });
    queue.on('error', () => {}); // the processor's connection: its owner (the worker) reports its errors
    w = {
      // a waiter rechecks at least once a backstop delay, so the line need not outlive a few of them
      ttlMs: Math.max(60_000, deps.busyDelayMs * 4),
      wake: async (owner) => {
        const waiting = await queue.getJob(owner);
        if (!waiting) return false;
        return waiting.promote().then(
          () => true,
          () => false, // not delayed (running, or still moving): it rechecks by itself
        );
      },
    };
    made.set(queueName, w);
    return w;
  };
}

function describe(target: RunTarget): string {
  return target.feed ?? (target.feeds ? `feeds ${target.feeds.join(', ')}` : (target.chatbot ?? ''));
}
