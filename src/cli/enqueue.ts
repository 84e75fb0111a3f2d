// `feedsync enqueue sync|settings|smoke`, `feedsync enqueue undo RUN`: ops reruns through the queue. Prints each job id on
// stdout; with --wait, waits for each job and prints its report, exiting as the report says. The
// selected feeds that share a chatbot are one sync job (each chatbot paged once), as `feedsync sync` runs them.
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import {
  closeQueues,
  createQueues,
  enqueueJob,
  feedsSharingAChatbot,
  findRun,
  QUEUE_NAMES,
  waitForJob,
  type Enqueued,
  type JobKind,
  type RunTarget,
} from '../queue/index.js';
import { EXIT, exitForOutcome, printJson, worstExit } from './exit.js';
import { openOpsRedis, type OpsRedis } from './ops-redis.js';
import { selectChatbots, selectFeeds } from '../config/select.js';
import { chatbotsOf } from '../config/feed-chatbots.js';
import type { LoadedConfig } from '../config/schema.js';
import { openChangeLog } from '../change-log/open.js';
import { findUndoTarget } from '../undo/undo-run.js';
import { feedsyncCommand } from '../format/invocation.js';
import { readJobReport, type JobReport, type ReportKind } from './job-report.js';

export interface EnqueueOptions {
  job: string;
  /** undo: the run to undo */
  run?: string;
  config: string;
  feed?: string[];
  chatbot?: string[];
  dryRun?: boolean;
  force?: boolean;
  /** sync: a full pull of an incremental RESO feed */
  full?: boolean;
  /** sync: a keys-only reconcile of a RESO feed */
  reconcile?: boolean;
  wait?: boolean;
  /** with wait: seconds to wait at most (the job goes on) */
  timeout?: number;
  json?: boolean;
}

interface Planned {
  target: RunTarget;
  key: string;
  data: Record<string, unknown>;
  /** what the job is, for its lines, when not `<kind> <key>` (an undo's key is `undo:RUN`) */
  label?: string;
}

type Result = { target: RunTarget; queue: string } & Enqueued & {
    state?: string;
    report?: unknown;
    error?: string;
    exit?: number;
  };

/** What one enqueue runs with: the queues of the config's Redis, named as the messages name it. */
interface Queueing extends Pick<OpsRedis, 'redis' | 'prefix' | 'named' | 'answer' | 'failure'> {
  kind: ReportKind;
  opts: EnqueueOptions;
  queues: ReturnType<typeof createQueues>;
}

export async function run(opts: EnqueueOptions): Promise<number> {
  const kind = jobKind(opts.job);
  if (opts.timeout !== undefined && !(opts.timeout > 0))
    throw new ConfigError('--timeout must be a positive number of seconds');
  const loaded = await loadConfig(opts.config);
  const planned = kind === 'undo' ? await planUndo(loaded, opts) : plan(kind, loaded.config, opts, loaded.file);
  const { redis, prefix, named, answer, failure, close } = await openOpsRedis(loaded, 'enqueue');
  const queues = createQueues(redis, prefix);
  const q: Queueing = { kind, opts, redis, prefix, named, answer, failure, queues };
  try {
    const results: Result[] = [];
    for (const p of planned) results.push(await enqueueOne(q, p));
    if (!opts.wait) {
      if (opts.json) printJson({ jobs: results });
      return EXIT.ok;
    }
    const workers = await watchWorkers(q);
    const deadline = opts.timeout ? AbortSignal.timeout(opts.timeout * 1000) : undefined;
    const progress = await progressLine(kind, opts);
    try {
      for (const r of results) await waitFor(q, r, deadline, progress);
    } finally {
      workers.stop();
    }
    if (opts.json) printJson({ jobs: results });
    return worstExit(results.map((r) => r.exit ?? EXIT.ok));
  } finally {
    await closeQueues(queues);
    await close();
  }
}

/** One job queued (or joined), its id on stdout and what happened to it on stderr. */
async function enqueueOne(q: Queueing, p: Planned): Promise<Result> {
  const { kind, opts } = q;
  const enqueued = await q.answer(enqueueJob(q.redis, q.queues, kind, p.key, p.data));
  if (!opts.json) process.stdout.write(`${enqueued.jobId}\n`);
  // a sync's run id is its job's and attempt's (change-log/recorder.ts newRunId): what `runs show` takes once it has run
  const runNote =
    kind === 'sync' && !opts.wait ? `; its run, once done: ${feedsyncCommand()} runs show ${enqueued.jobId}.1` : '';
  if (!opts.json)
    process.stderr.write(`${describeStatus(p.label ?? `${kind} ${p.key}`, enqueued)} in ${q.named}${runNote}\n`);
  return { queue: QUEUE_NAMES[kind], target: p.target, ...enqueued };
}

