// The Redis of the ops commands (runs, cancel, pause, resume, enqueue): the config's (or REDIS_URL,
// or the local default), checked to answer, so a Redis that is down is one clear error, not a hang.
import type { LoadedConfig } from '../config/schema.js';
import { NetworkError } from '../errors.js';
import { closeRedis, createRedis, redisSettings, type RedisClient } from '../queue/index.js';
import { within } from '../redis/deadline.js';

const ANSWER_MS = 5000;

export interface OpsRedis {
  redis: RedisClient;
  prefix: string;
  /** the Redis without its password, for messages */
  where: string;
  from: 'config' | 'REDIS_URL' | 'default';
  close(): Promise<void>;
}

export async function openOpsRedis(loaded: LoadedConfig, name: string, answerMs = ANSWER_MS): Promise<OpsRedis> {
  const settings = redisSettings(loaded);
  const { prefix, from, where } = settings;
  const redis = createRedis(settings, { name });
  redis.on('error', () => {}); // a Redis that does not answer is reported below, once
  const answered = await within(
    redis.ping().then(
      () => true,
      () => false,
    ),
    answerMs,
    false,
  );
  if (!answered) {
    await closeRedis(redis);
    throw new NetworkError(`Redis ${where}`, new Error(`no answer within ${answerMs / 1000} s; is Redis running there?`));
  }
  return { redis, prefix, where, from, close: () => closeRedis(redis) };
}
