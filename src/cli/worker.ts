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
  createCancelWatcher,
  createQueues,
  createRedis,
  enqueueJob,
  redisSettings,
  type RedisSettings,
  forwardCallToJob,
  fullCollection,
  loadMallocTrim,
  type MallocTrim,
  plannedSchedules,
  QUEUE_NAMES,
  startWorkers,
  JOB_KINDS,
  workerJob,
  type WorkerJob,
  type JobKind,
  type ProcessorDeps,
  type Queues,
  type RedisClient,
  type WorkerSettings,
} from '../queue/index.js';
import { watchSchedules } from '../queue/schedule-watch.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { closeAll as closeEach, type Closer } from '../close-all.js';
import { causeMessage, ConfigError, type FeedsyncError, RedisUnavailableError, StartupError } from '../errors.js';
import { requireRedis } from '../redis/require-redis.js';
import { createApp, createMetrics, createPushApp } from '../server/index.js';
import type { WorkerMetrics } from '../server/metrics.js';
import type { PushDeps } from '../server/push-route.js';
import { allowedHosts } from '../server/http-guard.js';
import { uiAdminFromEnv, uiAdminHint, type UiAdmin } from '../server/ui-auth.js';
import { checkStaleness, driftAlertLane } from '../alerts/index.js';
import { ALL, pausedFeeds } from '../queue/control.js';
import { lanesOf } from '../sync/index.js';
import type { StatusDeps } from '../server/status/status-data.js';
import { findUndoTarget, undoRun } from '../undo/index.js';
import { connectionErrorLog } from '../redis/connection-errors.js';

const STALE_CHECK_MS = 5 * 60_000;

export interface WorkerOptions {
  config: string;
  port?: number;
}

export async function run(opts: WorkerOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const logger = createLogger();
  const worker = await startWorker(loaded, { port: opts.port, logger });
  const signal = await Promise.race([
    once(process, 'SIGTERM').then(() => 'SIGTERM'),
    once(process, 'SIGINT').then(() => 'SIGINT'),
  ]);
  logger.info(
    { signal, deadlineMs: loaded.config.worker.shutdownTimeoutMs },
    'shutting down: running jobs stop and go back to the queue',
  );
  await worker.close();
  logger.info('worker stopped');
  return 0;
}

export interface RunningWorker {
  port: number;
  /** the push listener's port, when a feed has push */
  pushPort?: number;
  prefix: string;
  close(): Promise<void>;
}

/** How long a starting worker waits for Redis: longer than a command, as a worker may start beside its Redis (compose). */
const REDIS_START_MS = 10_000;

/**
 * Everything `feedsync worker` runs, startable in-process (tests pass their own job definitions).
 * A worker that cannot start (Redis does not answer, the port is taken) closes what it had opened
 * and throws a StartupError naming the cause and the fix, so the process exits instead of hanging.
 */
export async function startWorker(
  loaded: LoadedConfig,
  opts: { port?: number; logger: Logger; jobs?: Partial<Record<JobKind, WorkerJob>> },
): Promise<RunningWorker> {
  const closers: Closer[] = [];
  // (every closer runs whatever one before it did; one that fails is a warning: after a start that
  // failed, beside its StartupError; on stop, beside "worker stopped")
  const closeAll = () =>
    closeEach(closers, (what, err) =>
      opts.logger.warn({ err, closing: what }, `${what} not closed: ${causeMessage(err)}`),
    );
  // no Redis configured (no redis section, no REDIS_URL), or a UI login too short to protect anything:
  // refused in one line before anything starts
  const redisAt = redisSettings(loaded, 'feedsync worker');
  const admin = uiAdminFromEnv();
  try {
    return await start(loaded, { redisAt, admin }, opts, closers, closeAll);
  } catch (err) {
    await closeAll();
    throw startupError(err, loaded, opts.port);
  }
}

/** The queue workers' settings from the config's `worker` section. */
function workerSettings(
  settings: LoadedConfig['config']['worker'],
  redisAt: RedisSettings,
  metrics: WorkerMetrics,
  logger: Logger,
  mallocTrim: MallocTrim | undefined,
): WorkerSettings {
  return {
    redis: redisAt,
    concurrency: settings.concurrency,
    lockDurationMs: settings.lockDurationMs,
    stalledIntervalMs: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    watchdogMs: settings.watchdogSeconds * 1000,
    // one full collection once the worker has had no active job for idleCollectMs, then
    // malloc_trim(0) where there is one (queue/idle-collection.ts, malloc-trim.ts)
    idleCollection:
      settings.idleCollectMs > 0
        ? {
            afterMs: settings.idleCollectMs,
            collect: fullCollection(),
            onCollected: metrics.onIdleCollection,
            ...(mallocTrim && 'trim' in mallocTrim && { trim: mallocTrim.trim, onTrimmed: metrics.onIdleTrim }),
          }
        : undefined,
    logger,
  };
}

