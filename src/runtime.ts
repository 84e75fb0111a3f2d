// Wires what a command or a job needs from a loaded config: the API client (and the embedded
// emulator behind it when `api.baseUrl: embedded`), and the state store (Redis when configured: a
// Redis that does not answer fails the command; else, or with `--no-redis`, a state file beside the
// config). Everything here is closed by `close()`.
import { join } from 'node:path';
import { closeAll, type Closer } from './close-all.js';
import { createApiClient } from './api/client.js';
import { apiBudget } from './api/rate-limiter.js';
import { createBudgets, memoryBackend, redisBackend, type Budgets } from './budget/index.js';
import type { ApiCallEvent, ChatbotApi } from './api/types.js';
import { defaultedKeyWarnings } from './config/defaulted-keys.js';
import { selectFlagWarnings } from './config/select-reads.js';
import { chatbotsOf } from './config/feed-chatbots.js';
import type { LoadedConfig } from './config/schema.js';
import type { RunningEmulator } from './emulator/index.js';
import { causeMessage } from './errors.js';
import type { Logger } from './log.js';
import { createFileStore } from './state/file-store.js';
import { OPEN_WAIT_MS, openWaitNotice } from './state/open-lock.js';
import type { KvStore } from './state/kv-store.js';
import type { ChangeLog } from './change-log/change-log.js';
import { createFileChangeLog } from './change-log/file-change-log.js';
import { createRedisChangeLog } from './change-log/redis-change-log.js';
import { createRedisStore } from './state/redis-store.js';
import { changeLogFile, stateDir, stateFile } from './state/paths.js';
import type { RedisClient } from './redis/client.js';
import { redisSettings } from './redis/settings.js';

// where the state lives: named here too, for the commands that open a runtime
export { changeLogFile, stateDir, stateFile };

export interface Runtime {
  api: ChatbotApi;
  store: KvStore;
  /** where each run's changes are recorded: beside the state (Redis, or changes.jsonl beside the state file) */
  changeLog: ChangeLog;
  apiBaseUrl: string;
  /** request budgets per credential: through Redis when the state is (shared by every process), else this process's */
  budgets: Budgets;
  emulator?: RunningEmulator;
  /** the Redis the state lives in, when it does (foreground runs record their history there too) */
  redis?: RedisClient;
  /** set when `redis` is configured but the run keeps its state in the file (`--no-redis`): what to say in its report */
  uncoordinated?: string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  logger: Logger;
  onCall?: (event: ApiCallEvent) => void;
  /** a connection the caller owns (the worker's); otherwise one is opened from `redis.url` */
  redis?: RedisClient;
  /** `--no-redis`: the state file even when `redis` is configured (a run the workers do not see) */
  noRedis?: boolean;
  /** the command writes no state (smoke, feed explain): a configured Redis that does not answer is warned about, not refused */
  redisOptional?: boolean;
}

/** What a `--no-redis` run says in its report. */
const UNCOORDINATED =
  'run with --no-redis: state from the state file, not Redis; not coordinated with the workers (their locks and state were not consulted)';

