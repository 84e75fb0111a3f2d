// "No Redis, no run": a command whose config names a Redis (sync, settings, undo) runs only when that
// Redis answers. Falling back to the state file would run beside the workers that hold the
// chatbot's lock in Redis, on a state they never see: the chatbot written twice. The wait is bounded:
// a partition or a full `maxclients` fails the command in seconds, naming Redis and the cause.
import type { RedisClient } from './client.js';
import { RedisUnavailableError } from '../errors.js';

/** How long a command waits for the configured Redis to answer before it refuses to run. */
export const REDIS_ANSWER_MS = 5000;

/**
 * Resolve once `redis` answers a PING, or throw RedisUnavailableError (naming `url` (or the
 * topology's description) without its
 * password, and the cause) after `waitMs`. Connects a lazy connection first. On failure the
 * connection is dropped: nothing may be written through it afterwards.
 */
export async function requireRedis(redis: RedisClient, url: string, waitMs = REDIS_ANSWER_MS): Promise<void> {
  let lastError: unknown;
  const onError = (err: unknown) => {
    lastError = err;
  };
  redis.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${waitMs} ms`)), waitMs);
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
    redis.disconnect();
    const cause = lastError ?? err;
    const detail = [err, lastError]
      .filter((e, i, all): e is Error => e instanceof Error && all.findIndex((x) => x instanceof Error && x.message === e.message) === i)
      .map((e) => e.message)
      .join('; ');
    throw new RedisUnavailableError(redactUrl(url), detail || String(err), { cause });
  } finally {
    clearTimeout(timer);
    redis.off('error', onError);
  }
}

/** A Redis URL as it may be printed: without its password. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}
