// Sync one feed to its chatbots; or (payload `feeds`: a scheduler's group of feeds due together,
// src/queue/schedules.ts) several feeds; or (payload `chatbot`: `enqueue sync --chatbot SN`) every
// feed of one chatbot: each chatbot's list paged once for all of the job's feeds. The reports are
// the job's return value (one per lane, the worst outcome leads); the run history and metrics keep
// a row per feed (historyRows). A run that finished completes the job with its outcome as the
// return value (ok, partial, guard, rejected: the queue UI names it, never "failed"); a config
// error fails the job without retry, a transient failure (report.retryable) is retried with
// backoff: see src/queue/retry-policy.ts. The run itself is runs/run-lanes.ts, as for the CLI.
import { z } from 'zod';
import { selectFeeds } from '../src/config/select.js';
import type { FeedConfig, LoadedConfig } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import { UnrecoverableError } from 'bullmq';
import { pushedAsk, reconcileAsk, type PushedKeys } from '../src/feeds/reso/reso-asks.js';
import {
  donePushed,
  followPushed,
  redisSettings,
  takePushed,
  type JobContext,
  type JobDefinition,
  type RunReport,
  type RunTarget,
} from '../src/queue/index.js';
import { alertFailedUnrun, runLanes, type FeedRunReport } from '../src/runs/run-lanes.js';
import { chatbotsOf, createRunProgress, lanesOf, type Lane } from '../src/sync/index.js';

export const ListingSyncPayload = z
  .strictObject({
    feed: z.string().min(1).optional(),
    feeds: z.array(z.string().min(1)).min(1).optional(),
    chatbot: z.string().min(1).optional(),
    dryRun: z.boolean().optional(),
    force: z.boolean().optional(),
    full: z.boolean().optional(),
    reconcile: z.boolean().optional(),
    /** a run of pushed events (RCP-028): their generation (src/queue/push-events.ts); with `feed` only */
    push: z.number().int().nonnegative().optional(),
  })
  .refine((p) => [p.feed, p.feeds, p.chatbot].filter((x) => x !== undefined).length === 1, {
    message: 'names exactly one of feed, feeds and chatbot',
  })
  .refine((p) => p.push === undefined || p.feed !== undefined, { message: 'push names one feed' });
export type ListingSyncPayload = z.infer<typeof ListingSyncPayload>;

/** The lanes a job runs: its feeds' (each into each of its chatbots), or every lane into the chatbot. */
export function lanesOfJob(p: ListingSyncPayload, loaded: LoadedConfig): Lane[] {
  if (p.chatbot === undefined) return feedsOfJob(p, loaded).flatMap(lanesOf);
  const lanes = loaded.config.feeds.flatMap(lanesOf).filter((l) => l.chatbot === p.chatbot);
  if (lanes.length === 0) throw new ConfigError(`no feed of ${loaded.file} writes into chatbot ${p.chatbot}`);
  return lanes;
}

/** The feeds a job runs, in config order. */
export function feedsOfJob(p: ListingSyncPayload, loaded: LoadedConfig): FeedConfig[] {
  if (p.chatbot !== undefined) return loaded.config.feeds.filter((f) => chatbotsOf(f).includes(p.chatbot!));
  return selectFeeds(loaded.config.feeds, p.feeds ?? [p.feed!], loaded.file);
}

/**
 * The run history's rows of a job, one per feed, each as a run of that feed alone would record it:
 * the feed's lane report, or its lanes' (a routed feed); a report that is not the lanes' (the job
 * failed before they reported) is recorded under each feed of the job.
 */
export function historyRows(
  p: ListingSyncPayload,
  report: RunReport,
  loaded: LoadedConfig,
): Array<{ target: RunTarget; report: RunReport }> {
  const feeds = feedsOfJob(p, loaded);
  const lanes = lanesOfReport(report);
  return feeds.flatMap((f) => {
    const target = { feed: f.name, chatbot: chatbotsOf(f)[0]! };
    if (!lanes) return [{ target, report }];
    const own = lanes.filter((l) => l.feed === f.name);
    return own.length ? [{ target, report: jobReport(own) }] : [];
  });
}

function lanesOfReport(report: RunReport): FeedRunReport[] | undefined {
  if ('lanes' in report && Array.isArray(report.lanes)) return report.lanes as FeedRunReport[];
  if ('feed' in report && 'counts' in report) return [report as FeedRunReport];
  return undefined;
}

/** One report for the job: the lanes' reports, the worst outcome first (it decides retry or not). */
export type ListingSyncReport = FeedRunReport & { lanes?: FeedRunReport[] };

const SEVERITY = [
  'failed',
  'rejected',
  'guard',
  'unavailable',
  'aborted',
  'cancelled',
  'taken-over',
  'handed-back',
  'partial',
  'ok',
];