export async function createRuntime(loaded: LoadedConfig, opts: RuntimeOptions): Promise<Runtime> {
  const { config } = loaded;
  const closers: Closer[] = [];
  try {
    // Redis first: a command refused for want of Redis has started nothing and written nothing
    const { store, redis } = await openStore(loaded, opts, closers);
    // said before the first call: a 401 from the service then explains itself
    for (const warning of defaultedKeyWarnings(loaded)) opts.logger.warn(warning);
    // (and before any record is read: a flag the select leaves out hides nothing)
    for (const warning of selectFlagWarnings(loaded)) opts.logger.warn(warning);
    let baseUrl = config.api.baseUrl;
    let emulator: RunningEmulator | undefined;
    if (baseUrl === 'embedded') {
      // (loaded only here: a run against a real service never loads the emulator)
      const { startEmulator } = await import('./emulator/index.js');
      emulator = await startEmulator({
        port: 0,
        // every chatbot the config names: chatbots[] (settings, smoke) and each feed's, which need not be in it
        chatbots: config.chatbots.length
          ? [...new Set([...config.chatbots.map((c) => c.serialNumber), ...config.feeds.flatMap(chatbotsOf)])]
          : undefined,
        secretKey: config.api.secretKey,
        sessionKey: config.api.sessionKey,
        dataFile: join(stateDir(loaded), 'emulator.json'),
        logger: opts.logger.child({ component: 'emulator' }),
      });
      closers.push({ what: 'the embedded emulator', close: () => emulator!.close() });
      // The spec has no create-session endpoint (DESIGN: smoke takes sessionId from config), so an
      // embedded emulator is given the sessions the config's smoke checks will use.
      for (const { serialNumber, smoke } of config.chatbots)
        if (smoke) emulator.createSession(serialNumber, smoke.sessionId);
      baseUrl = emulator.url;
      opts.logger.debug({ url: baseUrl }, 'embedded emulator started');
    }

    // Budgets live where the state does: a Redis shared by every worker and CLI run on it.
    const budgets = createBudgets(
      redis && config.redis ? redisBackend(redis, redisSettings(loaded).prefix) : memoryBackend(),
      opts.logger,
    );
    const api = createApiClient({
      baseUrl,
      secretKey: config.api.secretKey,
      sessionKey: config.api.sessionKey,
      timeoutMs: config.api.timeoutMs,
      maxResponseBytes: config.api.maxResponseBytes,
      retry: { retries: config.api.retries },
      budget: apiBudget(budgets, {
        baseUrl,
        secretKey: config.api.secretKey,
        ratePerSecond: config.api.ratePerSecond,
        concurrency: config.api.concurrency,
      }),
      onCall: opts.onCall,
    });

    const limits = config.changeLog;
    const changeLog =
      redis && config.redis
        ? createRedisChangeLog(redis, redisSettings(loaded).prefix, limits)
        : await createFileChangeLog(changeLogFile(store.location), limits);
    closers.push({ what: 'the change log', close: () => changeLog.close() });
    return {
      api,
      store,
      changeLog,
      budgets,
      apiBaseUrl: baseUrl,
      emulator,
      redis,
      ...(config.redis && opts.noRedis && { uncoordinated: UNCOORDINATED }),
      // every closer runs whatever one before it did; the first failure is thrown, any other warned of
      close: async () => {
        const failures: unknown[] = [];
        await closeAll(closers, (what, err) => {
          if (failures.push(err) > 1) notClosed(opts.logger, what, err);
        });
        if (failures.length) throw failures[0];
      },
    };
  } catch (err) {
    // (the start's error is what is thrown; a closer that fails after it is warned of)
    await closeAll(closers, (what, closeErr) => notClosed(opts.logger, what, closeErr));
    throw err;
  }
}

async function openStore(
  loaded: LoadedConfig,
  opts: RuntimeOptions,
  closers: Closer[],
): Promise<{ store: KvStore; redis?: RedisClient }> {
  const { config } = loaded;
  const fileStore = async () => {
    // the state file is open in one process at a time (state/open-lock.ts): wait for another run
    // as long as a run waits for its chatbot's lock (the longest deadline of the config's feeds)
    const deadlines = config.feeds.map((f) => f.deadlineMinutes);
    const path = stateFile(loaded);
    const minutes = deadlines.length ? Math.max(...deadlines) : OPEN_WAIT_MS / 60_000;
    const store = await createFileStore(path, {
      waitMs: minutes * 60_000,
      // said at once: else a second run sits silent until the first has ended
      onWait: (holder) =>
        opts.logger.warn(
          { state: path },
          openWaitNotice(path, holder, minutes * 60_000, deadlines.length ? 'feeds[].deadlineMinutes' : 'the default'),
        ),
    });
    closers.push({ what: `the state file ${path}`, close: () => store.close() });
    return { store };
  };
  if (!config.redis || opts.noRedis) return fileStore();
  const settings = redisSettings(loaded);
  const { prefix, where } = settings;
  if (opts.redis) return { store: createRedisStore(opts.redis, prefix, where), redis: opts.redis };

  // ioredis is loaded here, when the state is in Redis: a run on the state file never loads it
  const [{ closeRedis, createRedis }, { requireRedis }] = await Promise.all([
    import('./redis/connection.js'),
    import('./redis/require-redis.js'),
  ]);
  const redis = createRedis(settings, { name: 'feedsync-command', purpose: 'command' });
  redis.on('error', () => {}); // reported through requireRedis(); ioredis would print it otherwise
  try {
    await requireRedis(redis, settings); // no Redis, no run: throws before anything is written
  } catch (err) {
    // a command that writes no state (smoke, feed explain) goes on without Redis's shared budgets
    if (!opts.redisOptional) throw err;
    const local = await fileStore();
    opts.logger.warn({ err: (err as Error).message }, 'Redis does not answer; request budgets count this process only');
    return local;
  }
  closers.push({ what: `the Redis connection to ${where}`, close: () => closeRedis(redis) });
  return { store: createRedisStore(redis, prefix, where), redis };
}

function notClosed(logger: Logger, what: string, err: unknown): void {
  logger.warn({ err, closing: what }, `${what} not closed: ${causeMessage(err)}`);
}
