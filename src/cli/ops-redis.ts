// The Redis of the ops commands (runs, cancel, pause, resume, enqueue): the config's (or REDIS_URL,
// or the local default), checked to answer, so a Redis that is down is one clear error, not a hang.
import type { LoadedConfig } from '../config/schema.js';
import { closeRedis, createRedis, redisSettings, type RedisClient } from '../queue/index.js';
import { requireRedis } from '../redis/require-redis.js';

export interface OpsRedis {
  redis: RedisClient;
  prefix: string;
  /** the Redis without its password, for messages */
  where: string;
  from: 'config' | 'REDIS_URL' | 'default';
  close(): Promise<void>;
}

/** `waitMs`: how long Redis has to answer (default: requireRedis's) */
export async function openOpsRedis(loaded: LoadedConfig, name: string, waitMs?: number): Promise<OpsRedis> {
  const settings = redisSettings(loaded);
  const { prefix, from, where } = settings;
  const redis = createRedis(settings, { name });
  redis.on('error', () => {}); // a Redis that does not answer is reported by requireRedis, once
  await requireRedis(redis, where, { use: 'read', ...(waitMs !== undefined && { waitMs }) });
  return { redis, prefix, where, from, close: () => closeRedis(redis) };
}