function jobReport(reports: FeedRunReport[]): ListingSyncReport {
  const sorted = [...reports].sort((a, b) => SEVERITY.indexOf(a.outcome) - SEVERITY.indexOf(b.outcome));
  const lead = sorted[0]!;
  if (reports.length === 1) return lead;
  // lanes an earlier attempt of the job finished (runs/lanes-done.ts): counted, not listed one by one
  const done = reports.filter((r) => r.doneBefore).length;
  const ran = reports.filter((r) => !r.doneBefore).map((r) => r.summary);
  return {
    ...lead,
    summary: [
      ...(done
        ? [
            `${done} of ${reports.length} lanes done by an earlier attempt of this job (not paged, read or written again)`,
          ]
        : []),
      ...ran,
    ].join(' | '),
    retryable: reports.some((r) => r.retryable && r.outcome !== 'ok'),
    lanes: reports,
  };
}

async function process(p: ListingSyncPayload, ctx: JobContext): Promise<ListingSyncReport> {
  if (p.push === undefined) return run(p, ctx);
  // pushed events (RCP-028): up to push.maxKeysPerJob of those waiting when the job starts, fetched by key;
  // kept for a retry until the run ends without one to come (ok, not retryable, or its last attempt)
  const redis = ctx.runtime.redis;
  if (!redis) throw new UnrecoverableError('a push job needs the Redis its events wait in (feedsync worker)');
  const { prefix } = redisSettings(ctx.config);
  const limits = feedsOfJob(p, ctx.config)[0]!.push;
  if (!limits)
    throw new UnrecoverableError(
      `feed ${p.feed} has no push section in ${ctx.config.file} any more: its pushed events are not fetched`,
    );
  const pushed = await takePushed(redis, prefix, p.feed!, p.push, limits.maxKeysPerJob);
  const last = ctx.attempt.made >= ctx.attempt.max;
  let report: ListingSyncReport;
  try {
    report = await run(p, ctx, pushed);
  } catch (err) {
    if (last || err instanceof UnrecoverableError || err instanceof ConfigError)
      await donePushed(redis, prefix, p.feed!, p.push);
    throw err;
  }
  if (report.outcome === 'ok' || !report.retryable || last) await donePushed(redis, prefix, p.feed!, p.push);
  // what still waits (past maxKeysPerJob, or come meanwhile) gets its job, push.minIntervalMs after this one started
  await followPushed(redis, prefix, p.feed!, limits);
  return report;
}

async function run(p: ListingSyncPayload, ctx: JobContext, pushed?: PushedKeys): Promise<ListingSyncReport> {
  const lanes = lanesOfJob(p, ctx.config);
  // records read, writes done of planned, time left: the job's progress (queue UI, /status, enqueue --wait)
  const progress = createRunProgress();
  const reports = await runLanes(
    lanes,
    {
      api: ctx.runtime.api,
      store: ctx.runtime.store,
      configFeeds: ctx.config.config.feeds,
      logger: ctx.logger,
      baseDir: ctx.config.dir,
      apiConfig: ctx.config.config.api,
      ...(ctx.config.fromEnv && { fromEnv: ctx.config.fromEnv }),
      signal: ctx.signal,
      calls: ctx.calls,
      ...(ctx.progress && { onProgress: (e) => ctx.progress?.(progress.update(e)) }),
      ...(ctx.runtime.budgets && { budgets: ctx.runtime.budgets }),
      media: ctx.config.config.media,
    },
    {
      dryRun: p.dryRun,
      force: p.force,
      full: p.full,
      // what the job asks of the feed's source: a keys-only reconcile, or the records pushed events named
      ...(p.reconcile && { ask: reconcileAsk }),
      ...(pushed && { ask: pushedAsk(pushed) }),
      attempt: ctx.attempt,
    },
    {
      config: ctx.config,
      ...(ctx.runtime.changeLog && { changeLog: ctx.runtime.changeLog }),
      job: { jobId: ctx.jobId, attempt: ctx.attempt.made },
    },
  );
  return jobReport(reports);
}

export const listingSync: JobDefinition<ListingSyncPayload, ListingSyncReport> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: ListingSyncPayload,
  exclusive: true,
  logsSummary: true,
  // the locks: every chatbot the job's lanes write into (locks/target-lock.ts), all held before it runs
  chatbots: (p, config) => lanesOfJob(p, config).map((l) => l.chatbot),
  // for logs: the feed, under its first chatbot; a group's feeds; the chatbot
  target: (p, config) => {
    if (p.chatbot !== undefined) return { chatbot: p.chatbot };
    const feeds = feedsOfJob(p, config);
    return feeds.length === 1
      ? { feed: feeds[0]!.name, chatbot: chatbotsOf(feeds[0]!)[0]! }
      : { feeds: feeds.map((f) => f.name) };
  },
  // a scheduled group's feeds are each paused on their own: the job runs the others
  pausable: {
    feeds: (p) => p.feeds ?? [],
    without: (p, paused) => ({ ...p, feeds: p.feeds?.filter((f) => !paused.includes(f)) }),
  },
  historyRows,
  // its lanes' alert rules see the failure, as they see a run that threw
  failedUnrun: (p, report, ctx) =>
    alertFailedUnrun(
      lanesOfJob(p, ctx.config),
      report.summary,
      { store: ctx.runtime.store, logger: ctx.logger },
      { config: ctx.config, job: { jobId: ctx.jobId, attempt: ctx.attempt.made } },
    ),
  process,
};
