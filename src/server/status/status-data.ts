// What the status page shows, gathered as plain data: per feed (per chatbot of a routed feed) its
// last runs (from the change log), its next scheduled run (the queue's job scheduler), freshness
// against alerts.rules.staleHours, whether it is paused or running now (and on which worker: host,
// pid), and the alert conditions open for it.
import type { FeedConfig } from '../../config/schema.js';
import { loadAlertState } from '../../alerts/index.js';
import { excerpt } from '../../errors.js';
import { boundReport } from '../../queue/report-size.js';
import type { ChangeLog, RunEntry } from '../../change-log/change-log.js';
import { describeWorker, feedsOfSyncJob, parseWorkerName, syncSchedulerOf, type Queues } from '../../queue/index.js';
import type { KvStore } from '../../state/kv-store.js';
import { lanesOf, progressWords, RunProgress } from '../../sync/index.js';
import type { UndoReport } from '../../undo/report.js';

export interface StatusDeps {
  feeds: readonly FeedConfig[];
  changeLog: ChangeLog;
  queues: Queues;
  /** alert state lives here */
  store?: KvStore;
  staleHours: number;
  /** feeds paused by an operator (pause/resume), when the deployment has them */
  pausedFeeds?: () => Promise<ReadonlySet<string>>;
  /** runs per chart */
  runsShown?: number;
  /** the run page's "undo this run" action (the worker wires it: a dry run, and a queued undo job) */
  undo?: {
    plan(runId: string): Promise<UndoReport>;
    enqueue(runId: string, force: boolean): Promise<{ jobId: string }>;
  };
  /** a login is configured (ui-auth.ts): the page may offer actions; without one it shows the command */
  canAct?: boolean;
  /** the worker's config file, for the commands the page shows */
  configFile?: string;
  now?: () => Date;
}

/** A row of the page: a feed into its chatbot, or one chatbot of a routed feed. */
export interface FeedStatus {
  feed: string;
  /** the row's name (sync/read/lanes.ts, the lane's id): the feed's, or `feed>serialNumber` of a routed feed */
  lane: string;
  chatbot: string;
  /** newest first, real runs only */
  runs: RunEntry[];
  last?: RunEntry;
  lastOk?: RunEntry;
  /** ms since the last good run's end */
  ageMs?: number;
  stale: boolean;
  next?: string;
  schedule?: string;
  state: 'paused' | 'running' | 'idle';
  /** running: what its job reported last (BullMQ job progress): "writing 1,200/3,400 (35%), about 2 min left" */
  progress?: string;
  /** running: the worker process running its job, "host pid 1234" (BullMQ's processedBy: queue/worker-identity.ts) */
  worker?: string;
  alerts: Array<{ condition: string; message: string; since: string }>;
}

/** Runs read from the change log for one feed at most, whatever its chatbots (each shows `runsShown`). */
const MAX_RUNS_READ = 2000;

export async function gatherStatus(deps: StatusDeps): Promise<{ at: string; staleHours: number; feeds: FeedStatus[] }> {
  const now = deps.now?.() ?? new Date();
  const shown = deps.runsShown ?? 20;
  const [active, paused] = await Promise.all([
    deps.queues.sync.getJobs(['active'], 0, 200),
    deps.pausedFeeds?.() ?? Promise.resolve(new Set<string>()),
  ]);
  const running = new Set(active.flatMap((j) => feedsOfSyncJob(j?.data, deps.feeds)));
  // who runs each feed's job now
  const workerOf = new Map<string, string>();
  for (const j of active) {
    const w = parseWorkerName(j?.processedBy);
    if (w) for (const feed of feedsOfSyncJob(j?.data, deps.feeds)) workerOf.set(feed, describeWorker(w));
  }
  // each running job's progress (jobs/listing-sync.ts: the feed it is on), read back through its schema
  const progress = new Map<string, string>();
  for (const j of active) {
    const p = RunProgress.safeParse(j?.progress);
    if (p.success) progress.set(p.data.feed, progressWords(p.data));
  }
  // a feed's scheduler: its own, or its group's (queue/schedules.ts)
  const schedulers = syncSchedulerOf(deps.feeds);
  const feeds = await Promise.all(
    deps.feeds.map(async (f): Promise<FeedStatus[]> => {
      const lanes = lanesOf(f);
      // dry runs change nothing: the page shows what the chatbot went through
      const runs = (await deps.changeLog.runs(f.name, Math.min(shown * 3 * lanes.length, MAX_RUNS_READ))).filter(
        (r) => !r.dryRun,
      );
      const schedulerId = schedulers.get(f.name);
      const scheduler = schedulerId ? await deps.queues.sync.getJobScheduler(schedulerId) : undefined;
      const feedWide = {
        ...(scheduler?.next && { next: new Date(scheduler.next).toISOString() }),
        ...(f.schedule && { schedule: `${f.schedule.cron}${f.schedule.tz ? ` (${f.schedule.tz})` : ''}` }),
        state: paused.has(f.name)
          ? ('paused' as const)
          : running.has(f.name)
            ? ('running' as const)
            : ('idle' as const),
        ...(running.has(f.name) && progress.has(f.name) && { progress: progress.get(f.name) }),
        ...(running.has(f.name) && workerOf.has(f.name) && { worker: workerOf.get(f.name) }),
      };
      // a routed feed: a row per chatbot, with that chatbot's runs and alerts
      const routed = f.chatbots !== undefined;
      return Promise.all(
        lanes.map(async (lane): Promise<FeedStatus> => {
          // each run bounded as the stored reports are (lists cut with an `omitted` count, strings excerpted)
          const own = (routed ? runs.filter((r) => r.chatbot === lane.chatbot) : runs)
            .slice(0, shown)
            .map((r) => boundReport(r));
          const lastOk = own.find((r) => r.outcome === 'ok');
          const ageMs = lastOk ? now.getTime() - new Date(lastOk.finishedAt).getTime() : undefined;
          return {
            feed: f.name,
            lane: lane.id,
            chatbot: lane.chatbot,
            runs: own,
            ...(own[0] && { last: own[0] }),
            ...(lastOk && { lastOk }),
            ...(ageMs !== undefined && { ageMs }),
            // never synced counts as stale once it has a schedule: nothing good has happened yet
            stale: ageMs === undefined ? own.length > 0 : ageMs > deps.staleHours * 3_600_000,
            ...feedWide,
            alerts: await openAlerts(lane.id, deps.store),
          };
        }),
      );
    }),
  ).then((rows) => rows.flat());
  return { at: now.toISOString(), staleHours: deps.staleHours, feeds };
}

/** The alerts open for a lane (a feed into a chatbot: alerts/index.ts keeps a state per lane). */
async function openAlerts(lane: string, store: KvStore | undefined): Promise<FeedStatus['alerts']> {
  if (!store) return [];
  return Object.entries((await loadAlertState(store, lane)).open).map(([condition, v]) => ({
    condition,
    // an alert state written before alert messages were bounded may hold a long one
    message: String(excerpt(v!.message, 500)),
    since: v!.since,
  }));
}
