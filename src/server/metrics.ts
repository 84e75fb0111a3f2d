// Prometheus metrics of a worker process, in a registry of its own (tests run several in one
// process). Runs, listing and rejected record counts come from run reports, API latency from the
// client's onCall events, queue depths and the alerts firing are read at scrape time (from Redis,
// and each lane's alert state in the state store: alerts/index.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiCallEvent } from '../api/types.js';
import type { Queues, RunReport } from '../queue/index.js';
import type { ChangeLog } from '../change-log/change-log.js';
import { loadAlertState } from '../alerts/index.js';
import type { KvStore } from '../state/kv-store.js';

export interface WorkerMetrics {
  registry: Registry;
  onCall(event: ApiCallEvent): void;
  onRun(run: { job: string; report: RunReport }): void;
  /** a full collection the idle worker ran (queue/idle-collection.ts), and how long it took */
  onIdleCollection(ms: number): void;
  /** the malloc_trim(0) after it (queue/malloc-trim.ts): how long it took and the resident bytes it gave back */
  onIdleTrim(trimmed: { ms: number; bytes: number }): void;
  /** sets the last-success gauge of each feed from the change log (after a restart) */
  recallLastSuccess(feeds: readonly string[], changeLog: Pick<ChangeLog, 'runs'>): Promise<void>;
  /** the lanes whose open alerts `feedsync_alerts_firing` shows, read from their alert state at each scrape */
  watchAlerts(lanes: ReadonlyArray<{ feed: string; lane: string }>, store: Pick<KvStore, 'get'>): void;
}

const LISTING_COUNTS = ['created', 'updated', 'deleted', 'failed'] as const;

/** the queues whose depths are read at scrape time (the worker's: `Queues`) */
type CountedQueues = Readonly<Record<string, Pick<Queues[keyof Queues], 'name' | 'getJobCounts'>>>;

export function createMetrics(queues: CountedQueues, opts: { defaultMetrics?: boolean } = {}): WorkerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const series = runSeries(registry);
  const calls = new Histogram({
    name: 'feedsync_api_call_duration_seconds',
    help: 'Chatbot Service API call latency (each HTTP attempt) by endpoint and outcome',
    labelNames: ['endpoint', 'outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  queueDepths(registry, queues);
  const onIdleCollection = idleCollections(registry);
  const onIdleTrim = idleTrims(registry);
  const watchAlerts = alertsFiring(registry);
  const seen = new Set<string>();
  const ensureFeed = (feed: string) => {
    if (seen.has(feed)) return;
    seen.add(feed);
    // zero series first, so rate() and absent() see the feed from its first run on
    for (const op of LISTING_COUNTS) series.listings.inc({ feed, op }, 0);
    series.rejected.inc({ feed }, 0);
  };
  const { lastSuccess } = series;

  return {
    registry,
    onCall: (e) => calls.observe({ endpoint: e.endpoint, outcome: e.outcome }, e.durationMs / 1000),
    onRun: (run) => countRun(series, ensureFeed, run),
    onIdleCollection,
    onIdleTrim,
    watchAlerts,
    recallLastSuccess: async (feeds, changeLog) => {
      for (const feed of feeds) {
        ensureFeed(feed);
        const ok = (await changeLog.runs(feed, 200)).find((run) => run.outcome === 'ok' && !run.dryRun);
        // a run finished meanwhile in this process is newer than what the log says
        if (ok && !(await lastSuccess.get()).values.some((v) => v.labels.feed === feed))
          lastSuccess.set({ feed }, Date.parse(ok.finishedAt) / 1000);
      }
    },
  };
}

/** The series a finished run counts in: runs by outcome, listings written, records rejected, photos, last success. */
function runSeries(registry: Registry) {
  return {
    runs: new Counter({
      name: 'feedsync_runs_total',
      help: 'finished runs (each attempt) by job and outcome',
      labelNames: ['job', 'outcome'],
      registers: [registry],
    }),
    listings: new Counter({
      name: 'feedsync_listings_total',
      help: 'listings written by syncs, by feed and operation',
      labelNames: ['feed', 'op'],
      registers: [registry],
    }),
    ...photoCounters(registry),
    lastSuccess: new Gauge({
      name: 'feedsync_feed_last_success_timestamp_seconds',
      help: 'when each feed last synced successfully (unix seconds): alert on time() minus this',
      labelNames: ['feed'],
      registers: [registry],
    }),
    rejected: new Counter({
      name: 'feedsync_records_rejected_total',
      help: "feed records rejected by syncs (each a reason in the run's report and change log), by feed",
      labelNames: ['feed'],
      registers: [registry],
    }),
  };
}

/** A finished run in the series: its outcome, and a sync's counts lane by lane (a routed feed's report leads with one lane's). */
function countRun(
  series: ReturnType<typeof runSeries>,
  ensureFeed: (feed: string) => void,
  { job, report }: { job: string; report: RunReport },
): void {
  const { runs, listings, rejected, photos, photoBytes, photoDeletes, lastSuccess } = series;
  runs.inc({ job, outcome: report.outcome });
  const r = report as { counts?: unknown; dryRun?: boolean; feed?: unknown; finishedAt?: unknown; lanes?: unknown };
  if (!r.counts || r.dryRun || typeof r.feed !== 'string') return;
  const feed = r.feed;
  ensureFeed(feed);
  for (const lane of Array.isArray(r.lanes) ? (r.lanes as unknown[]) : [report]) {
    const counts = (lane as { counts?: Record<string, unknown> }).counts ?? {};
    for (const op of LISTING_COUNTS) listings.inc({ feed, op }, positive(counts[op]));
    rejected.inc({ feed }, positive(counts.rejected));
    const m = photoFigures(lane);
    if (!m) continue;
    for (const outcome of ['downloaded', 'reused', 'failed'] as const) photos.inc({ feed, outcome }, m[outcome]);
    photoBytes.inc({ feed }, m.bytes);
    photoDeletes.inc({ feed }, m.deleted);
  }
  if (report.outcome === 'ok')
    lastSuccess.set(
      { feed },
      Date.parse(typeof r.finishedAt === 'string' ? r.finishedAt : new Date().toISOString()) / 1000,
    );
}

/** `feedsync_idle_collections_total` and their seconds: the full collections a worker ran between jobs. */
function idleCollections(registry: Registry): (ms: number) => void {
  return countedSeconds(
    registry,
    {
      name: 'feedsync_idle_collections_total',
      help: 'full garbage collections the worker ran once its jobs had all ended and it stayed idle',
    },
    {
      name: 'feedsync_idle_collection_seconds_total',
      help: 'time the idle full collections took (the main thread paused, no job running)',
    },
  );
}

/** `feedsync_idle_trims_total`, their seconds and the bytes they gave back: malloc_trim(0) after each idle collection. */
function idleTrims(registry: Registry): (trimmed: { ms: number; bytes: number }) => void {
  const timed = countedSeconds(
    registry,
    {
      name: 'feedsync_idle_trims_total',
      help: "malloc_trim(0) calls after the idle collections (glibc; none where koffi or glibc's malloc_trim is missing)",
    },
    {
      name: 'feedsync_idle_trim_seconds_total',
      help: 'time the malloc_trim(0) calls took (the main thread, no job running)',
    },
  );
  const bytes = new Counter({
    name: 'feedsync_idle_trim_released_bytes_total',
    help: 'resident memory the malloc_trim(0) calls gave back (RSS before less after each)',
    registers: [registry],
  });
  bytes.inc(0);
  return ({ ms, bytes: given }) => {
    timed(ms);
    bytes.inc(given);
  };
}

/** A counter of something done (shown from 0) and one of the seconds it took; told each one's ms. */
function countedSeconds(
  registry: Registry,
  count: { name: string; help: string },
  seconds: { name: string; help: string },
): (ms: number) => void {
  const done = new Counter({ ...count, registers: [registry] });
  const took = new Counter({ ...seconds, registers: [registry] });
  done.inc(0);
  return (ms) => {
    done.inc();
    took.inc(ms / 1000);
  };
}

/** `feedsync_queue_jobs`: each queue's jobs by state, read from Redis at scrape time. */
function queueDepths(registry: Registry, queues: CountedQueues): void {
  new Gauge({
    name: 'feedsync_queue_jobs',
    help: 'jobs in each queue by state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const q of Object.values(queues)) {
        const counts = await q.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed', 'completed');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: q.name, state }, n);
      }
    },
  });
}

