// `feedsync runs`: the runs of a config, newest first. With Redis (the config's, or REDIS_URL) the
// jobs running now and the worker (host, pid) running each, then the run history kept there, queued
// and foreground runs alike (a queued run names the worker that ran it), and it says which Redis it
// read; without,
// the runs `feedsync sync` recorded in the change log beside the state file (change-log/open.ts),
// never a Redis nothing configured. A feed or chatbot the config does not know is a usage error
// (exit 2) with the same message as `sync` and `feed preview`.
import { loadConfig } from '../config/load.js';
import type { LoadedConfig } from '../config/schema.js';
import { selectChatbots, selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import type { RunEntry } from '../change-log/change-log.js';
import { openChangeLog } from '../change-log/open.js';
import { changeLogFile, stateFile } from '../state/paths.js';
import {
  ALL,
  closeQueues,
  createQueues,
  describeWorker,
  listRuns,
  pausedFeeds,
  redisConfigured,
  runningJobs,
  runsFor,
  type RunningJob,
} from '../queue/index.js';
import { openOpsRedis } from './ops-redis.js';
import { table } from '../format/table.js';
import { EXIT, printJson } from './exit.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface RunsOptions {
  config: string;
  feed?: string;
  chatbot?: string;
  limit: number;
  json?: boolean;
}

/** Runs read from the local change log to find `--limit` of one chatbot (the file is read whole anyway; this bounds what is kept). */
const MAX_LOCAL_READ = 5000;

export async function run(opts: RunsOptions): Promise<number> {
  if (opts.feed && opts.chatbot) throw new ConfigError('give --feed or --chatbot, not both');
  if (opts.limit < 1) throw new ConfigError('--limit must be at least 1');
  const loaded = await loadConfig(opts.config);
  if (opts.feed) selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  if (opts.chatbot) selectChatbots(loaded.config.chatbots, [opts.chatbot]);
  if (!redisConfigured(loaded)) return localRuns(loaded, opts);
  const { redis, prefix, where, named, answer, close } = await openOpsRedis(loaded, 'runs');
  try {
    const runs = await answer(listRuns(redis, prefix, { feed: opts.feed, chatbot: opts.chatbot, limit: opts.limit }));
    const running = await answer(runningNow(redis, prefix, loaded, opts));
    const paused = [...(await answer(pausedFeeds(redis, prefix))).since].map(([feed, since]) => ({
      feed: feed === ALL ? 'all' : feed,
      since,
    }));
    if (opts.json) {
      // each with the run ids `runs show` and `undo` take, as the table's column has them
      printJson({
        redis: where,
        prefix,
        paused,
        running,
        runs: runs.map((r) => ({ ...r, runIds: runIdsOf(r.report) })),
      });
      return EXIT.ok;
    }
    // REDIS_URL set in the shell stands in for a redis section: the runs of `sync` are elsewhere, say where
    const local = `; ${opts.config} has no redis section: its \`feedsync sync\` runs are not here but in ${changeLogFile(stateFile(loaded))} (\`REDIS_URL= ${feedsyncCommand()} runs\` lists them)`;
    process.stderr.write(`run history in ${named}${loaded.config.redis ? '' : local}\n`);
    // Paused schedules first: a feed that has not run lately may simply be paused.
    for (const p of paused) {
      const what = p.feed === 'all' ? 'every schedule' : `feed ${p.feed}`;
      process.stderr
        .write(`paused: ${what} since ${p.since.replace('T', ' ').slice(0, 19)} UTC (${feedsyncCommand()} resume ${p.feed === 'all' ? '--all' : `--feed ${p.feed}`})
`);
    }
    if (running.length) process.stdout.write(runningTable(running) + '\n\n');
    if (!runs.length) {
      process.stderr.write(`no runs recorded${forWhat(opts)} in ${named}\n`);
      return EXIT.ok;
    }
    const rows = runs.map((r) => [
      shortTime(r.at),
      r.job,
      r.feed ?? r.chatbot ?? '',
      r.outcome,
      `${r.attempt.made}/${r.attempt.max}`,
      r.jobId,
      runIdsOf(r.report).join(', '),
      r.worker ? describeWorker(r.worker) : '',
      r.summary,
    ]);
    process.stdout.write(
      table(['time (UTC)', 'job', 'target', 'outcome', 'try', 'job id', 'run id', 'worker', 'summary'], rows).join(
        '\n',
      ) + '\n',
    );
    sayWhy(
      runs.map((r) => ({ outcome: r.outcome, runIds: runIdsOf(r.report) })),
      opts,
    );
    return EXIT.ok;
  } finally {
    await close();
  }
}

