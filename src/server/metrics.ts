// Prometheus metrics of a worker process, in a registry of its own (tests run several in one
// process). Runs and listing counts come from run reports, API latency from the client's onCall
// events, queue depths are read from Redis at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiCallEvent } from '../api/types.js';
import type { Queues, RunReport } from '../queue/index.js';

export interface WorkerMetrics {
  registry: Registry;
  onCall(event: ApiCallEvent): void;
  onRun(run: { job: string; report: RunReport }): void;
}

const LISTING_COUNTS = ['created', 'updated', 'deleted', 'failed'] as const;

export function createMetrics(queues: Queues, opts: { defaultMetrics?: boolean } = {}): WorkerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const runs = new Counter({ name: 'feedsync_runs_total', help: 'finished runs (each attempt) by job and outcome', labelNames: ['job', 'outcome'], registers: [registry] });
  const listings = new Counter({ name: 'feedsync_listings_total', help: 'listings written by syncs, by operation', labelNames: ['op'], registers: [registry] });
  const calls = new Histogram({
    name: 'feedsync_api_call_duration_seconds',
    help: 'Chatbot Service API call latency (each HTTP attempt) by endpoint and outcome',
    labelNames: ['endpoint', 'outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
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
  // Pre-create the zero series so a dashboard sees them before the first run.
  for (const op of LISTING_COUNTS) listings.inc({ op }, 0);

  return {
    registry,
    onCall: (e) => calls.observe({ endpoint: e.endpoint, outcome: e.outcome }, e.durationMs / 1000),
    onRun: ({ job, report }) => {
      runs.inc({ job, outcome: report.outcome });
      const counts = (report as { counts?: Record<string, unknown> }).counts;
      if (!counts || (report as { dryRun?: boolean }).dryRun) return;
      for (const op of LISTING_COUNTS) {
        const n = counts[op];
        if (typeof n === 'number' && n > 0) listings.inc({ op }, n);
      }
    },
  };
}
