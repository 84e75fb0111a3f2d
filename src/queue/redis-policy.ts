// BullMQ's keys must never be evicted: a Redis with an LRU policy silently loses jobs under memory
// pressure. Warn at start; a managed Redis may refuse CONFIG, which is not an error.
import type { RedisClient } from '../redis/connection.js';
import type { Logger } from '../log.js';

export async function checkEvictionPolicy(redis: RedisClient, logger: Logger): Promise<string | undefined> {
  let policy: string | undefined;
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch (err) {
    logger.info(
      { err: (err as Error).message },
      'could not read maxmemory-policy (CONFIG disabled?); make sure it is noeviction',
    );
    return undefined;
  }
  if (policy && policy !== 'noeviction') {
    logger.warn(
      { policy },
      `Redis maxmemory-policy is ${policy}: jobs may be evicted under memory pressure; set it to noeviction`,
    );
  }
  return policy;
}
