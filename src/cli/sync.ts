// `feedsync sync`: sync each selected feed to its chatbots once, with no Redis needed (runs/foreground.ts). Reports go to
// stderr as tables, or to stdout as one JSON document ({ reports: [...] }) with --json.
// Exit status: 3 when a guard held deletes back, 1 when items failed or the run could not finish,
// 2 for bad usage or config, 0 otherwise. SIGINT/SIGTERM stop new calls and report what was done.
import { createCallCounter } from '../api/call-counter.js';
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { join } from 'node:path';
import { runForeground } from '../runs/foreground.js';
import { maskDeep } from '../secrets.js';
import { boundReport } from '../queue/report-size.js';
import { stateDir } from '../runtime.js';
import { createEchoFiles } from '../state/echo-files.js';
import { createProgressLine, formatSyncReport, lanesOf, type SyncReport } from '../sync/index.js';
import { exitForOutcome, printJson, worstExit } from './exit.js';
import { withRuntime } from './with-runtime.js';
import { reconcileAsk } from '../feeds/reso/reso-asks.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface SyncCliOptions {
  config: string;
  feed?: string[];
  dryRun?: boolean;
  force?: boolean;
  full?: boolean;
  reconcile?: boolean;
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
    process.stderr.write(
      `\nfeedsync: ${signal}: finishing the calls in flight, then reporting (again to quit at once)\n`,
    );
    stop.abort(new Error(signal));
  };
  const progress = createProgressLine();
  const reports: SyncReport[] = [];
  let uncoordinated: string | undefined;
  await withRuntime(
    loaded,
    async ({ api, store, changeLog, redis, budgets, ...runtime }, logger) => {
      uncoordinated = runtime.uncoordinated;
      // beside running workers a --no-redis run warns in words, --json or not; else the note of the text report
      // (asked through BullMQ, loaded only then: a run without Redis configured never loads it)
      const warning = uncoordinated
        ? await import('./workers-beside.js').then((m) => m.workersBesideWarning(loaded))
        : undefined;
      if (warning) process.stderr.write(`feedsync: ${warning}\n`);
      else if (uncoordinated && !opts.json) process.stderr.write(`feedsync: ${uncoordinated}\n`);
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // this process pages each chatbot once: what the last run's paging learned is read from files
      // (a dry run only reads them: it leaves no trace)
      const files = createEchoFiles(join(stateDir(loaded), 'page-echo'), logger);
      const echoFiles = opts.dryRun ? { read: files.read, write: async () => {} } : files;
      try {
        // the feeds that share a chatbot run together: each chatbot is paged once, each feed read once (runs/foreground.ts)
        await runForeground(
          {
            config: loaded,
            lanes: feeds.flatMap(lanesOf),
            opts: {
              dryRun: opts.dryRun,
              force: opts.force,
              full: opts.full,
              ...(opts.reconcile && { ask: reconcileAsk }),
            },
            ...(changeLog && { changeLog }),
            signal: stop.signal,
            onReport: (report, history) => {
              progress.clear();
              reports.push(report);
              if (!opts.json) process.stderr.write(reportText(report, opts.config, history));
            },
          },
          {
            api,
            store,
            configFeeds: loaded.config.feeds,
            logger,
            baseDir: loaded.dir,
            apiConfig: loaded.config.api,
            ...(loaded.fromEnv && { fromEnv: loaded.fromEnv }),
            calls,
            onProgress: progress.onProgress,
            budgets,
            echoFiles,
            media: loaded.config.media,
            ...(redis && { redis }),
          },
        );
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
  if (opts.json)
    printJson(
      { ...(uncoordinated && { uncoordinated }), reports: reports.map((r) => maskDeep(boundReport(r), r.feed)) },
      '',
    );
  return exitStatus(reports);
}

/** The most serious of the runs' statuses (src/cli/exit.ts says the order and why). */
function exitStatus(reports: readonly SyncReport[]): number {
  return worstExit(reports.map((r) => exitForOutcome(r.outcome)));
}

/** A run's report for people, then where its changes are read, as a command to paste (a dry run has no run id: none). */
function reportText(report: SyncReport, config: string, history: string | undefined): string {
  const changes =
    'runId' in report ? `  changes: ${feedsyncCommand()} runs show ${report.runId} --config ${config}\n` : '';
  return `${formatSyncReport(report)}${changes}${history ?? ''}\n`;
}