async function start(
  loaded: LoadedConfig,
  { redisAt, admin }: { redisAt: RedisSettings; admin: UiAdmin | undefined },
  opts: { port?: number; logger: Logger; jobs?: Partial<Record<JobKind, WorkerJob>> },
  closers: Closer[],
  closeAll: () => Promise<void>,
): Promise<RunningWorker> {
  const { logger } = opts;
  const settings = loaded.config.worker;
  const { prefix, where } = redisAt;
  const redis = createRedis(redisAt, { name: 'feedsync-worker' });
  closers.push({ what: 'the Redis connection', close: () => closeRedis(redis) });
  const connectionError = connectionErrorLog(logger, {}, `cannot reach Redis ${where}; reconnecting`);
  redis.on('error', (err) => connectionError(err) || logger.warn({ err: err.message }, 'redis connection error'));
  await requireRedis(redis, redisAt, { use: 'worker', waitMs: REDIS_START_MS });
  await checkEvictionPolicy(redis, logger);

  const queues = createQueues(redis, prefix);
  closers.push({ what: 'the queues', close: () => closeQueues(queues) });
  const metrics = createMetrics(queues);
  // Jobs keep their state in Redis (shared by every worker), whatever the config says about state.
  const withRedis: LoadedConfig = { ...loaded, config: { ...loaded.config, redis: redisAt.config } };
  const runtime = await createRuntime(withRedis, {
    logger,
    redis,
    onCall: (e) => {
      metrics.onCall(e);
      forwardCallToJob(e);
    },
  });
  closers.push({ what: 'the runtime (state, change log, API client)', close: () => runtime.close() });

  // Loaded here, not at the top: a test that injects its own jobs does not load sync/settings/smoke.
  const jobs = opts.jobs ?? (await theJobs());
  const processors = buildProcessors(jobs, { redis, prefix, logger, runtime, config: withRedis, onRun: metrics.onRun });
  const planned = plannedSchedules(loaded.config, QUEUE_NAMES);
  // only those missing, changed, or with their next job lost: rewriting one unchanged would move its due tick to the next (a rolling restart)
  await applySchedules(redis, queues, planned, { root: prefix, logger });
  // written again if Redis loses them (a restart without persistence) or their next job: on reconnect and every scheduleCheckSeconds
  const watch = { root: prefix, intervalMs: settings.scheduleCheckSeconds * 1000, logger };
  closers.push({ what: 'the schedules watch', close: watchSchedules(redis, queues, planned, watch) });
  const mallocTrim = settings.idleCollectMs > 0 ? await loadMallocTrim() : undefined;
  if (mallocTrim && 'skipped' in mallocTrim)
    logger.info({ reason: mallocTrim.skipped }, 'idle collection without malloc_trim: freed memory is given back less');
  const workers = startWorkers(queues, processors, workerSettings(settings, redisAt, metrics, logger, mallocTrim));
  closers.push({ what: 'the queue workers', close: () => workers.close(settings.shutdownTimeoutMs) });
  closers.push({ what: 'the staleness watch', close: watchStaleness(loaded, runtime, logger) });

  const status = statusDeps(loaded, withRedis, runtime, { redis, queues, prefix, logger });
  watchFeeds(metrics, loaded, runtime, logger);
  const hosts = allowedHosts(loaded.config.worker.host, loaded.config.worker.allowedHosts);
  const app = createApp({
    redis,
    workersRunning: () => workers.running(),
    queues,
    metrics,
    status,
    admin,
    hosts,
    allowFrom: settings.allowFrom,
  });
  const port = await listen(app, opts.port ?? settings.port, hostSetting(loaded, 'worker'), closers);
  // pushed EntityEvents (RCP-028): a listener of their own, which answers nothing else (push-app.ts)
  const pushPort = await listenPush(loaded, { redis, queues, prefix, feeds: loaded.config.feeds, logger }, closers);
  logger.info(
    {
      port,
      host: settings.host,
      ...(pushPort !== undefined && { pushPort }),
      redis: where,
      prefix,
      api: runtime.apiBaseUrl,
      queues: Object.values(QUEUE_NAMES),
      ui: admin ? 'admin login' : 'read-only',
    },
    `worker ready: http://${displayHost(settings.host)}:${port}/ui (queue UI, ${admin ? 'actions behind the admin login' : `read-only; ${uiAdminHint()}`}), /status (each feed's runs, and which worker runs what now), /metrics, /healthz`,
  );

  return {
    port,
    ...(pushPort !== undefined && { pushPort }),
    prefix,
    close: closeAll,
  };
}

