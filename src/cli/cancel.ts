// `feedsync cancel --feed NAME`: stop a running sync of a feed, on whichever worker holds it (a job
// that runs the feed with others, a scheduler's group or `enqueue sync --chatbot`, is stopped whole). The
// worker sees the request within a second (control.ts), the sync starts no new call, waits for the
// calls in flight and records what they wrote, and the run ends `cancelled`. Waits for that (up to
// --timeout seconds) and prints the run's summary.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import { closeQueues, createQueues, feedsOfSyncJob, operator, requestCancel, waitForJob } from '../queue/index.js';
import { EXIT, printJson } from './exit.js';
import { openOpsRedis } from './ops-redis.js';

export interface CancelOptions {
  config: string;
  feed: string[];
  timeout: number;
  json?: boolean;
}

export async function run(opts: CancelOptions): Promise<number> {
  if (!opts.feed?.length) throw new ConfigError('cancel: give --feed NAME');
  if (!(opts.timeout > 0)) throw new ConfigError('--timeout must be a positive number of seconds');
  const loaded = await loadConfig(opts.config);
  const feeds = selectFeeds(loaded.config.feeds, opts.feed, loaded.file).map((f) => f.name);
  const { redis, prefix, named, close } = await openOpsRedis(loaded, 'cancel');
  const queues = createQueues(redis, prefix);
  const by = operator();
  const results: Array<{ feed: string; jobId?: string; worker?: string; outcome: string; summary: string }> = [];
  try {
    const active = await queues.sync.getActive();
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
      for (const job of jobs) await requestCancel(redis, prefix, job.id!, by);
      for (const job of jobs) {
        const deadline = AbortSignal.timeout(opts.timeout * 1000);
        const done = await waitForJob(redis, queues, 'sync', job.id!, deadline).catch(() => undefined);
        const worker = job.processedBy;
        if (!done) {
          results.push({
            feed,
            jobId: job.id,
            worker,
            outcome: 'still-running',
            summary: `feed ${feed}: job ${job.id} still runs ${opts.timeout} s after the cancel; its worker may be busy or gone (a dead worker's job stops when its lock expires)`,
          });
          continue;
        }
        const report =
          done.state === 'completed'
            ? (done.returnvalue as { outcome?: string; summary?: string } | undefined)
            : undefined;
        results.push({
          feed,
          jobId: job.id,
          worker,
          outcome: report?.outcome ?? done.state,
          summary:
            report?.summary ??
            (done.state === 'failed' ? `job ${job.id} failed: ${done.failedReason}` : `job ${job.id} ${done.state}`),
        });
      }
    }
    if (opts.json) printJson({ cancelled: results });
    else
      for (const r of results)
        process.stderr.write(
          `${r.outcome === 'cancelled' ? 'cancelled' : r.outcome}: ${r.summary}${r.worker ? ` (worker ${r.worker})` : ''}\n`,
        );
    return results.every((r) => r.outcome === 'cancelled' || r.outcome === 'not-running') ? EXIT.ok : EXIT.failed;
  } finally {
    await closeQueues(queues);
    await close();
  }
}
