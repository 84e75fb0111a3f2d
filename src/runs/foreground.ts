// `feedsync sync` in the foreground: the selected feeds' lanes, grouped so that each chatbot is
// paged once and each feed read once (runGroups), each group under the locks of all its chatbots
// (the workers' Redis lock of each, else lock files beside the state), then run by runLanes
// and, with Redis, recorded in the run history beside the queued runs. A chatbot whose lock
// cannot be taken gets failed reports for its lanes; the rest of its group runs without it.
import { dirname, join } from 'node:path';
import type { RedisClient } from '../redis/connection.js';
import type { LoadedConfig } from '../config/schema.js';
import { causeMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { recordForegroundRun } from '../queue/run-records.js';
import { QUEUE_NAMES } from '../queue/names.js';
import { redisSettings } from '../redis/settings.js';
import {
  acquireForegroundLock,
  chatbotLockName,
  chatbotWaitNotice,
  lockChatbots,
  type TargetLock,
} from '../locks/target-lock.js';
import { stateDir } from '../runtime.js';
import { failedReport, type Lane, type SyncDeps, type SyncOptions, type SyncReport } from '../sync/index.js';
import { runGroups } from './run-groups.js';
import { runLanes, type FeedRunReport, type RunContext } from './run-lanes.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface ForegroundDeps extends Omit<SyncDeps, 'changes' | 'signal'> {
  redis?: RedisClient;
  logger: Logger;
}

export interface ForegroundRun {
  config: LoadedConfig;
  lanes: readonly Lane[];
  opts: SyncOptions;
  changeLog?: RunContext['changeLog'];
  signal: AbortSignal;
  /** each report as soon as its group has run; `history`: why it is not in the run history, when it could not be recorded */
  onReport?: (report: FeedRunReport | SyncReport, history?: string) => void;
}

export async function runForeground(
  run: ForegroundRun,
  deps: ForegroundDeps,
): Promise<Array<FeedRunReport | SyncReport>> {
  const reports: Array<FeedRunReport | SyncReport> = [];
  for (const group of runGroups(run.lanes)) {
    if (run.signal.aborted) break;
    const done = await runGroup(group, run, deps);
    for (const r of done) {
      reports.push(r);
      run.onReport?.(r, await recordHistory(r, run.config, deps));
    }
  }
  return reports;
}

async function runGroup(
  lanes: readonly Lane[],
  run: ForegroundRun,
  deps: ForegroundDeps,
): Promise<Array<FeedRunReport | SyncReport>> {
  const { store } = deps;
  const failed = (lane: Lane, message: string) => ({
    ...failedReport({ feed: lane.feed.name, chatbot: lane.chatbot, message, stateLocation: store.location }),
    dryRun: Boolean(run.opts.dryRun),
  });
  // a dry run writes nothing: it needs no lock, and never waits behind a run
  const locks = run.opts.dryRun
    ? { held: [] as TargetLock[], refused: new Map<string, string>() }
    : await lockGroup(lanes, run, deps);
  try {
    const runnable = lanes.filter((l) => !locks.refused.has(l.chatbot));
    const signal = AbortSignal.any([run.signal, ...locks.held.map((l) => l.lost)]);
    let done: FeedRunReport[] = [];
    if (runnable.length) {
      try {
        done = await runLanes(runnable, { ...deps, signal }, run.opts, {
          config: run.config,
          ...(run.changeLog && { changeLog: run.changeLog }),
        });
      } catch (err) {
        deps.logger.error({ err }, 'sync failed');
        return lanes.map((l) => failed(l, locks.refused.get(l.chatbot) ?? causeMessage(err)));
      }
    }
    return lanes.map((l) => done[runnable.indexOf(l)] ?? failed(l, locks.refused.get(l.chatbot) ?? 'not run'));
  } finally {
    // (one that fails is said by onUnreleased, and resolves: the lanes' reports are what the run reports)
    for (const lock of locks.held) await lock.release();
  }
}

/**
 * The lock of each chatbot of the group (locks/target-lock.ts lockChatbots: in serial-number order,
 * as a worker job takes them), waiting up to the longest deadline of its lanes' feeds for a run
 * elsewhere to finish.
 */
async function lockGroup(
  lanes: readonly Lane[],
  run: ForegroundRun,
  deps: ForegroundDeps,
): Promise<{ held: TargetLock[]; refused: Map<string, string> }> {
  const { config } = run;
  const chatbotOf = new Map(lanes.map((l) => [chatbotLockName({ chatbot: l.chatbot }, 'sync'), l.chatbot]));
  const { held, refused } = await lockChatbots(chatbotOf.keys(), (name) => {
    const chatbot = chatbotOf.get(name)!;
    const minutes = Math.max(...lanes.filter((l) => l.chatbot === chatbot).map((l) => l.feed.deadlineMinutes));
    return acquireForegroundLock({
      chatbot,
      ...(deps.redis &&
        config.config.redis && { redis: { connection: deps.redis, prefix: redisSettings(config).prefix } }),
      lockDir: deps.redis ? join(stateDir(config), 'locks') : join(dirname(deps.store.location), 'locks'),
      waitMs: minutes * 60_000,
      ttlMs: config.config.worker.lockDurationMs,
      signal: run.signal,
      // without this line a second `feedsync sync` of the chatbot sits silent for up to the deadline
      onWait: (holder) =>
        deps.logger.warn(
          { chatbot },
          chatbotWaitNotice(chatbot, holder, minutes, 'this feed fails with nothing written'),
        ),
      onUnreleased: (notice, err) => deps.logger.warn({ err, chatbot }, notice),
    });
  });
  const why = (chatbot: string, r: { error?: unknown }) =>
    !('error' in r)
      ? `chatbot ${chatbot} is being synced by another process (a worker job or another \`${feedsyncCommand()} sync\`); nothing was done, try again when it has finished`
      : `the lock of chatbot ${chatbot} could not be taken: ${causeMessage(r.error)}`;
  return {
    held,
    refused: new Map([...refused].map(([name, r]) => [chatbotOf.get(name)!, why(chatbotOf.get(name)!, r)])),
  };
}

/**
 * With Redis, a foreground run goes into the run history beside the queued ones (`feedsync runs`);
 * a record Redis refused is said below the report (this process ends: it cannot write it later).
 */
async function recordHistory(
  report: SyncReport,
  config: LoadedConfig,
  deps: ForegroundDeps,
): Promise<string | undefined> {
  if (!deps.redis || !config.config.redis) return undefined;
  return recordForegroundRun(
    deps.redis,
    redisSettings(config).prefix,
    config.config.worker.historySize,
    QUEUE_NAMES.sync,
    { feed: report.feed, chatbot: report.chatbot },
    report,
  ).then(
    () => undefined,
    (err: unknown) => {
      deps.logger.warn({ err }, 'run history could not be saved');
      return `  run history: not recorded in Redis (${causeMessage(err)}); \`${feedsyncCommand()} runs\` will not list this run\n`;
    },
  );
}