/** What /metrics reads of the feeds: their open alerts at each scrape, and their last good sync from before a restart. */
function watchFeeds(
  metrics: ReturnType<typeof createMetrics>,
  loaded: LoadedConfig,
  runtime: Runtime,
  logger: Logger,
): void {
  // the alerts open per lane (and a live RESO feed's dictionary check), on /metrics at each scrape
  metrics.watchAlerts(
    loaded.config.feeds.flatMap((f) => [
      ...lanesOf(f).map((l) => ({ feed: f.name, lane: l.id })),
      ...(f.source.kind === 'reso' && f.source.url ? [{ feed: f.name, lane: driftAlertLane(f.name) }] : []),
    ]),
    runtime.store,
  );
  // the last good sync of each feed survives a restart of the worker: read back from the change log
  void metrics
    .recallLastSuccess(
      loaded.config.feeds.map((f) => f.name),
      runtime.changeLog,
    )
    .catch((err: Error) => logger.warn({ err: err.message }, 'could not read the last good syncs back'));
}

/** The push listener, when a feed has `push`: its port (push.port 0: one the system chose). */
async function listenPush(loaded: LoadedConfig, deps: PushDeps, closers: Closer[]): Promise<number | undefined> {
  const feeds = loaded.config.feeds.filter((f) => f.push).map((f) => f.name);
  if (feeds.length === 0) return undefined;
  const { port: wanted, host } = loaded.config.push;
  let port: number;
  try {
    port = await listen(createPushApp(deps), wanted, hostSetting(loaded, 'push'), closers);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES')
      throw new StartupError(
        `push.port ${wanted} (the push listener of feeds ${feeds.join(', ')}) could not be listened on (${code}); set another push.port`,
        {
          cause: err,
          retryable: false,
        },
      );
    throw err;
  }
  deps.logger.info(
    { pushPort: port, pushHost: host, feeds },
    `push listener ready: http://${displayHost(host)}:${port}/reso/events/<feed> (nothing else answers there)`,
  );
  return port;
}

/** What the worker's job processors share. */
interface ProcessorParts {
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  runtime: Runtime;
  config: LoadedConfig;
  onRun: ProcessorDeps['onRun'];
}

/** Every job of jobs/, as the worker runs it. */
async function theJobs(): Promise<Record<JobKind, WorkerJob>> {
  const { JOBS } = await import('../../jobs/index.js');
  return {
    sync: workerJob(JOBS.sync),
    settings: workerJob(JOBS.settings),
    smoke: workerJob(JOBS.smoke),
    undo: workerJob(JOBS.undo),
    drift: workerJob(JOBS.drift),
  };
}

/** One processor per job kind, all watching one cancel-request feed. */
function buildProcessors(
  jobs: Partial<Record<JobKind, WorkerJob>>,
  p: ProcessorParts,
): Partial<Record<JobKind, Processor>> {
  const settings = p.config.config.worker;
  const processors: Partial<Record<JobKind, Processor>> = {};
  const cancels = createCancelWatcher(p.redis, p.prefix, (err) =>
    p.logger.warn({ err }, 'looking for cancel requests failed; trying again'),
  );
  for (const kind of JOB_KINDS) {
    const job = jobs[kind];
    if (!job) continue;
    processors[kind] = job({
      cancels,
      config: p.config,
      runtime: p.runtime,
      redis: p.redis,
      prefix: p.prefix,
      logger: p.logger,
      historySize: settings.historySize,
      // a chatbot lock's TTL frees a dead run's chatbots for other runs, its own job taken over
      // included (that job cannot tell a dead attempt from one cut off from Redis that still writes;
      // a worker on the same host frees them at once by their holder record, lock-holder.ts). The
      // job lock's: from another host BullMQ takes a dead worker's job over only once its job lock
      // has expired (a sibling on its host hands it back at once: queue/job-holders.ts), and the
      // chatbot locks, renewed on the same cadence (a quarter of it) with the same TTL, have expired
      // by then too, or within one renewal period, which the taken-over job's backstop delay
      // (busyDelayMs, the same quarter) covers: a job whose worker died elsewhere resumes in
      // lockDurationMs + stalledIntervalMs (+ busyDelayMs), not the 30 s this was (issue 55 point 3).
      // What it costs: one RENEW_ALL call per period for all of a job's chatbots (target-lock.ts),
      // 30 a minute per running job at 8 s, however many chatbots it writes into.
      lockTtlMs: settings.lockDurationMs,
      busyDelayMs: Math.min(5000, Math.max(250, Math.floor(settings.lockDurationMs / 4))),
      onRun: p.onRun,
    });
  }
  return processors;
}

/**
 * "no successful sync for H hours" needs no run to happen: checked on a timer (every worker does
 * it; the alert state in Redis makes each condition alert once). Returns what stops it.
 */