/**
 * The run ids of a recorded job (what `runs show` and `undo` take): its report's, or each of its
 * lanes' (a job of a feed routed to several chatbots); none for a job that keeps no change log
 * (settings, smoke) or that ended before its run began.
 */
function runIdsOf(report: unknown): string[] {
  if (typeof report !== 'object' || report === null) return [];
  const lanes = (report as { lanes?: unknown }).lanes;
  if (Array.isArray(lanes)) return lanes.flatMap(runIdsOf);
  const id = (report as { runId?: unknown }).runId;
  return typeof id === 'string' ? [id] : [];
}

/** The jobs running now (of the feed or chatbot asked about), with the worker running each. */
async function runningNow(
  redis: Parameters<typeof createQueues>[0],
  prefix: string,
  loaded: LoadedConfig,
  opts: RunsOptions,
): Promise<RunningJob[]> {
  const queues = createQueues(redis, prefix);
  try {
    const feeds = loaded.config.feeds;
    return (await runningJobs(queues, feeds)).filter((j) => runsFor(j, opts, feeds));
  } finally {
    await closeQueues(queues);
  }
}

function runningTable(running: readonly RunningJob[]): string {
  const rows = running.map((j) => [
    j.since ? shortTime(j.since) : '',
    j.queue,
    j.feeds.join(', ') || (j.chatbot ?? ''),
    `${j.attempt.made}/${j.attempt.max}`,
    j.jobId,
    j.worker ? describeWorker(j.worker) : '(not known)',
  ]);
  return ['running now:', ...table(['since (UTC)', 'job', 'feeds', 'try', 'job id', 'worker'], rows)].join('\n');
}

/** Without Redis: the runs in the change log beside the state file, where `feedsync sync` records each. */
async function localRuns(loaded: LoadedConfig, opts: RunsOptions): Promise<number> {
  const log = await openChangeLog(loaded);
  try {
    const read = await log.runs(opts.feed, opts.chatbot ? MAX_LOCAL_READ : opts.limit);
    const runs: RunEntry[] = (opts.chatbot ? read.filter((r) => r.chatbot === opts.chatbot) : read).slice(
      0,
      opts.limit,
    );
    if (opts.json) {
      printJson({ changeLog: log.location, runs });
      return EXIT.ok;
    }
    process.stderr.write(`runs of \`feedsync sync\` in ${log.location} (${opts.config} has no redis section)\n`);
    if (!runs.length) {
      process.stderr.write(`no runs recorded${forWhat(opts)}\n`);
      return EXIT.ok;
    }
    const rows = runs.map((r) => [
      shortTime(r.finishedAt),
      r.feed,
      r.chatbot,
      `${r.outcome}${r.dryRun ? ' (dry run)' : ''}`,
      r.runId,
      r.summary,
    ]);
    process.stdout.write(
      table(['time (UTC)', 'feed', 'chatbot', 'outcome', 'run id', 'summary'], rows).join('\n') + '\n',
    );
    sayWhy(
      runs.map((r) => ({ outcome: r.outcome, runIds: [r.runId] })),
      opts,
    );
    return EXIT.ok;
  } finally {
    await log.close();
  }
}

/**
 * Below a table with runs that did not end ok (newest first): how many, and the command that says
 * why for the newest of them (its message and rejected records are in `runs show`, not the table).
 */
function sayWhy(runs: ReadonlyArray<{ outcome: string; runIds: string[] }>, opts: RunsOptions): void {
  const notOk = runs.filter((r) => r.outcome !== 'ok');
  const id = notOk.find((r) => r.runIds.length)?.runIds[0];
  if (!id) return;
  process.stderr.write(
    `${notOk.length} of these runs did not end ok; why: \`${feedsyncCommand()} runs show ${id} --config ${opts.config}\`\n`,
  );
}

function forWhat(opts: RunsOptions): string {
  return opts.feed ? ` for feed ${opts.feed}` : opts.chatbot ? ` for chatbot ${opts.chatbot}` : '';
}

function shortTime(iso: string): string {
  return iso.replace('T', ' ').slice(0, 19);
}