/** How often a waiting `enqueue --wait` looks whether a worker still consumes the queue. */
const WORKERS_CHECK_MS = 5_000;

/**
 * Nobody consumes the queue: say so now rather than wait in silence, and again when the last worker
 * goes while the command waits (a shutdown hands its running job back to wait, where it stays until
 * a worker starts). `stop` when the wait ends.
 */
async function watchWorkers(q: Queueing): Promise<{ stop(): void }> {
  const queue = q.queues[q.kind];
  let consumed = (await q.answer(queue.getWorkersCount())) > 0;
  if (!consumed) warnWithoutWorker(q, '');
  let looking = false;
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    queue.getWorkersCount().then(
      (n) => {
        if (n === 0 && consumed) warnWithoutWorker(q, ' any more');
        consumed = n > 0;
        looking = false;
      },
      // Redis failing: this look stops, and the wait itself says what Redis answered
      () => clearInterval(timer),
    );
  }, WORKERS_CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function warnWithoutWorker({ kind, opts, named }: Queueing, since: string): void {
  process.stderr.write(
    `feedsync: warning: no worker is consuming queue ${QUEUE_NAMES[kind]} on ${named}${since}; ` +
      `the job runs when one starts (\`${feedsyncCommand()} worker --config ${opts.config}\`)${opts.timeout ? '' : '; --timeout SECONDS stops waiting'}\n`,
  );
}

/** Waits for the job to end (or the deadline) and fills in its state, report and exit; prints the report unless --json. */
async function waitFor(
  q: Queueing,
  r: Result,
  deadline: AbortSignal | undefined,
  progress: Awaited<ReturnType<typeof progressLine>>,
): Promise<void> {
  const { kind, opts } = q;
  const done = await waitForJob(q.redis, q.queues, kind, r.jobId, deadline, progress?.show)
    .catch((err: unknown) => {
      if (deadline?.aborted) return undefined;
      throw q.failure(err);
    })
    .finally(() => progress?.clear());
  if (!done) {
    r.state = (await q.answer(q.queues[kind].getJobState(r.jobId))) ?? 'unknown';
    r.error = `gave up waiting after ${opts.timeout} s; job ${r.jobId} is ${r.state} and goes on (see \`${feedsyncCommand()} runs\`)`;
    r.exit = EXIT.failed;
    if (!opts.json) process.stderr.write(`feedsync: ${r.error}\n`);
    return;
  }
  if (done.state === 'completed') {
    r.state = 'completed';
    r.report = done.returnvalue;
    r.exit = exitForOutcome(fieldOf(done.returnvalue, 'outcome'));
  } else {
    // A failed job has no return value: its report is in run history.
    const recorded = await q.answer(findRun(q.redis, q.prefix, r.target, r.jobId));
    r.state = 'failed';
    r.error = done.failedReason;
    r.report = recorded?.report;
    r.exit = exitForFailure(recorded?.report);
  }
  // the report as its kind's formatter takes it: a value of another shape is said, not printed
  const read = r.report === undefined ? undefined : readJobReport(kind, r.report);
  const unreadable = read && 'problem' in read ? unreadableReport(q, r, read.problem) : undefined;
  if (unreadable) {
    r.error = r.state === 'failed' ? `${r.error}; ${unreadable}` : unreadable;
    // a completed job's outcome is in the value that cannot be read: nothing says the run went well
    r.exit = r.state === 'failed' ? r.exit : EXIT.failed;
  }
  if (!opts.json) {
    process.stderr.write(read && 'report' in read ? await formatReport(read.report) : '');
    if (r.state === 'failed') process.stderr.write(`job ${r.jobId} failed: ${r.error}\n`);
    else if (unreadable) process.stderr.write(`feedsync: ${unreadable}\n`);
    for (const runId of runIdsOf(r.report))
      process.stderr.write(`  changes: ${feedsyncCommand()} runs show ${runId} --config ${opts.config}\n`);
  }
}

/** What is said of a job whose report is not one of its kind: the job, what is wrong, where to look and why it may be so. */
function unreadableReport({ kind, opts }: Queueing, r: Result, problem: string): string {
  const what = r.state === 'completed' ? 'return value' : 'report kept in run history';
  return (
    `job ${r.jobId} (${kind}) ${r.state}, but its ${what} is not a ${kind} report this feedsync reads (${problem}), so what the run did is not known from it; ` +
    `see it in \`${feedsyncCommand()} runs --config ${opts.config}\` or the queue UI (a worker of another feedsync version may have run it: run the workers and this command at one version)`
  );
}

