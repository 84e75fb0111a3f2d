// `feedsync sync`: sync each selected feed to its chatbot once, with no Redis needed. Reports go to
// stderr as tables, or to stdout as one JSON document ({ reports: [...] }) with --json.
// Exit status: 3 when a guard held deletes back, 1 when items failed or the run could not finish,
// 2 for bad usage or config, 0 otherwise. SIGINT/SIGTERM stop new calls and report what was done.
import { createCallCounter } from '../api/call-counter.js';
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { recordForegroundRun } from '../queue/history.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { runFeed } from '../runs/run-feed.js';
import { feedsOfChatbot, formatSyncReport, type SyncReport } from '../sync/index.js';
import { createProgressLine } from '../sync/progress.js';
import { EXIT, exitForOutcome, printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';

export interface SyncCliOptions {
  config: string;
  feed?: string[];
  dryRun?: boolean;
  force?: boolean;
  full?: boolean;
  json?: boolean;
}

export async function run(opts: SyncCliOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const feeds = selectFeeds(loaded.config.feeds, opts.feed, loaded.file);
  const calls = createCallCounter();
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(130); // a second Ctrl-C: the person means it
    process.stderr.write(`\nfeedsync: ${signal}: finishing the calls in flight, then reporting (again to quit at once)\n`);
    stop.abort(new Error(signal));
  };
  const progress = createProgressLine();
  const reports: SyncReport[] = [];
  await withRuntime(
    loaded,
    async ({ api, store, changeLog, redis, budgets }, logger) => {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        for (const feed of feeds) {
          if (stop.signal.aborted) break;
          const report = await runFeed(
            feed,
            { api, store, chatbotFeeds: feedsOfChatbot(loaded.config.feeds, feed.chatbot), logger, baseDir: loaded.dir, apiConfig: loaded.config.api, signal: stop.signal, calls, onProgress: progress.onProgress, budgets },
            { dryRun: opts.dryRun, force: opts.force, full: opts.full },
            { config: loaded, changeLog },
          );
          progress.clear();
          reports.push(report);
          // With Redis, a foreground run goes into the run history beside the queued ones (`feedsync runs`).
          if (redis && loaded.config.redis) {
            await recordForegroundRun(redis, loaded.config.redis.prefix, loaded.config.worker.historySize, QUEUE_NAMES.sync, { feed: feed.name, chatbot: feed.chatbot }, report).catch(
              (err: unknown) => logger.warn({ err }, 'run history could not be saved'),
            );
          }
          if (!opts.json) process.stderr.write(`${formatSyncReport(report)}  changes: feedsync runs show ${report.runId} --config ${opts.config}\n\n`);
        }
      } finally {
        progress.clear();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
    { onCall: calls.onCall },
  );
  if (opts.json) printJson({ reports });
  return exitStatus(reports);
}

/** The worst of the runs: a guard trip (3) before failures (1). */
export function exitStatus(reports: readonly SyncReport[]): number {
  return Math.max(EXIT.ok, ...reports.map((r) => exitForOutcome(r.outcome)));
}
