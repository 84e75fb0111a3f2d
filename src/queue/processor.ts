// Turns a job definition into a BullMQ processor: parse the payload, take the locks of its chatbots
// (or its target's: run-prepare.ts), run, record the report in history (with the worker that ran
// it), and tell BullMQ whether to retry (run-settle.ts, retry-policy.ts). A run stopped by its
// worker's shutdown is recorded `handed-back` and goes back to the queue at once, for another worker
// (hand-back.ts, handedBack); one stopped by its lost job lock, or by a lost chatbot lock, is recorded
// `taken-over` and left to the attempt that takes it (takenOver), or, when the job itself is gone from
// Redis (job-gone.ts: its job lock's loss or a chatbot lock's loss looked), recorded as the stopped run
// it is (lostWithJob). A job that
// finds a lock busy waits behind it; a scheduler's run only when no other run of its scheduler
// waits, else it ends `skipped` (schedule-wait.ts).
import { DelayedError, UnrecoverableError, WaitingError, type Job, type Processor } from 'bullmq';
import { createCallCounter } from '../api/call-counter.js';
import { formatPath } from '../config/load.js';
import { CHATBOT_LOCK_LOST, FeedsyncError, GuardError, JOB_LOCK_LOST, JOB_LOST } from '../errors.js';
import type { Logger } from '../log.js';
import { lockFreedWhileMoving, type LockWaiters, type TargetLock } from '../locks/target-lock.js';
import { maskError } from '../secrets.js';
import { withCallCounter } from './call-scope.js';
import { CancelRequest } from '../errors.js';
import { stoppedOutcome } from '../sync/index.js';
import { handBack, shuttingDown } from './hand-back.js';
import { JOB_LOOK_MS, jobGone } from './job-gone.js';
import type { JobContext, JobDefinition, RunReport, RunTarget } from './job-definition.js';
import { createProgressThrottle } from './job-progress.js';
import type { ProcessorDeps } from './processor-deps.js';
import { isFailedOutcome, toJobError } from './retry-policy.js';
import { createHistoryWriter, runRecord, saveRunRecord, type HistoryWriter } from './run-records.js';
import { lockWaiters, prepareRun, takeLocks } from './run-prepare.js';
import { describe, settle } from './run-settle.js';
import { doneWaiting, scheduleOf, skippedTick, waitsBehind, type Schedule } from './schedule-wait.js';
import { describeWorker, thisWorker, type WorkerIdentity } from './worker-identity.js';

export type { ProcessorDeps } from './processor-deps.js';

type Attempt = { made: number; max: number };
type RecordRun = (report: RunReport, as?: (r: RunReport, about: RunTarget) => RunReport) => Promise<void>;

/** A job's run under its locks, and what it needs. */
interface RunScope<P> {
  def: JobDefinition<P, RunReport>;
  deps: ProcessorDeps;
  job: Job;
  token: string | undefined;
  /** BullMQ's signal of the job: aborted by a lost lock or the worker's shutdown */
  signal: AbortSignal | undefined;
  payload: P;
  target: RunTarget;
  attempt: Attempt;
  /** this wrapper's lines (scoped by target) and the job's own (scoped by job) */
  logger: Logger;
  jobLogger: Logger;
  cancel?: { signal: AbortSignal };
  held: readonly TargetLock[];
  record: RecordRun;
  /** the worker process running it (a hand-back's summary names it) */
  worker: WorkerIdentity;
}

/** How a run under its locks ended: its report (the job's return value), handed back to the queue, or its job left as it is (taken over, or lost). */
type Ended = { report: RunReport } | { handBack: true } | { leave: true };

/**
 * A job definition as a worker runs it: its processor, built while the definition's payload type is
 * still known. A table of jobs holds definitions of different payloads, which TypeScript cannot name
 * as one type (it has no existential types); a cast to `JobDefinition<never>` claimed one payload for all.
 */
export type WorkerJob = (deps: ProcessorDeps) => Processor;

export function workerJob<P, R extends RunReport>(def: JobDefinition<P, R>): WorkerJob {
  return (deps) => createProcessor(def, deps);
}

