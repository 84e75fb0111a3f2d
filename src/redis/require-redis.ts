// The one wait for Redis: every command, the worker and the change log's readers open a connection
// and call requireRedis before they use it. "No Redis, no run": a command whose config names a
// Redis (sync, settings, undo) runs only when that Redis answers; falling back to the state file
// would run beside the workers that hold the chatbot's lock in Redis, on a state they never see.
// The wait is bounded: a partition or a full `maxclients` fails in seconds, naming Redis and the cause.
import type { RedisClient } from './client.js';
import { closeRedis } from './connection.js';
import { RedisUnavailableError, type RedisPlace, type RedisUse } from '../errors.js';

/** How long a command waits for Redis to answer before it refuses to run. */
const REDIS_ANSWER_MS = 5000;

export interface RequireRedisOptions {
  /** what the caller does with Redis: it picks the fix the error names */
  use?: RedisUse;
  waitMs?: number;
}

/**
 * Resolve once `redis` answers a PING, or throw RedisUnavailableError naming the Redis `at` (as it
 * may be printed, and what gave its URL: RedisSettings) and the cause after `waitMs`. Connects a lazy connection
 * first. On failure the connection is closed: nothing may be written through it afterwards.
 */
export async function requireRedis(redis: RedisClient, at: RedisPlace, opts: RequireRedisOptions = {}): Promise<void> {
  const { use = 'state', waitMs = REDIS_ANSWER_MS } = opts;
  let lastError: unknown;
  const onError = (err: unknown) => {
    lastError = err;
  };
  redis.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`waited ${waitMs < 1000 ? `${waitMs} ms` : `${waitMs / 1000} s`}`)),
      waitMs,
    );
  });
  try {
    await Promise.race([
      (async () => {
        if (redis.status === 'wait') await redis.connect();
        await redis.ping();
      })(),
      late,
    ]);
  } catch (err) {
    await closeRedis(redis, { timeoutMs: 0 });
    const detail = [err, lastError]
      .filter(
        (e, i, all): e is Error =>
          e instanceof Error && all.findIndex((x) => x instanceof Error && x.message === e.message) === i,
      )
      // (a command's connection names Redis in its errors already: its detail only)
      .map((e) => (e instanceof RedisUnavailableError ? e.detail : e.message))
      .join('; ');
    throw new RedisUnavailableError(at.where, detail || String(err), {
      cause: lastError ?? err,
      use,
      ...(at.source && { source: at.source }),
    });
  } finally {
    clearTimeout(timer);
    redis.off('error', onError);
  }
}
