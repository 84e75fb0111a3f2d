import { Redis } from 'ioredis';
import type { LoadedConfig } from '../config/schema.js';
import { within } from './deadline.js';
import { DEFAULT_PREFIX } from './names.js';

/**
 * A Redis connection for BullMQ. Workers block on Redis and must not give up on a command while
 * Redis is away, hence `maxRetriesPerRequest: null` (BullMQ refuses a worker connection without it).
 */
export function createRedis(url: string, opts: { name?: string } = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, connectionName: opts.name, lazyConnect: false });
}

/** Close a connection: QUIT when it answers, else drop it, so a dead Redis never hangs a shutdown. */
export async function closeRedis(redis: Redis, timeoutMs = 1000): Promise<void> {
  if (redis.status === 'end') return;
  const quit = redis.quit().then(
    () => undefined,
    () => undefined,
  );
  await within(quit, timeoutMs, undefined);
  redis.disconnect();
}

/** Redis of the worker and the ops commands: the config's, else REDIS_URL, else the local default (`from` says which). */
export function redisSettings(loaded: LoadedConfig): { url: string; prefix: string; from: 'config' | 'REDIS_URL' | 'default' } {
  const prefix = loaded.config.redis?.prefix ?? DEFAULT_PREFIX;
  if (loaded.config.redis) return { url: loaded.config.redis.url, prefix, from: 'config' };
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, prefix, from: 'REDIS_URL' };
  return { url: 'redis://127.0.0.1:6379', prefix, from: 'default' };
}