/** The photo counters of mirrored feeds (media.mirror). */
function photoCounters(registry: Registry) {
  return {
    photos: new Counter({
      name: 'feedsync_photos_total',
      help: 'listing photos of mirrored feeds (media.mirror) by feed and outcome: downloaded, reused (stored before), failed (left out, retried next run)',
      labelNames: ['feed', 'outcome'],
      registers: [registry],
    }),
    photoBytes: new Counter({
      name: 'feedsync_photo_bytes_total',
      help: 'bytes of photos downloaded and stored, by feed',
      labelNames: ['feed'],
      registers: [registry],
    }),
    photoDeletes: new Counter({
      name: 'feedsync_photo_objects_deleted_total',
      help: 'unused photo objects deleted from the bucket, by feed',
      labelNames: ['feed'],
      registers: [registry],
    }),
  };
}

/** `feedsync_alerts_firing`: the alerts open for each lane watched, read from its alert state at each scrape; returns the watch. */
function alertsFiring(registry: Registry): WorkerMetrics['watchAlerts'] {
  let watched: { lanes: ReadonlyArray<{ feed: string; lane: string }>; store: Pick<KvStore, 'get'> } | undefined;
  new Gauge({
    name: 'feedsync_alerts_firing',
    help: 'alerts open now (1 each), by feed, lane (a feed routed to several chatbots: one per chatbot) and condition (docs/contracts.md, "Alerts")',
    labelNames: ['feed', 'lane', 'condition'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!watched) return;
      // (every lane asked at once: one connection's pipeline, not a round trip a lane, 500 a scrape in a fleet's worker)
      const { lanes, store } = watched;
      const states = await Promise.all(lanes.map(({ lane }) => loadAlertState(store, lane)));
      for (const [i, { feed, lane }] of lanes.entries())
        for (const condition of Object.keys(states[i]!.open)) this.set({ feed, lane, condition }, 1);
    },
  });
  return (lanes, store) => {
    watched = { lanes, store };
  };
}

const positive = (n: unknown): number => (typeof n === 'number' && n > 0 ? n : 0);

/** The media figures of a run report (a sync of a mirrored feed), checked rather than assumed: reports come back from Redis as JSON. */
function photoFigures(
  report: unknown,
): Record<'downloaded' | 'reused' | 'failed' | 'bytes' | 'deleted', number> | undefined {
  const media = report && typeof report === 'object' && 'media' in report ? report.media : undefined;
  if (!media || typeof media !== 'object') return undefined;
  const out = { downloaded: 0, reused: 0, failed: 0, bytes: 0, deleted: 0 };
  for (const k of Object.keys(out) as Array<keyof typeof out>) {
    const v: unknown = (media as Record<string, unknown>)[k];
    if (typeof v === 'number' && v >= 0) out[k] = v;
  }
  return out;
}
