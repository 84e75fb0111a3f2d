import { Redis } from 'ioredis';

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
  let timer: NodeJS.Timeout | undefined;
  const quit = redis.quit().then(
    () => undefined,
    () => undefined,
  );
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([quit, timeout]);
  clearTimeout(timer);
  redis.disconnect();
}