/**
 * On a terminal, a sync job's progress as it runs, on stderr's status line ("homes: writing
 * 1,200/3,400 (35%), about 2 min left"), cleared before the report; elsewhere (logs, pipes, --json) nothing.
 */
async function progressLine(
  kind: JobKind,
  opts: EnqueueOptions,
): Promise<{ show(data: unknown): void; clear(): void } | undefined> {
  if (kind !== 'sync' || opts.json || !process.stderr.isTTY) return undefined;
  const [{ describeProgress, RunProgress }, { stderrLine }] = await Promise.all([
    import('../sync/index.js'),
    import('../terminal.js'),
  ]);
  return {
    show: (data) => {
      const p = RunProgress.safeParse(data);
      if (p.success) stderrLine.show(describeProgress(p.data));
    },
    clear: () => stderrLine.clear(),
  };
}

function jobKind(job: string): ReportKind {
  if (job === 'sync' || job === 'settings' || job === 'smoke' || job === 'undo') return job;
  throw new ConfigError(`unknown job "${job}": use sync, settings, smoke or undo RUN`);
}

/** An undo job: the run's feed and chatbot come from the change log (the job's lock and history are the chatbot's). */
async function planUndo(loaded: LoadedConfig, opts: EnqueueOptions): Promise<Planned[]> {
  if (!opts.run)
    throw new ConfigError(
      `enqueue undo needs the run to undo: \`${feedsyncCommand()} enqueue undo RUN\` (\`${feedsyncCommand()} runs\` lists them)`,
    );
  if (opts.feed?.length || opts.chatbot?.length || opts.full || opts.reconcile)
    throw new ConfigError('enqueue undo takes a run id, not --feed, --chatbot, --full or --reconcile');
  const log = await openChangeLog(loaded);
  try {
    const { feed } = await findUndoTarget(log, loaded, opts.run);
    const flags = { ...(opts.dryRun ? { dryRun: true } : {}), ...(opts.force ? { force: true } : {}) };
    return [
      {
        target: { feed: feed.name, chatbot: feed.chatbot },
        key: `undo:${opts.run}${opts.dryRun ? ':dry' : ''}`,
        label: `${opts.dryRun ? 'dry run of the ' : ''}undo of run ${opts.run}`,
        data: { run: opts.run, feed: feed.name, chatbot: feed.chatbot, ...flags },
      },
    ];
  } finally {
    await log.close();
  }
}

/** A sync job's kind of read: a full pull or a reconcile never joins a waiting job of another kind (it would lose its flag): its own dedup key. */
function readKind(opts: EnqueueOptions): { suffix: string; data: { full?: true; reconcile?: true } } {
  if (opts.full && opts.reconcile)
    throw new ConfigError('give --full or --reconcile, not both: a full pull already finds what a reconcile finds');
  if (opts.full) return { suffix: ':full', data: { full: true } };
  if (opts.reconcile) return { suffix: ':reconcile', data: { reconcile: true } };
  return { suffix: '', data: {} };
}

function plan(kind: JobKind, config: Config, opts: EnqueueOptions, file: string): Planned[] {
  const flags = { ...(opts.dryRun ? { dryRun: true } : {}), ...(opts.force ? { force: true } : {}) };
  if (kind === 'sync') return planSync(config, opts, file, flags);
  if (opts.full || opts.reconcile)
    throw new ConfigError(
      `--${opts.full ? 'full' : 'reconcile'} is for sync (a full pull or a keys-only reconcile of a RESO feed)`,
    );
  if (opts.feed?.length) throw new ConfigError(`--feed is for sync; ${kind} takes --chatbot`);
  const has = (c: Config['chatbots'][number]) => (kind === 'settings' ? Boolean(c.settings) : Boolean(c.smoke));
  const named = selectChatbots(config.chatbots, opts.chatbot).map(({ chatbot }) => chatbot);
  const chosen = opts.chatbot?.length ? named : named.filter(has);
  const missing = chosen.filter((c) => !has(c)).map((c) => c.serialNumber);
  if (missing.length)
    throw new ConfigError(
      `chatbot ${missing.join(', ')} has no ${kind === 'settings' ? 'settings' : 'smoke message'} in ${file}`,
      file,
    );
  if (!chosen.length)
    throw new ConfigError(`no chatbot in ${file} has ${kind === 'settings' ? 'settings' : 'a smoke message'}`, file);
  const data = kind === 'settings' ? flags : {};
  return chosen.map((c) => ({
    target: { chatbot: c.serialNumber },
    key: c.serialNumber,
    data: { chatbot: c.serialNumber, ...data },
  }));
}