export function createProcessor<P, R extends RunReport>(def: JobDefinition<P, R>, deps: ProcessorDeps): Processor {
  const waiters = lockWaiters(deps);
  const history = historyWriter(deps);
  const worker = thisWorker();
  return async (job: Job, token?: string, signal?: AbortSignal) => {
    const jobId = job.id ?? '?';
    const jobLogger = deps.logger.child({ job: def.name, jobId });
    // taken as its worker began to close: back to the queue before anything starts
    if (shuttingDown(signal)) return handBack(job, token);
    const attempt = { made: job.attemptsMade + 1, max: job.opts.attempts ?? 1 };
    const schedule = scheduleOf(job);
    const prepared = await prepareRun(def, deps, payloadOf(def, job, jobId), jobLogger, schedule !== undefined);
    if ('skipped' in prepared) {
      if (schedule) await notWaiting(deps, schedule, jobId, jobLogger);
      return prepared.skipped;
    }
    const { payload, target, chatbots, logger } = prepared;
    const record = recorder(def, deps, history, { job, payload, target, attempt, worker });
    const maxStalled = deps.config.config.worker.maxStalledCount;
    if (job.stalledCounter > maxStalled) {
      return stalledTooOften(def, record, {
        target,
        stalled: job.stalledCounter,
        maxStalled,
        logger,
        unrun: { config: deps.config, runtime: deps.runtime, logger: jobLogger, jobId, attempt, payload },
      });
    }

    const locks = def.exclusive
      ? await takeLocks(deps, job, target, chatbots, def.lockKind ?? def.kind, waiters(job.queueName))
      : { held: [], release: async () => {} };
    if (locks.busy) {
      const behind = { busy: locks.busy, waiters: waiters(job.queueName), logger };
      if (
        schedule &&
        !(await waitsBehind(deps.redis, deps.prefix, schedule, locks.busy.key, jobId, behind.waiters.ttlMs))
      )
        return tickSkipped(def, record, target, behind);
      return waitBehind(deps, job, token, behind);
    }
    if (schedule) await notWaiting(deps, schedule, jobId, logger);
    await noteWorker(job, worker, attempt, logger);

    const cancel = deps.cancels?.watch(jobId);
    let ended: Ended;
    try {
      const scope = {
        def,
        deps,
        job,
        token,
        signal,
        payload,
        target,
        attempt,
        logger,
        jobLogger,
        held: locks.held,
        worker,
      };
      ended = await runLocked({ ...scope, ...(cancel && { cancel }), record });
    } finally {
      cancel?.done();
      await locks.release().catch((err: unknown) => logger.warn({ err }, 'lock release failed; it expires by itself'));
    }
    // (after the locks are released: the worker that takes it next finds its chatbots free)
    if ('handBack' in ended) return handBack(job, token);
    // (moved already, or about to be by a stalled check: BullMQ leaves a WaitingError's job as it is)
    if ('leave' in ended) throw new WaitingError();
    return ended.report;
  };
}

/**
 * A job whose workers died running it more than worker.maxStalledCount times (out of memory on a huge
 * feed, say): failed for good, and recorded so (`feedsync runs`, /status, metrics, alerts) before
 * it runs again, and to its alert rules (failedUnrun: its attempts taken over, `taken-over`, counted
 * for none). BullMQ alone never fails a job of a scheduler this way (its stalled check spares
 * them), so a scheduled run that kills its worker would kill one worker after another.
 */
async function stalledTooOften<P>(
  def: JobDefinition<P, RunReport>,
  record: RecordRun,
  o: {
    target: RunTarget;
    stalled: number;
    maxStalled: number;
    logger: Logger;
    unrun: Pick<JobContext, 'config' | 'runtime' | 'logger' | 'jobId' | 'attempt'> & { payload: P };
  },
): Promise<never> {
  const why = `its worker stopped while running it ${o.stalled} times (killed, out of memory, or its job lock lost: see the workers' logs), more than worker.maxStalledCount (${o.maxStalled}); not run again`;
  const report: RunReport = {
    outcome: 'failed',
    summary: `${def.name} ${describe(o.target)} failed: ${why}`,
    retryable: false,
  };
  await record(report);
  o.logger.error({ outcome: report.outcome }, report.summary);
  const { payload, ...ctx } = o.unrun;
  await def
    .failedUnrun?.(payload, report, ctx)
    .catch((err: unknown) => o.logger.warn({ err }, 'alert rules could not be checked'));
  throw new UnrecoverableError(why);
}