function watchStaleness(loaded: LoadedConfig, runtime: Runtime, logger: Logger): () => void {
  const watchedSince = new Date().toISOString();
  const feedTargets = loaded.config.feeds
    .flatMap(lanesOf)
    .map((l) => ({ feed: l.feed.name, chatbot: l.chatbot, lane: l.id }));
  const staleTimer = setInterval(() => {
    checkStaleness(runtime.store, loaded.config.alerts, feedTargets, watchedSince, logger).catch((err: Error) =>
      logger.warn({ err: err.message }, 'staleness check failed'),
    );
  }, STALE_CHECK_MS);
  staleTimer.unref();
  return () => clearInterval(staleTimer);
}

/** What the status pages read: the feeds, their runs and pauses, and undo (planned, or queued as a job). */
function statusDeps(
  loaded: LoadedConfig,
  withRedis: LoadedConfig,
  runtime: Runtime,
  q: { redis: RedisClient; queues: Queues; prefix: string; logger: Logger },
): StatusDeps {
  const { redis, queues, prefix, logger } = q;
  return {
    configFile: loaded.file,
    undo: {
      plan: (runId) =>
        undoRun(
          runId,
          { api: runtime.api, store: runtime.store, changeLog: runtime.changeLog, config: withRedis, logger },
          { dryRun: true },
        ),
      enqueue: async (runId, force) => {
        const { feed } = await findUndoTarget(runtime.changeLog, withRedis, runId);
        return enqueueJob(redis, queues, 'undo', `undo:${runId}`, {
          run: runId,
          feed: feed.name,
          chatbot: feed.chatbot,
          ...(force && { force: true }),
        });
      },
    },
    feeds: loaded.config.feeds,
    changeLog: runtime.changeLog,
    queues,
    store: runtime.store,
    staleHours: loaded.config.alerts.rules.staleHours,
    // paused by `feedsync pause` (every feed when all schedules are paused)
    pausedFeeds: async () => {
      const { since } = await pausedFeeds(redis, prefix);
      return new Set(since.has(ALL) ? loaded.config.feeds.map((f) => f.name) : since.keys());
    },
  };
}

/** The HTTP server listening; rejects on 'error' (EADDRINUSE), and startWorker closes the rest. */
async function listen(
  app: ReturnType<typeof createApp>,
  port: number,
  from: HostSetting,
  closers: Closer[],
): Promise<number> {
  const server: Server = app.listen(port, from.host);
  closers.push({
    what: from.what === 'the worker' ? "the worker's HTTP listener" : from.what,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  });
  try {
    await once(server, 'listening');
  } catch (err) {
    throw hostError(err, from) ?? err;
  }
  return (server.address() as AddressInfo).port;
}

/** A listener's host, where it comes from (its setting in the config file), and what listens. */
interface HostSetting {
  host: string;
  setting: string;
  file: string;
  what: string;
}

function hostSetting(loaded: LoadedConfig, section: 'worker' | 'push'): HostSetting {
  return {
    host: loaded.config[section].host,
    setting: `${section}.host`,
    file: loaded.file,
    what: section === 'push' ? 'the push listener' : 'the worker',
  };
}

/**
 * A host the config names that this machine cannot listen on (a name that does not resolve, an
 * address it does not have) is the config's error (exit 2): a rerun would fail alike.
 */
function hostError(err: unknown, from: HostSetting): ConfigError | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  const problem =
    code === 'ENOTFOUND'
      ? 'is not a name this machine resolves (ENOTFOUND)'
      : code === 'EADDRNOTAVAIL'
        ? 'is not an address of this machine (EADDRNOTAVAIL)'
        : undefined;
  if (!problem) return undefined;
  return new ConfigError(
    `${from.setting} ${JSON.stringify(from.host)} in ${from.file} ${problem}, so ${from.what} cannot listen; set ${from.setting} to an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 for every interface`,
    from.file,
  );
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

function startupError(err: unknown, loaded: LoadedConfig, portOption: number | undefined): FeedsyncError {
  if (err instanceof StartupError || err instanceof ConfigError) return err;
  if (err instanceof RedisUnavailableError)
    return new StartupError(err.message, { cause: err, retryable: err.retryable });
  const code = (err as NodeJS.ErrnoException).code;
  const port = portOption ?? loaded.config.worker.port;
  if (code === 'EADDRINUSE')
    return new StartupError(
      `port ${port} is in use (EADDRINUSE); stop what listens there, or set worker.port or --port`,
      { cause: err, retryable: false },
    );
  if (code === 'EACCES')
    return new StartupError(`port ${port} needs privileges (EACCES); use a port above 1023 in worker.port or --port`, {
      cause: err,
      retryable: false,
    });
  return new StartupError(err instanceof Error ? err.message : String(err), { cause: err });
}