/** Sync jobs: one a chatbot (--chatbot alone), else one a group of the selected feeds that share a chatbot. */
function planSync(
  config: Config,
  opts: EnqueueOptions,
  file: string,
  flags: { dryRun?: boolean; force?: boolean },
): Planned[] {
  const read = readKind(opts);
  // --chatbot alone: one job per chatbot, its list paged once for all its feeds (jobs/listing-sync.ts)
  if (opts.chatbot?.length && !opts.feed?.length) {
    const chatbots = opts.chatbot.filter((sn) => config.feeds.some((f) => chatbotsOf(f).includes(sn)));
    const unknown = opts.chatbot.filter((sn) => !chatbots.includes(sn));
    if (unknown.length) throw new ConfigError(`no feed of ${file} writes into chatbot ${unknown.join(', ')}`, file);
    return chatbots.map((sn) => ({
      target: { chatbot: sn },
      key: `chatbot:${sn}${read.suffix}`,
      data: { chatbot: sn, ...flags, ...read.data },
    }));
  }
  const feeds = selectFeeds(config.feeds, opts.feed, file).filter(
    (f) => !opts.chatbot?.length || chatbotsOf(f).some((sn) => opts.chatbot!.includes(sn)),
  );
  if (!feeds.length) throw new ConfigError(`no feed to sync in ${file}`, file);
  // feeds that share a chatbot: one job, the chatbot paged once for all of them (as `feedsync sync`
  // and a scheduler's group run them); a full pull or a reconcile has its own dedup key (readKind)
  return feedsSharingAChatbot(feeds).map((group): Planned => {
    const names = group.map((f) => f.name);
    const one = names.length === 1;
    const key = one ? names[0]! : `feeds:${[...names].sort().join('+')}`;
    return {
      target: one ? { feed: names[0]!, chatbot: chatbotsOf(group[0]!)[0]! } : { feeds: names },
      key: `${key}${read.suffix}`,
      data: { ...(one ? { feed: names[0] } : { feeds: names }), ...flags, ...read.data },
    };
  });
}

function describeStatus(what: string, e: Enqueued): string {
  if (e.status === 'after-active') return `${what}: a run is active; job ${e.jobId} will start when it ends`;
  if (e.status === 'joined') return `${what}: job ${e.jobId} was already waiting; not queued twice`;
  return `${what}: queued job ${e.jobId}`;
}

/** The run ids of a job's report (each lane's; the lanes of one job share theirs): what `runs show` takes. */
function runIdsOf(report: unknown): string[] {
  const lanes = fieldOf(report, 'lanes');
  const ids = (Array.isArray(lanes) ? lanes : [report])
    .map((r) => fieldOf(r, 'runId'))
    .filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

/**
 * A field of a report not read yet (readJobReport checks it after the exit is known): undefined where
 * the value is no object or has no such field, whoever wrote it.
 */
function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

/** A failed job's status: its recorded report's outcome where that says more than "failed" (a config error: 2). */
function exitForFailure(report: unknown): number {
  if (fieldOf(report, 'code') === 'CONFIG') return EXIT.usage;
  const status = exitForOutcome(fieldOf(report, 'outcome'));
  return status === EXIT.ok ? EXIT.failed : status; // the job failed, whatever its report says
}

// Each formatter is loaded when used, so `enqueue smoke` does not load the sync.
async function formatReport(report: JobReport): Promise<string> {
  const text = await format(report);
  return text.endsWith('\n') ? text : `${text}\n`;
}

async function format(r: JobReport): Promise<string> {
  switch (r.kind) {
    case 'error':
      return r.summary;
    case 'sync': {
      // a job of several lanes (feeds run together, a routed feed): each lane's report
      const { formatSyncReport } = await import('../sync/index.js');
      return r.lanes.map((lane) => formatSyncReport(lane)).join('\n');
    }
    case 'settings':
      return (await import('../settings/index.js')).formatSettingsReport(r.report);
    case 'undo':
      return (await import('../undo/index.js')).formatUndoReport(r.report);
    case 'smoke':
      return (await import('../smoke/index.js')).formatSmokeReport(r.report);
  }
}