/** The worker's run history writes: kept and written again while Redis refuses them (run-records.ts). */
function historyWriter(deps: ProcessorDeps): HistoryWriter {
  return createHistoryWriter((r) => saveRunRecord(deps.redis, deps.prefix, deps.historySize, r), {
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
}

/** A lock a job found busy, the line it joined, and the job's logger. */
interface Behind {
  busy: { name: string; key: string };
  waiters: LockWaiters;
  logger: Logger;
}

/**
 * Another job (or a foreground run) of this target or of one of its chatbots runs: wait behind it
 * holding no lock (its release wakes this job), never beside it. Never dropped, but for a
 * scheduler's run when another run of its scheduler already waits (tickSkipped).
 */
async function waitBehind(deps: ProcessorDeps, job: Job, token: string | undefined, behind: Behind): Promise<never> {
  const { busy, waiters, logger } = behind;
  logger.info(
    { backstopMs: deps.busyDelayMs, lock: busy.name },
    `${busy.name} is busy with another job; job waits for it`,
  );
  await job.moveToDelayed(Date.now() + deps.busyDelayMs, token);
  if (await lockFreedWhileMoving(deps.redis, busy.key, job.id ?? '?', waiters))
    // (a promote fails when the job left the delayed set meanwhile, taken or promoted already: it is under way;
    // otherwise the backstop delay, busyDelayMs, brings it back)
    await job.promote().catch(() => undefined);
  throw new DelayedError();
}

/**
 * A scheduler's run that found its lock busy while another run of its scheduler waits behind it
 * (schedule-wait.ts): it ends `skipped`, recorded (run history, metrics) with why; the job completes.
 */
async function tickSkipped<P>(
  def: JobDefinition<P, RunReport>,
  record: RecordRun,
  target: RunTarget,
  behind: Behind,
): Promise<RunReport> {
  const report = skippedTick(def.name, target, behind.busy.name);
  await record(report);
  behind.logger.info({ outcome: report.outcome, lock: behind.busy.name }, report.summary);
  return report;
}

/** A scheduler's run that starts, or ends without waiting: its scheduler's mark, if its own, cleared (else it expires). */
async function notWaiting(deps: ProcessorDeps, schedule: Schedule, jobId: string, logger: Logger): Promise<void> {
  await doneWaiting(deps.redis, deps.prefix, schedule, jobId).catch((err: unknown) =>
    logger.warn(
      { err, scheduler: schedule.scheduler },
      'the mark of the waiting scheduled run not cleared; it expires by itself',
    ),
  );
}

/**
 * Which worker runs this attempt, in the job's log (Bull Board's Logs tab; BullMQ's `processedBy`
 * names the last worker only): a job taken over after a stall, or handed back, keeps its story.
 */
async function noteWorker(job: Job, worker: WorkerIdentity, attempt: Attempt, logger: Logger): Promise<void> {
  const stalled = job.stalledCounter ? ` (taken over after its worker stopped: stalled ${job.stalledCounter}×)` : '';
  const line = `${new Date().toISOString()} attempt ${attempt.made}/${attempt.max} running on ${describeWorker(worker)}${stalled}`;
  await job.log(line).catch((err: unknown) => logger.debug({ err }, 'job log line not saved'));
}

/** The run's history rows (a job of several feeds: one per feed), each also one metrics observation. */
function recorder<P>(
  def: JobDefinition<P, RunReport>,
  deps: ProcessorDeps,
  history: HistoryWriter,
  run: { job: Job; payload: P; target: RunTarget; attempt: Attempt; worker: WorkerIdentity },
): RecordRun {
  const { job, payload, target, attempt, worker } = run;
  const jobId = job.id ?? '?';
  return async (report, as = (r) => r) => {
    for (const row of def.historyRows?.(payload, report, deps.config) ?? [{ target, report }]) {
      const rowReport = as(row.report, row.target);
      const base = { jobId, job: def.name, queue: job.queueName, attempt, worker };
      await history.record(runRecord({ ...base, ...row.target, report: rowReport }));
      deps.onRun?.({ job: def.name, target: row.target, report: rowReport, jobId });
    }
  };
}

/** The run, its history recorded, and what it makes of the job (settle); or handed back when its worker shuts down. */
async function runLocked<P>(s: RunScope<P>): Promise<Ended> {
  const chatbots = chatbotLocksLost(s);
  const signals = [s.signal, chatbots?.signal, s.cancel?.signal].filter((x): x is AbortSignal => x !== undefined);
  const jobSignal = signals.length ? AbortSignal.any(signals) : new AbortController().signal;
  let ran: { report: RunReport } | { err: unknown };
  try {
    const report = await runJob(s.def, s.job, s.payload, {
      config: s.deps.config,
      runtime: s.deps.runtime,
      logger: s.jobLogger,
      signal: jobSignal,
      jobId: s.job.id ?? '?',
      attempt: s.attempt,
      calls: createCallCounter(),
    });
    ran = { report };
  } catch (err) {
    ran = { err };
  }
  // (decided once, as the run ended: a loss heard later, a renewal answered after the release, is not the run's)
  const lost = s.cancel?.signal.aborted ? undefined : await lockLost(s, chatbots);
  chatbots?.close();
  if ('err' in ran) return runThrew(s, ran.err, jobSignal, lost);
  let { report } = ran;
  if (s.cancel?.signal.aborted) {
    const as = (r: RunReport, about: RunTarget) => cancelledReport(s, r, about);
    await s.record(report, as);
    report = as(report, s.target);
    return { report: await settle(s.def, s.job, s.token, report, s) };
  }
  if (lost === JOB_LOST) return lostWithJob(s, report);
  if (lost) return takenOver(s, report);
  if (shuttingDown(s.signal) && handsBack(report.outcome)) return handedBack(s, report);
  await s.record(report);
  return { report: await settle(s.def, s.job, s.token, report, s) };
}

/** A run that threw: cancelled by an operator, taken over, handed back by a shutdown (`handed-back`), held back by a guard, or failed. */
async function runThrew<P>(
  s: RunScope<P>,
  err: unknown,
  jobSignal: AbortSignal,
  lost: string | undefined,
): Promise<Ended> {
  const { def, target, attempt, logger } = s;
  if (s.cancel?.signal.aborted) {
    const error: RunReport = { outcome: 'error', summary: causeOf(err) };
    const as = (r: RunReport, about: RunTarget) => cancelledReport(s, r, about);
    await s.record(error, as);
    const report = as(error, target);
    logger.warn({ outcome: report.outcome }, report.summary);
    return { report };
  }
  if (lost === JOB_LOST) {
    const why = causeOf(err);
    return lostWithJob(s, { outcome: 'aborted', summary: `${def.name} ${describe(target)} aborted: ${why}` });
  }
  if (lost) {
    const why = causeOf(err);
    const summary = `${def.name} ${describe(target)} taken over by another attempt of its job (its job lock or a chatbot lock was lost): ${why}`;
    return takenOver(s, { outcome: 'taken-over', summary });
  }
  if (shuttingDown(s.signal) && !(err instanceof GuardError)) {
    const why = causeOf(err);
    return handedBack(s, { outcome: 'handed-back', summary: `${def.name} ${describe(target)} stopped: ${why}` });
  }
  const jobErr = toJobError(err, jobSignal);
  const outcome = err instanceof GuardError ? 'guard' : 'error';
  const failed: RunReport & { code?: string } = {
    outcome,
    code: err instanceof FeedsyncError ? err.code : undefined,
    summary: `${def.name} ${describe(target)} ${isFailedOutcome(outcome) ? 'failed' : outcome}: ${jobErr.message}`,
    retryable: !(jobErr instanceof UnrecoverableError),
  };
  await s.record(failed);
  // a guard that held the run back is its outcome, not a failure of the job (retry-policy.ts)
  if (!isFailedOutcome(outcome)) return { report: await settle(def, s.job, s.token, failed, s) };
  logger.error({ err, attempt: `${attempt.made}/${attempt.max}`, retry: failed.retryable }, failed.summary);
  // BullMQ stores the message and stack in Redis (failedReason, stacktrace) and the UI shows them
  throw maskError(jobErr);
}

/**
 * Whether a run its worker's shutdown stopped goes back to the queue: one the shutdown stopped
 * (`handed-back`: stoppedOutcome) or that ended failed meanwhile; one that finished (ok, partial,
 * guard, ...) before it heard of the shutdown is settled as it is.
 */
function handsBack(outcome: string): boolean {
  return outcome === 'handed-back' || isFailedOutcome(outcome);
}

/**
 * A run its worker's shutdown stopped: recorded as it ended (its lanes `handed-back`, stoppedOutcome:
 * their change log records and alert rules say it too, no failed run; a lane that failed or was
 * stopped otherwise first keeps its word), naming the worker, retryable: the job runs again at once, elsewhere.
 */
async function handedBack<P>(s: RunScope<P>, report: RunReport): Promise<Ended> {
  const back = (r: RunReport): RunReport => ({
    ...r,
    retryable: true,
    summary: `${r.summary} — handed back to the queue: its worker (${describeWorker(s.worker)}) is shutting down`,
  });
  await s.record(report, back);
  s.logger.warn({ outcome: report.outcome }, back(report).summary);
  return { handBack: true };
}

/**
 * Which lock of the run was lost, if any: JOB_LOST when its job is gone from Redis with it (BullMQ's
 * signal says so, workers.ts; or the look made when a chatbot lock was lost found the job gone), else
 * JOB_LOCK_LOST or CHATBOT_LOCK_LOST: the job is another attempt's. A chatbot lock lost while the run
 * ended by itself is waited for: its look decides, as it decides for a run it stopped.
 */
async function lockLost<P>(s: RunScope<P>, chatbots: ChatbotsStop | undefined): Promise<string | undefined> {
  const job = s.signal?.aborted ? s.signal.reason : undefined;
  if (job === JOB_LOST) return JOB_LOST;
  const chatbot = await chatbots?.why();
  if (chatbot !== undefined) return chatbot;
  return job === JOB_LOCK_LOST ? JOB_LOCK_LOST : undefined;
}

/** The job's chatbot locks' stop: its signal aborts, once one is lost, with why (`why()`: undefined while none is); `close()`: a loss heard from then on is not the run's. */
interface ChatbotsStop {
  signal: AbortSignal;
  why(): Promise<string | undefined>;
  close(): void;
}

/**
 * The job's chatbot locks, any one lost (locks/target-lock.ts: its holder stops a third of the TTL
 * before the lock can expire, so before the job lock's loss is heard): the run stops, as for a lost
 * job lock, with CHATBOT_LOCK_LOST, and its job is left as a lost job lock's is (takenOver): its
 * lock lapses unrenewed and a stalled check hands it to another attempt (counted stalled:
 * worker.maxStalledCount bounds a job that keeps losing its locks). Unless the job is gone from Redis
 * too (a flush or an obliterate takes the chatbot lock with it, and the chatbot lock's loss is heard
 * first): no stalled check will find it, no attempt take it over; the run stops with JOB_LOST, the
 * stopped run it is (`aborted`, alerted). So the stop waits for one look at the job's state, bounded by
 * a sixth of the lock's TTL (at most JOB_LOOK_MS): half the margin before the lock can expire is kept.
 * Which lock and why: logged.
 */
function chatbotLocksLost<P>(s: RunScope<P>): ChatbotsStop | undefined {
  if (!s.held.length) return undefined;
  const lost = AbortSignal.any(s.held.map((l) => l.lost));
  const stop = new AbortController();
  const lookMs = Math.min(JOB_LOOK_MS, Math.floor(s.deps.lockTtlMs / 6));
  let decided: Promise<string> | undefined;
  const decide = () =>
    (decided ??= jobGone(() => s.job.getState(), lookMs).then((gone) => {
      const why = causeOf(lost.reason);
      if (gone) s.logger.error({ why }, `${CHATBOT_LOCK_LOST}, and ${JOB_LOST}: the run stops`);
      else s.logger.warn({ why }, `${CHATBOT_LOCK_LOST}: the run stops`);
      const reason = gone ? JOB_LOST : CHATBOT_LOCK_LOST;
      stop.abort(reason);
      return reason;
    }));
  const onLost = () => void decide();
  if (lost.aborted) onLost();
  else lost.addEventListener('abort', onLost, { once: true });
  return {
    signal: stop.signal,
    why: () => (lost.aborted ? decide() : Promise.resolve(undefined)),
    close: () => lost.removeEventListener('abort', onLost),
  };
}

const causeOf = (reason: unknown) => (reason instanceof Error ? reason.message : String(reason));

/**
 * A run stopped because its job lock was lost: the job is another attempt's now (put back to wait
 * by a sibling's sweep or a stalled check, or about to be), which runs what this one left and
 * records the job's outcome; or because a chatbot lock of the job was lost (chatbotLocksLost): its
 * job lock, no longer renewed, lapses and a stalled check does the same. This one is recorded as it
 * ended, no failed run: its lanes `taken-over` (stoppedOutcome: their change log records and alert
 * rules say it too; their writes stay in the change log, under the job's run id, for `runs show` and
 * undo), or what it came to before it heard of the loss (a lane that finished). The job is left as
 * it is: completing or failing it needs the lock this attempt lost, or the chatbot's.
 */
function takenOver<P>(s: RunScope<P>, report: RunReport): Promise<Ended> {
  return leftAsItIs(s, report, {
    said: (r) => r.outcome === 'taken-over',
    then: 'then taken over: its job lock or a chatbot lock was lost, another attempt runs the job and records its outcome',
    level: 'warn',
  });
}

/**
 * A run stopped because its job was lost from Redis with its lock: recorded as it ended, a stopped
 * run (its lanes `aborted`: their alert rules count it), said as an error naming what to do. No
 * attempt follows: there is no job to retry, complete or fail.
 */
function lostWithJob<P>(s: RunScope<P>, report: RunReport): Promise<Ended> {
  return leftAsItIs(s, report, {
    said: (r) => r.summary.includes(JOB_LOST),
    then: `then stopped: ${JOB_LOST}`,
    level: 'error',
  });
}

/** A run whose job is left as it is (takenOver, lostWithJob): recorded as it ended, not retried, its summary adding `then` unless it `said` it. */
async function leftAsItIs<P>(
  s: RunScope<P>,
  report: RunReport,
  how: { said: (r: RunReport) => boolean; then: string; level: 'warn' | 'error' },
): Promise<Ended> {
  const left = (r: RunReport): RunReport => ({
    ...r,
    retryable: false,
    retryAt: undefined,
    summary: how.said(r) ? r.summary : `${r.summary} — ${how.then}`,
  });
  await s.record(report, left);
  s.logger[how.level]({ outcome: report.outcome }, left(report).summary);
  return { leave: true };
}

/** A run an operator cancelled (control.ts): its report as `cancelled` (the word its lanes' change log records say: stoppedOutcome), by whom. */
function cancelledReport<P>(s: RunScope<P>, report: RunReport, about: RunTarget): RunReport {
  const reason: unknown = s.cancel?.signal.reason;
  const by = reason instanceof CancelRequest ? reason.by : 'an operator';
  return {
    ...report,
    outcome: stoppedOutcome(reason),
    retryable: false,
    retryAt: undefined,
    summary: `${s.def.name} ${describe(about)} cancelled by ${by}: ${report.summary}`,
  };
}

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
function payloadOf<P>(def: JobDefinition<P, RunReport>, job: Job, jobId: string): P {
  const parsed = def.payload.safeParse(job.data);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${formatPath(i.path) || '(root)'}: ${i.message}`).join('; ');
  throw new UnrecoverableError(`job ${def.name} ${jobId}: payload invalid: ${issues}`);
}
