// `feedsync worker`: BullMQ workers for the three queues, job schedulers from config, and the HTTP
// server (health, metrics, queue UI), until SIGTERM or SIGINT.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Processor } from 'bullmq';
import { loadConfig } from '../config/load.js';
import type { LoadedConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../log.js';
import {
  applySchedules,
  checkEvictionPolicy,
  closeQueues,
  closeRedis,
  createProcessor,
  createQueues,
  createRedis,
  redisSettings,
  forwardCallToJob,
  plannedSchedules,
  QUEUE_NAMES,
  startWorkers,
  type JobDefinition,
  type JobKind,
} from '../queue/index.js';
import { createRuntime, redactUrl } from '../runtime.js';
import { createApp, createMetrics } from '../server/index.js';
import { checkStaleness } from '../alerts/index.js';

const STALE_CHECK_MS = 5 * 60_000;

export interface WorkerOptions {
  config: string;
  port?: number;
}

export async function run(opts: WorkerOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const logger = createLogger();
  const worker = await startWorker(loaded, { port: opts.port, logger });
  const signal = await Promise.race([once(process, 'SIGTERM').then(() => 'SIGTERM'), once(process, 'SIGINT').then(() => 'SIGINT')]);
  logger.info({ signal, deadlineMs: loaded.config.worker.shutdownTimeoutMs }, 'shutting down: finishing running jobs');
  await worker.close();
  logger.info('worker stopped');
  return 0;
}

export interface RunningWorker {
  port: number;
  prefix: string;
  close(): Promise<void>;
}

/** Everything `feedsync worker` runs, startable in-process (tests pass their own job definitions). */
export async function startWorker(
  loaded: LoadedConfig,
  opts: { port?: number; logger: Logger; jobs?: Partial<Record<JobKind, JobDefinition<never>>> },
): Promise<RunningWorker> {
  const { logger } = opts;
  const settings = loaded.config.worker;
  const { url, prefix } = redisSettings(loaded);
  const redis = createRedis(url, { name: 'feedsync-worker' });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  await checkEvictionPolicy(redis, logger);

  const queues = createQueues(redis, prefix);
  const metrics = createMetrics(queues);
  // Jobs keep their state in Redis (shared by every worker), whatever the config says about state.
  const withRedis: LoadedConfig = { ...loaded, config: { ...loaded.config, redis: { url, prefix } } };
  const runtime = await createRuntime(withRedis, {
    logger,
    redis,
    onCall: (e) => {
      metrics.onCall(e);
      forwardCallToJob(e);
    },
  });

  // Loaded here, not at the top: a test that injects its own jobs does not load sync/settings/smoke.
  const jobs = opts.jobs ?? ((await import('../../jobs/index.js')).JOBS as unknown as Record<JobKind, JobDefinition<never>>);
  const processors: Partial<Record<JobKind, Processor>> = {};
  for (const [kind, def] of Object.entries(jobs) as Array<[JobKind, JobDefinition<never>]>) {
    processors[kind] = createProcessor(def, {
      config: withRedis,
      runtime,
      redis,
      prefix,
      logger,
      historySize: settings.historySize,
      lockTtlMs: settings.lockDurationMs,
      busyDelayMs: Math.min(5000, Math.max(250, Math.floor(settings.lockDurationMs / 4))),
      onRun: metrics.onRun,
    });
  }
  await applySchedules(queues, plannedSchedules(loaded.config, QUEUE_NAMES), logger);
  const workers = startWorkers(queues, processors, {
    redisUrl: url,
    prefix,
    concurrency: settings.concurrency,
    lockDurationMs: settings.lockDurationMs,
    stalledIntervalMs: settings.stalledIntervalMs,
    watchdogMs: settings.watchdogSeconds * 1000,
    logger,
  });

  // "no successful sync for H hours" needs no run to happen: checked on a timer (every worker does
  // it; the alert state in Redis makes each condition alert once).
  const watchedSince = new Date().toISOString();
  const feedTargets = loaded.config.feeds.map((f) => ({ feed: f.name, chatbot: f.chatbot }));
  const staleTimer = setInterval(() => {
    checkStaleness(runtime.store, loaded.config.alerts, feedTargets, watchedSince, logger).catch((err: Error) =>
      logger.warn({ err: err.message }, 'staleness check failed'),
    );
  }, STALE_CHECK_MS);
  staleTimer.unref();

  const app = createApp({ redis, workersRunning: () => workers.running(), queues, metrics });
  const server: Server = app.listen(opts.port ?? settings.port);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  logger.info(
    { port, redis: redactUrl(url), prefix, api: runtime.apiBaseUrl, queues: Object.values(QUEUE_NAMES) },
    `worker ready: http://localhost:${port}/ui (queue UI), /metrics, /healthz`,
  );

  return {
    port,
    prefix,
    close: async () => {
      clearInterval(staleTimer);
      server.close();
      server.closeAllConnections();
      await workers.close(settings.shutdownTimeoutMs);
      await closeQueues(queues);
      await runtime.close();
      await closeRedis(redis);
    },
  };
}
