// What the status page shows, gathered as plain data: per feed its last runs (from the change log),
// its next scheduled run (the queue's job scheduler), freshness against alerts.rules.staleHours,
// whether it is paused or running now, and the alert conditions open for it.
import type { FeedConfig } from '../../config/schema.js';
import { loadAlertState } from '../../alerts/index.js';
import { excerpt } from '../../errors.js';
import { boundReport } from '../../queue/report-size.js';
import type { ChangeLog, RunEntry } from '../../history/change-log.js';
import { feedsOfSyncJob, syncSchedulerOf, type Queues } from '../../queue/index.js';
import type { KvStore } from '../../state/kv-store.js';
import { chatbotsOf } from '../../config/feed-chatbots.js';
import { lanesOf } from '../../sync/lanes.js';
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

export interface FeedStatus {
  feed: string;
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
  /** open alerts; `chatbot` names the chatbot of a routed feed whose alert it is (each keeps its own) */
  alerts: Array<{ condition: string; chatbot?: string; message: string; since: string }>;
}

export async function gatherStatus(deps: StatusDeps): Promise<{ at: string; staleHours: number; feeds: FeedStatus[] }> {
  const now = deps.now?.() ?? new Date();
  const shown = deps.runsShown ?? 20;
  const [active, paused] = await Promise.all([deps.queues.sync.getJobs(['active'], 0, 200), deps.pausedFeeds?.() ?? Promise.resolve(new Set<string>())]);
  const running = new Set(active.flatMap((j) => feedsOfSyncJob(j?.data, deps.feeds)));
  // a feed's scheduler: its own, or its group's (queue/schedules.ts)
  const schedulers = syncSchedulerOf(deps.feeds);
  const feeds = await Promise.all(
    deps.feeds.map(async (f): Promise<FeedStatus> => {
      // dry runs change nothing: the page shows what the chatbot went through
      // each run bounded as the stored reports are (lists cut with an `omitted` count, strings excerpted)
      const runs = (await deps.changeLog.runs(f.name, shown * 3))
        .filter((r) => !r.dryRun)
        .slice(0, shown)
        .map((r) => boundReport(r));
      const lastOk = runs.find((r) => r.outcome === 'ok');
      const ageMs = lastOk ? now.getTime() - new Date(lastOk.finishedAt).getTime() : undefined;
      const schedulerId = schedulers.get(f.name);
      const scheduler = schedulerId ? await deps.queues.sync.getJobScheduler(schedulerId) : undefined;
      const alerts = await openAlerts(f, deps.store);
      return {
        feed: f.name,
        chatbot: chatbotsOf(f).join(', '),
        runs,
        ...(runs[0] && { last: runs[0] }),
        ...(lastOk && { lastOk }),
        ...(ageMs !== undefined && { ageMs }),
        // never synced counts as stale once it has a schedule: nothing good has happened yet
        stale: ageMs === undefined ? runs.length > 0 : ageMs > deps.staleHours * 3_600_000,
        ...(scheduler?.next && { next: new Date(scheduler.next).toISOString() }),
        ...(f.schedule && { schedule: `${f.schedule.cron}${f.schedule.tz ? ` (${f.schedule.tz})` : ''}` }),
        state: paused.has(f.name) ? 'paused' : running.has(f.name) ? 'running' : 'idle',
        alerts,
      };
    }),
  );
  return { at: now.toISOString(), staleHours: deps.staleHours, feeds };
}

/** The alerts open for the feed: its lane's, or each of its chatbots' for a routed feed. */
async function openAlerts(feed: FeedConfig, store: KvStore | undefined): Promise<FeedStatus['alerts']> {
  if (!store) return [];
  const routed = feed.chatbots !== undefined;
  const perLane = await Promise.all(
    lanesOf(feed).map(async (lane) =>
      Object.entries((await loadAlertState(store, lane.id)).open).map(([condition, v]) => ({
        condition,
        ...(routed && { chatbot: lane.chatbot }),
        // an alert state written before alert messages were bounded may hold a long one
        message: String(excerpt(v!.message, 500)),
        since: v!.since,
      })),
    ),
  );
  return perLane.flat();
}
