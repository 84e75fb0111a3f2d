// `feedsync sync`: sync each selected feed to its chatbot once, with no Redis needed. Reports go to
// stderr as tables, or to stdout as one JSON document ({ reports: [...] }) with --json.
// Exit status: 3 when a guard held deletes back, 1 when items failed or the run could not finish,
// 2 for bad usage or config, 0 otherwise. SIGINT/SIGTERM stop new calls and report what was done.
import { createCallCounter } from '../api/call-counter.js';
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { recordForegroundRun } from '../queue/history.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { redisSettings } from '../queue/connection.js';
import { dirname, join } from 'node:path';
import type { FeedConfig } from '../config/schema.js';
import { causeMessage } from '../errors.js';
import { maskDeep } from '../secrets.js';
import { boundReport } from '../queue/report-size.js';
import { acquireForegroundLock, type TargetLock } from '../queue/target-lock.js';
import { runFeed, type FeedRunReport } from '../runs/run-feed.js';
import { stateDir } from '../runtime.js';
import { createEchoFiles } from '../state/echo-files.js';
import { failedReport, feedsOfChatbot, formatSyncReport, type SyncReport } from '../sync/index.js';
import { createProgressLine } from '../sync/progress.js';
import { exitForOutcome, printJson, worstExit } from './exit.js';
import { withRuntime } from './with-runtime.js';

export interface SyncCliOptions {
  config: string;
  feed?: string[];
  dryRun?: boolean;
  force?: boolean;
  full?: boolean;
  json?: boolean;
  /** false with `--no-redis` (commander's negated option) */
  redis?: boolean;
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
  let uncoordinated: string | undefined;
  await withRuntime(
    loaded,
    async ({ api, store, changeLog, redis, budgets, ...runtime }, logger) => {
      uncoordinated = runtime.uncoordinated;
      if (uncoordinated && !opts.json) process.stderr.write(`feedsync: ${uncoordinated}\n`);
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // this process pages each chatbot once: what the last run's paging learned is read from files
      // (a dry run only reads them: it leaves no trace)
      const files = createEchoFiles(join(stateDir(loaded), 'page-echo'), logger);
      const echoFiles = opts.dryRun ? { read: files.read, write: async () => {} } : files;
      /**
       * One feed under its chatbot's lock (the workers' Redis lock, else a lock file beside the
       * state), waiting up to the feed's deadline for a run elsewhere to finish. A lost lock aborts
       * the run before its next write. Whatever goes wrong, the feed gets a report and the others run.
       */
      const runLocked = async (feed: FeedConfig, fn: (signal: AbortSignal) => Promise<FeedRunReport>): Promise<FeedRunReport | SyncReport> => {
        const failed = (message: string) => failedReport({ feed: feed.name, chatbot: feed.chatbot, message, stateLocation: store.location, dryRun: opts.dryRun });
        // a dry run writes nothing: it needs no lock, and never waits behind a run
        if (opts.dryRun) return fn(stop.signal).catch((err: unknown) => failed(causeMessage(err)));
        let lock: TargetLock | undefined;
        try {
          lock = await acquireForegroundLock({
            chatbot: feed.chatbot,
            ...(redis && loaded.config.redis && { redis: { connection: redis, prefix: redisSettings(loaded).prefix } }),
            lockDir: redis ? join(stateDir(loaded), 'locks') : join(dirname(store.location), 'locks'),
            waitMs: feed.deadlineMinutes * 60_000,
            signal: stop.signal,
          });
        } catch (err) {
          return failed(`the lock of chatbot ${feed.chatbot} could not be taken: ${causeMessage(err)}`);
        }
        if (!lock) return failed(`chatbot ${feed.chatbot} is being synced by another process (a worker job or another \`feedsync sync\`); nothing was done, try again when it has finished`);
        try {
          return await fn(AbortSignal.any([stop.signal, lock.lost]));
        } catch (err) {
          logger.error({ err, feed: feed.name }, 'sync failed');
          return failed(causeMessage(err));
        } finally {
          await lock.release().catch(() => {});
        }
      };
      try {
        for (const feed of feeds) {
          if (stop.signal.aborted) break;
          const report = await runLocked(feed, async (signal) =>
            runFeed(
              feed,
              { api, store, chatbotFeeds: feedsOfChatbot(loaded.config.feeds, feed.chatbot), logger, baseDir: loaded.dir, apiConfig: loaded.config.api, signal, calls, onProgress: progress.onProgress, budgets, echoFiles, media: loaded.config.media },
              { dryRun: opts.dryRun, force: opts.force, full: opts.full },
              { config: loaded, changeLog },
            ),
          );
          progress.clear();
          reports.push(report);
          // With Redis, a foreground run goes into the run history beside the queued ones (`feedsync runs`);
          // a record Redis refused is said below the report (this process ends: it cannot write it later).
          let historyProblem: string | undefined;
          if (redis && loaded.config.redis) {
            historyProblem = await recordForegroundRun(redis, redisSettings(loaded).prefix, loaded.config.worker.historySize, QUEUE_NAMES.sync, { feed: feed.name, chatbot: feed.chatbot }, report).then(
              () => undefined,
              (err: unknown) => {
                logger.warn({ err }, 'run history could not be saved');
                return `  run history: not recorded in Redis (${causeMessage(err)}); \`feedsync runs\` will not list this run\n`;
              },
            );
          }
          const changes = 'runId' in report ? `  changes: feedsync runs show ${report.runId} --config ${opts.config}\n` : '';
          if (!opts.json) process.stderr.write(`${formatSyncReport(report)}${changes}${historyProblem ?? ''}\n`);
        }
      } finally {
        progress.clear();
        await files.settled();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
    { onCall: calls.onCall, noRedis: opts.redis === false },
  );
  // each report masked by its feed's secrets: one feed's token never masks another feed's report
  // bounded as the stored reports are (first items of each list, an `omitted` count): 1M rejected
  // records still print one document
  if (opts.json) printJson({ ...(uncoordinated && { uncoordinated }), reports: reports.map((r) => maskDeep(boundReport(r), r.feed)) }, '');
  return exitStatus(reports);
}

/** The most serious of the runs' statuses (src/cli/exit.ts says the order and why). */
export function exitStatus(reports: readonly SyncReport[]): number {
  return worstExit(reports.map((r) => exitForOutcome(r.outcome)));
}
