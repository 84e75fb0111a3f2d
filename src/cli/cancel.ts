// `feedsync cancel --feed NAME`: stop a running sync of a feed, on whichever worker holds it (a job
// that runs the feed with others, a scheduler's group or `enqueue sync --chatbot`, is stopped whole). The
// worker sees the request within a second (control.ts), the sync starts no new call, waits for the
// calls in flight and records what they wrote, and the run ends `cancelled`. Waits for that (up to
// --timeout seconds) and prints the run's summary. Only the deadline passing with Redis saying the
// job is active is `still-running` (exit 7, STILL_RUNNING); Redis failing during the wait is
// `unknown`, saying what Redis answered (exit 1): the request stands, but whether it took is not known.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError, RedisUnavailableError } from '../errors.js';
import {
  closeQueues,
  createQueues,
  feedsOfSyncJob,
  operator,
  requestCancel,
  waitForJob,
  type Queues,
  type RedisClient,
} from '../queue/index.js';
import { within } from '../redis/deadline.js';
import { EXIT, printJson } from './exit.js';
import { openOpsRedis, type OpsRedis } from './ops-redis.js';

/** cancel's own status: a job asked to stop still runs when --timeout passes (docs/contracts.md) */
export const STILL_RUNNING = 7;
/** how long Redis has to say a job's state when --timeout passes */
const STATE_ANSWER_MS = 3000;

export interface CancelOptions {
  config: string;
  feed: string[];
  timeout: number;
  json?: boolean;
}

type Result = { feed: string; jobId?: string; worker?: string; outcome: string; summary: string };

/** What the wait for the cancelled jobs needs; `redisFailed`, once set, is why Redis cannot say how a job ended (naming Redis). */
interface Waiting {
  redis: RedisClient;
  queues: Queues;
  named: string;
  timeoutS: number;
  failure: OpsRedis['failure'];
  lastRedisError?: unknown;
  redisFailed?: string;
}

export async function run(opts: CancelOptions): Promise<number> {
  if (!opts.feed?.length) throw new ConfigError('cancel: give --feed NAME');
  if (!(opts.timeout > 0)) throw new ConfigError('--timeout must be a positive number of seconds');
  const loaded = await loadConfig(opts.config);
  const feeds = selectFeeds(loaded.config.feeds, opts.feed, loaded.file).map((f) => f.name);
  const { redis, prefix, named, answer, failure, close } = await openOpsRedis(loaded, 'cancel');
  const queues = createQueues(redis, prefix);
  const by = operator();
  const results: Result[] = [];
  const waiting: Waiting = { redis, queues, named, timeoutS: opts.timeout, failure };
  redis.on('error', (err) => (waiting.lastRedisError = err));
  try {
    const active = await answer(queues.sync.getActive());
    for (const feed of feeds) {
      // the feed's own job, or a job running it with others (a group's scheduled run, `--chatbot`): that whole job is cancelled
      const jobs = active.filter((j) => j.id && feedsOfSyncJob(j.data, loaded.config.feeds).includes(feed));
      if (!jobs.length) {
        results.push({
          feed,
          outcome: 'not-running',
          summary: `feed ${feed} has no running sync in ${named}; nothing to cancel`,
        });
        continue;
      }
      for (const job of jobs)
        await answer(requestCancel(redis, prefix, job.id!, by)).catch((err: unknown) => {
          // (Redis may have stored it and dropped the connection before its answer came)
          waiting.redisFailed ??=
            refusal(waiting, err) ?? `${named} did not answer the request to stop (${detailOf(err)})`;
        });
      for (const job of jobs) results.push(await endOf(waiting, feed, job.id!, job.processedBy));
    }
    if (opts.json) printJson({ cancelled: results });
    else
      for (const r of results)
        process.stderr.write(
          `${r.outcome === 'cancelled' ? 'cancelled' : r.outcome}: ${r.summary}${r.worker ? ` (worker ${r.worker})` : ''}\n`,
        );
    return exitOf(results.map((r) => r.outcome));
  } finally {
    await closeQueues(queues);
    await close();
  }
}

