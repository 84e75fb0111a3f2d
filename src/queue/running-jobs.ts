// The jobs running now, and who runs each: the worker (host, pid) BullMQ stored on the job when it
// took it (`processedBy`: worker-identity.ts), the feeds it runs, since when, which attempt.
// /status and `feedsync runs` show them; Bull Board shows the same job with its `processedBy` and
// its log lines (processor.ts noteWorker).
import { chatbotsOf } from '../config/feed-chatbots.js';
import type { FeedConfig } from '../config/schema.js';
import { feedsOfSyncJob } from './control.js';
import { JOB_KINDS, type JobKind } from './names.js';
import type { Queues } from './queues.js';
import { parseWorkerName, type WorkerIdentity } from './worker-identity.js';

export interface RunningJob {
  jobId: string;
  kind: JobKind;
  /** its queue's name (listing-sync, settings-push, …): the run history's `job` */
  queue: string;
  /** the feeds it runs (a sync job: its feed, its group's, or its chatbot's; other jobs: their feed, if any) */
  feeds: string[];
  chatbot?: string;
  /** when its worker took it (ISO) */
  since?: string;
  worker?: WorkerIdentity;
  attempt: { made: number; max: number };
}

/** Jobs read per queue: far more than a fleet runs at once (workers × worker.concurrency). */
const MAX_ACTIVE = 500;

type FeedRoutes = readonly Pick<FeedConfig, 'name' | 'chatbot' | 'chatbots'>[];

/** The running jobs of these queues (default all), as /status and `feedsync runs` show them. */
export async function runningJobs(
  queues: Pick<Queues, JobKind>,
  feeds: FeedRoutes,
  kinds: readonly JobKind[] = JOB_KINDS,
): Promise<RunningJob[]> {
  const out: RunningJob[] = [];
  for (const kind of kinds) {
    for (const job of await queues[kind].getJobs(['active'], 0, MAX_ACTIVE - 1)) {
      if (!job?.id) continue;
      const data = (job.data ?? {}) as { chatbot?: unknown };
      const worker = parseWorkerName(job.processedBy);
      out.push({
        jobId: job.id,
        kind,
        queue: queues[kind].name,
        feeds: feedsOfSyncJob(job.data, feeds),
        ...(typeof data.chatbot === 'string' && { chatbot: data.chatbot }),
        ...(job.processedOn && { since: new Date(job.processedOn).toISOString() }),
        ...(worker && { worker }),
        attempt: { made: job.attemptsMade + 1, max: job.opts.attempts ?? 1 },
      });
    }
  }
  return out;
}

/** Whether a running job is about this feed or chatbot (`feedsync runs --feed/--chatbot`); no filter: every job. */
export function runsFor(job: RunningJob, filter: { feed?: string; chatbot?: string }, feeds: FeedRoutes): boolean {
  if (filter.feed) return job.feeds.includes(filter.feed);
  if (!filter.chatbot) return true;
  const sn = filter.chatbot;
  return job.chatbot === sn || feeds.some((f) => job.feeds.includes(f.name) && chatbotsOf(f).includes(sn));
}
