// `feedsync undo RUN [--dry-run] [--force] [--json]`: put a chatbot back as it was before run RUN,
// listing for listing (src/undo/). Takes the chatbot's lock as a sync does (a dry run takes none),
// goes into run history beside the syncs, and prints the report (a table on stderr, or one JSON
// document on stdout with --json).
// Exit status: 0 undone; 1 failed (the service or the change log could not be used); 2 usage (no
// such run, a dry run, a feed no longer in the config); 3 the change log did not keep all of the run
// and --force was not given (nothing done); 4 partial (conflicts left alone, writes that failed, or
// with --force parts that could not be undone).
import { dirname, join } from 'node:path';
import { createCallCounter } from '../api/call-counter.js';
import { loadConfig } from '../config/load.js';
import { causeMessage } from '../errors.js';
import { recordForegroundRun } from '../queue/run-records.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { acquireForegroundLock, chatbotWaitNotice } from '../locks/target-lock.js';
import { stateDir } from '../runtime.js';
import { findUndoTarget, formatUndoReport, undoRun, type UndoReport } from '../undo/index.js';
import { exitForOutcome, printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface UndoCliOptions {
  config: string;
  run: string;
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
}

export async function run(opts: UndoCliOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const calls = createCallCounter();
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write(
      `\nfeedsync: ${signal}: finishing the calls in flight, then reporting (again to quit at once)\n`,
    );
    stop.abort(new Error(signal));
  };
  // A configured Redis that does not answer fails the undo before anything is read or written: the
  // runtime's "Redis must answer" check (createRuntime). No --no-redis: the run to undo, its change
  // log and the chatbot's lock are in Redis.
  const report = await withRuntime(
    loaded,
    async ({ api, store, changeLog, redis }, logger) => {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const { feed } = await findUndoTarget(changeLog, loaded, opts.run);
        const undo = (signal: AbortSignal) =>
          undoRun(
            opts.run,
            { api, store, changeLog, config: loaded, logger, signal, calls },
            { dryRun: opts.dryRun, force: opts.force },
          );
        if (opts.dryRun) return await undo(stop.signal);
        // the chatbot's lock, the one a sync takes: an undo never runs beside a sync of the chatbot
        const lock = await acquireForegroundLock({
          chatbot: feed.chatbot,
          ...(redis && loaded.config.redis && { redis: { connection: redis, prefix: loaded.config.redis.prefix } }),
          lockDir: redis ? join(stateDir(loaded), 'locks') : join(dirname(store.location), 'locks'),
          waitMs: feed.deadlineMinutes * 60_000,
          ttlMs: loaded.config.worker.lockDurationMs,
          signal: stop.signal,
          // said at once, as sync says it: else the undo sits silent behind the run
          onWait: (holder) =>
            logger.warn(
              { chatbot: feed.chatbot },
              chatbotWaitNotice(feed.chatbot, holder, feed.deadlineMinutes, 'nothing is undone'),
            ),
          onUnreleased: (notice, err) => logger.warn({ err, chatbot: feed.chatbot }, notice),
        }).catch((err: unknown) => {
          throw new Error(`the lock of chatbot ${feed.chatbot} could not be taken: ${causeMessage(err)}`);
        });
        if (!lock)
          throw new Error(
            `chatbot ${feed.chatbot} is being synced by another process; nothing was undone, try again when it has finished`,
          );
        let report: UndoReport;
        try {
          report = await undo(AbortSignal.any([stop.signal, lock.lost]));
        } finally {
          await lock.release(); // (one that fails is said by onUnreleased, and resolves: the undo's outcome is what is reported)
        }
        if (redis && loaded.config.redis) {
          await recordForegroundRun(
            redis,
            loaded.config.redis.prefix,
            loaded.config.worker.historySize,
            QUEUE_NAMES.undo,
            { feed: feed.name, chatbot: feed.chatbot },
            report,
          ).catch((err: unknown) => logger.warn({ err }, 'run history could not be saved'));
        }
        return report;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
    { onCall: calls.onCall },
  );
  if (opts.json) printJson({ report });
  else {
    process.stderr.write(formatUndoReport(report));
    if (!report.dryRun && report.outcome !== 'guard')
      process.stderr.write(
        `  this undo is run ${report.runId}: \`${feedsyncCommand()} undo ${report.runId} --config ${opts.config}\` undoes it\n`,
      );
  }
  return exitForOutcome(report.outcome);
}