/** How a job asked to stop ended, as Redis says within --timeout; `unknown` when Redis fails (then for the jobs after it too). */
async function endOf(w: Waiting, feed: string, jobId: string, worker: string | undefined): Promise<Result> {
  const unknown = (why: string): Result => ({
    feed,
    jobId,
    worker,
    outcome: 'unknown',
    summary: `feed ${feed}: job ${jobId} was asked to stop, but whether it did is unknown: ${why}; \`feedsync runs --feed ${feed}\` says how it ended once Redis answers`,
  });
  if (w.redisFailed) return unknown(w.redisFailed);
  const deadline = AbortSignal.timeout(w.timeoutS * 1000);
  const waited = await waitForJob(w.redis, w.queues, 'sync', jobId, deadline).then(
    (done) => ({ done }),
    (err: unknown) => ({ err }),
  );
  if ('done' in waited) {
    const { done } = waited;
    const report =
      done.state === 'completed' ? (done.returnvalue as { outcome?: string; summary?: string } | undefined) : undefined;
    return {
      feed,
      jobId,
      worker,
      outcome: report?.outcome ?? done.state,
      summary:
        report?.summary ??
        (done.state === 'failed' ? `job ${jobId} failed: ${done.failedReason}` : `job ${jobId} ${done.state}`),
    };
  }
  // Only the deadline, with Redis saying the job is active, means "still runs"
  const now = deadline.aborted ? await stateNow(w.queues, jobId) : { err: waited.err };
  if ('err' in now) {
    const cause = now.err ?? w.lastRedisError;
    w.redisFailed =
      refusal(w, cause) ??
      (deadline.aborted
        ? `${w.named} did not answer when --timeout passed${cause ? ` (${errorMessage(cause)})` : ''}`
        : `${w.named} failed while the cancel waited: ${errorMessage(cause)}`);
    return unknown(w.redisFailed);
  }
  if (now.state !== 'active')
    return {
      feed,
      jobId,
      worker,
      outcome: now.state,
      summary: `feed ${feed}: job ${jobId} is ${now.state} ${w.timeoutS} s after the cancel`,
    };
  return {
    feed,
    jobId,
    worker,
    outcome: 'still-running',
    summary: `feed ${feed}: job ${jobId} still runs ${w.timeoutS} s after the cancel; its worker may be busy or gone (a dead worker's job stops when its lock expires)`,
  };
}

/** The job's state as Redis says it now, or the error (undefined: no answer within STATE_ANSWER_MS). */
async function stateNow(queues: Queues, jobId: string): Promise<{ state: string } | { err: unknown }> {
  const asked = queues.sync.getJobState(jobId).then(
    (state) => ({ state }),
    (err: unknown) => ({ err }),
  );
  return within<{ state: string } | { err: unknown }>(asked, STATE_ANSWER_MS, { err: undefined });
}

/** 0 when every job ended cancelled (or none ran); 1 when one ended otherwise or Redis could not say; else 7, one still runs. */
function exitOf(outcomes: string[]): number {
  if (outcomes.every((o) => o === 'cancelled' || o === 'not-running' || o === 'still-running'))
    return outcomes.includes('still-running') ? STILL_RUNNING : EXIT.ok;
  return EXIT.failed;
}

/**
 * Redis refusing the connection's credentials (NOAUTH, WRONGPASS), in the words every command says it
 * with (RedisUnavailableError: which Redis, its answer, where the password goes); else undefined.
 */
function refusal(w: Waiting, err: unknown): string | undefined {
  const refused = w.failure(err);
  // (not retryable: the same password is refused again)
  return refused instanceof RedisUnavailableError && !refused.retryable ? refused.message : undefined;
}

/** what Redis answered: a RedisUnavailableError's detail (its message names Redis, as the summary does already), else the message */
const detailOf = (err: unknown) => (err instanceof RedisUnavailableError ? err.detail : errorMessage(err));

/** an error's message without its closing full stop (it is followed by more) */
const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
