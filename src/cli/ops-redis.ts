// The Redis of the ops commands (runs, cancel, pause, resume, enqueue): the config's, or REDIS_URL,
// checked to answer, so a Redis that is down is one clear error, not a hang. With neither, the
// command refuses in one line (redis/settings.ts): it never writes to a Redis nothing configured.
import type { LoadedConfig } from '../config/schema.js';
import { closeRedis, createRedis, redisSettings, type RedisClient } from '../queue/index.js';
import { requireRedis } from '../redis/require-redis.js';
import { redisNamed, type RedisSettings } from '../redis/settings.js';

export interface OpsRedis {
  redis: RedisClient;
  prefix: string;
  /** the Redis without its password, for messages */
  where: string;
  from: RedisSettings['from'];
  /** which Redis, for the command's output: "Redis redis://host:6379 (prefix P)" */
  named: string;
  close(): Promise<void>;
}

/** `command`: as the person typed it (`pause`, `enqueue`), for the refusal; `waitMs`: how long Redis has to answer (default: requireRedis's) */
export async function openOpsRedis(loaded: LoadedConfig, command: string, waitMs?: number): Promise<OpsRedis> {
  const settings = redisSettings(loaded, `feedsync ${command}`);
  const { prefix, from, where } = settings;
  const redis = createRedis(settings, { name: `feedsync-${command.replace(/\s+/g, '-')}` });
  redis.on('error', () => {}); // a Redis that does not answer is reported by requireRedis, once
  await requireRedis(redis, where, { use: 'read', ...(waitMs !== undefined && { waitMs }) });
  return { redis, prefix, where, from, named: redisNamed(settings), close: () => closeRedis(redis) };
}
