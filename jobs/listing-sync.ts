// Sync one feed to its chatbot. The report is the job's return value; a guard trip or a config
// error fails the job without retry, a transient failure (report.retryable) is retried with backoff,
// a partial run (some items failed) completes: see src/queue/retry-policy.ts.
import { z } from 'zod';
import { selectFeeds } from '../src/config/select.js';
import type { JobDefinition } from '../src/queue/index.js';
import { runFeed, type FeedRunReport } from '../src/runs/run-feed.js';
import { feedsOfChatbot } from '../src/sync/index.js';

export const ListingSyncPayload = z.strictObject({
  feed: z.string().min(1),
  dryRun: z.boolean().optional(),
  force: z.boolean().optional(),
  full: z.boolean().optional(),
});
export type ListingSyncPayload = z.infer<typeof ListingSyncPayload>;

const feedOf = (name: string, loaded: Parameters<JobDefinition['target']>[1]) => selectFeeds(loaded.config.feeds, [name], loaded.file)[0]!;

export const listingSync: JobDefinition<ListingSyncPayload, FeedRunReport> = {
  name: 'listing-sync',
  kind: 'sync',
  payload: ListingSyncPayload,
  exclusive: true,
  logsSummary: true,
  target: (p, config) => ({ feed: p.feed, chatbot: feedOf(p.feed, config).chatbot }),
  process: (p, ctx) =>
    runFeed(
      feedOf(p.feed, ctx.config),
      {
        api: ctx.runtime.api,
        store: ctx.runtime.store,
        chatbotFeeds: feedsOfChatbot(ctx.config.config.feeds, feedOf(p.feed, ctx.config).chatbot),
        logger: ctx.logger,
        baseDir: ctx.config.dir,
        apiConfig: ctx.config.config.api,
        signal: ctx.signal,
        calls: ctx.calls,
        budgets: ctx.runtime.budgets,
        media: ctx.config.config.media,
      },
      { dryRun: p.dryRun, force: p.force, full: p.full, attempt: ctx.attempt },
      { config: ctx.config, changeLog: ctx.runtime.changeLog, job: { jobId: ctx.jobId, attempt: ctx.attempt.made } },
    ),
};
