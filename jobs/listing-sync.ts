// Sync one feed to its chatbots, or (payload `chatbot`: `enqueue sync --chatbot SN`) every feed of
// one chatbot, its list paged once for all of them. The reports are the job's return value (one
// per lane, the worst outcome leads); a guard trip or a config error fails the job without retry,
// a transient failure (report.retryable) is retried with backoff, a partial run (some items failed)
// completes: see src/queue/retry-policy.ts. The run itself is runs/run-lanes.ts, as for the CLI.
import { z } from 'zod';
import { selectFeeds } from '../src/config/select.js';
import type { LoadedConfig } from '../src/config/schema.js';
import { ConfigError } from '../src/errors.js';
import type { JobContext, JobDefinition } from '../src/queue/index.js';
import { runLanes, type FeedRunReport } from '../src/runs/run-lanes.js';
import { chatbotsOf, lanesOf, type Lane } from '../src/sync/index.js';

export const ListingSyncPayload = z
  .strictObject({
    feed: z.string().min(1).optional(),
    chatbot: z.string().min(1).optional(),
    dryRun: z.boolean().optional(),
    force: z.boolean().optional(),
    full: z.boolean().optional(),
  })
  .refine((p) => (p.feed === undefined) !== (p.chatbot === undefined), { message: 'names exactly one of feed and chatbot' });
export type ListingSyncPayload = z.infer<typeof ListingSyncPayload>;

/** The lanes a job runs: the feed's (into each of its chatbots), or every lane into the chatbot. */
export function lanesOfJob(p: ListingSyncPayload, loaded: LoadedConfig): Lane[] {
  if (p.feed !== undefined) return selectFeeds(loaded.config.feeds, [p.feed], loaded.file).flatMap(lanesOf);
  const lanes = loaded.config.feeds.flatMap(lanesOf).filter((l) => l.chatbot === p.chatbot);
  if (lanes.length === 0) throw new ConfigError(`no feed of ${loaded.file} writes into chatbot ${p.chatbot}`);
  return lanes;
}

/** One report for the job: the lanes' reports, the worst outcome first (it decides retry or not). */
export type ListingSyncReport = FeedRunReport & { lanes?: FeedRunReport[] };

const SEVERITY = ['failed', 'guard', 'unavailable', 'aborted', 'partial', 'ok'];

function jobReport(reports: FeedRunReport[]): ListingSyncReport {
  const sorted = [...reports].sort((a, b) => SEVERITY.indexOf(a.outcome) - SEVERITY.indexOf(b.outcome));
  const lead = sorted[0]!;
  if (reports.length === 1) return lead;
  return { ...lead, summary: reports.map((r) => r.summary).join(' | '), retryable: reports.some((r) => r.retryable && r.outcome !== 'ok'), lanes: reports };
}

async function process(p: ListingSyncPayload, ctx: JobContext): Promise<ListingSyncReport> {
  const lanes = lanesOfJob(p, ctx.config);
  const reports = await runLanes(
    lanes,
    {
      api: ctx.runtime.api,
      store: ctx.runtime.store,
      configFeeds: ctx.config.config.feeds,
      logger: ctx.logger,
      baseDir: ctx.config.dir,
      apiConfig: ctx.config.config.api,
      signal: ctx.signal,
      calls: ctx.calls,
      ...(ctx.runtime.budgets && { budgets: ctx.runtime.budgets }),
      media: ctx.config.config.media,
    },
    { dryRun: p.dryRun, force: p.force, full: p.full, attempt: ctx.attempt },
    { config: ctx.config, ...(ctx.runtime.changeLog && { changeLog: ctx.runtime.changeLog }), job: { jobId: ctx.jobId, attempt: ctx.attempt.made } },
  );
  return jobReport(reports);
}

export const listingSync: JobDefinition<ListingSyncPayload, ListingSyncReport> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: ListingSyncPayload,
  exclusive: true,
  logsSummary: true,
  // the locks: every chatbot the job's lanes write into (queue/target-lock.ts), all held before it runs
  chatbots: (p, config) => lanesOfJob(p, config).map((l) => l.chatbot),
  // for the run history and logs: the feed, under its first chatbot
  target: (p, config) => (p.feed !== undefined ? { feed: p.feed, chatbot: chatbotsOf(selectFeeds(config.config.feeds, [p.feed], config.file)[0]!)[0]! } : { chatbot: p.chatbot! }),
  process,
};
