// The Redis of the ops commands (runs, cancel, pause, resume, enqueue): the config's, or REDIS_URL,
// checked to answer, so a Redis that is down is one clear error, not a hang. With neither, the
// command refuses in one line (redis/settings.ts): it never writes to a Redis nothing configured.
// Redis going away or starting to refuse the connection (NOAUTH once a password is set) after that
// check is an error too, not a wait without end: every use of it goes through `answer`, bounded,
// and `close` ends the connection whatever state it is in (closeRedis).
import type { LoadedConfig } from '../config/schema.js';
import { RedisUnavailableError } from '../errors.js';
import { closeRedis, createRedis, redisSettings, type RedisClient } from '../queue/index.js';
import { credentialsRefused } from '../redis/connection-errors.js';
import { byDeadline } from '../redis/deadline.js';
import { requireRedis } from '../redis/require-redis.js';
import { redisNamed, type RedisSettings } from '../redis/settings.js';

/** how long one use of Redis by an ops command (a read, a write, a few of them) has to answer */
const ANSWER_MS = 10_000;

export interface OpsRedis {
  redis: RedisClient;
  prefix: string;
  /** the Redis without its password, for messages */
  where: string;
  from: RedisSettings['from'];
  /** which Redis, for the command's output: "Redis redis://host:6379 (prefix P)" */
  named: string;
  /**
   * `call`'s value, or RedisUnavailableError (naming Redis and what it answered) when it has not
   * answered within ANSWER_MS or Redis refused the connection's credentials; other errors as they are.
   * (ioredis queues a command while it reconnects, without end: a command in flight when the
   * connection dropped is sent again only once it is ready, which a Redis refusing it never makes it.)
   */
  answer<T>(call: Promise<T>): Promise<T>;
  /** `err`, or RedisUnavailableError when it is Redis refusing the connection's credentials (NOAUTH, WRONGPASS) */
  failure(err: unknown): unknown;
  close(): Promise<void>;
}

/**
 * `command`: as the person typed it (`pause`, `enqueue`), for the refusal; `waitMs`: how long Redis
 * has to answer, first the PING and then each `answer` (default: requireRedis's, then ANSWER_MS)
 */
export async function openOpsRedis(loaded: LoadedConfig, command: string, waitMs?: number): Promise<OpsRedis> {
  const settings = redisSettings(loaded, `feedsync ${command}`);
  const { prefix, from, where, source } = settings;
  const redis = createRedis(settings, { name: `feedsync-${command.replace(/\s+/g, '-')}` });
  redis.on('error', () => {}); // a Redis that does not answer is reported by requireRedis, once
  await requireRedis(redis, settings, { use: 'read', ...(waitMs !== undefined && { waitMs }) });
  let lastError: unknown;
  redis.on('error', (err) => (lastError = err));
  const failure = (err: unknown) =>
    err instanceof Error && credentialsRefused(err)
      ? new RedisUnavailableError(where, err.message, { cause: err, use: 'read', source })
      : err;
  const answerMs = waitMs ?? ANSWER_MS;
  const answer = async <T>(call: Promise<T>): Promise<T> => {
    const deadline = AbortSignal.timeout(answerMs);
    try {
      return await byDeadline(call, deadline);
    } catch (err) {
      if (!deadline.aborted) throw failure(err);
      const refused = failure(lastError);
      if (refused instanceof RedisUnavailableError) throw refused;
      const seen = lastError instanceof Error ? `; its last error: ${lastError.message}` : '';
      const detail = `no answer within ${answerMs / 1000} s${seen}`;
      throw new RedisUnavailableError(where, detail, { cause: lastError ?? err, use: 'read', source });
    }
  };
  return {
    redis,
    prefix,
    where,
    from,
    named: redisNamed(settings),
    answer,
    failure,
    close: () => closeRedis(redis),
  };
}
