// While Redis is away, every connection of a process reports each of its reconnect attempts as an
// error: a worker's five queues and its own connection made about 20 a second, 81 lines with their
// stacks in a 4 s outage (test/queue/redis-outage-log.processes.test.ts). A connection's error of the
// system (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...) or "Connection is closed." says one thing, that
// Redis cannot be reached, so it is logged as one warn line a minute at most, its message without
// its stack, counting those in between. Any other error is the caller's to log whole.
import { RedisUnavailableError, type RedisPlace, type RedisUse } from '../errors.js';
import type { Logger } from '../log.js';
import { isSystemError } from '../system-error.js';

const EVERY_MS = 60_000;

/** ioredis's words for a command sent on a connection that has closed */
const CLOSED = 'Connection is closed.';

/**
 * A handler of one connection's errors: it logs or counts a connection error (true) and leaves any
 * other to the caller (false). `fields` name the connection in the line.
 */
export function connectionErrorLog(
  logger: Logger,
  fields: Record<string, string>,
  msg: string,
  now: () => number = Date.now,
): (err: unknown) => boolean {
  let loggedAt = -Infinity;
  let since = 0;
  return (err) => {
    if (!(err instanceof Error) || !(isSystemError(err) || err.message === CLOSED)) return false;
    const t = now();
    if (t - loggedAt < EVERY_MS) {
      since++;
      return true;
    }
    logger.warn(
      { ...fields, err: err.message, ...(since > 0 && { since }) },
      `${msg}${since > 0 ? ` (and ${since} more since the last such line; at most one a minute is logged)` : ''}`,
    );
    loggedAt = t;
    since = 0;
    return true;
  };
}

/** Redis refusing the connection's credentials: NOAUTH once a password is set, WRONGPASS for a wrong one */
export function credentialsRefused(err: Error): boolean {
  return /^(NOAUTH|WRONGPASS)/.test(err.message);
}

/** ioredis's words for a command its commandTimeout ended */
const TIMED_OUT = 'Command timed out';

/**
 * `err` as RedisUnavailableError naming the Redis `at` when it says Redis cannot be used from here: no answer
 * within `within` (ioredis's commandTimeout), the credentials refused (NOAUTH, WRONGPASS), or the
 * reconnects a command was allowed spent (maxRetriesPerRequest); any other error (a reply of Redis to
 * the command itself) as it is.
 */
export function redisFailure<E>(
  err: E,
  at: RedisPlace,
  /** how long the call had, for the message: "15 s" */
  within: string,
  use: RedisUse = 'midway',
): E | RedisUnavailableError {
  if (!(err instanceof Error) || err instanceof RedisUnavailableError) return err;
  const detail =
    err.message === TIMED_OUT
      ? `no answer within ${within}`
      : credentialsRefused(err) || err.name === 'MaxRetriesPerRequestError'
        ? err.message
        : undefined;
  return detail === undefined
    ? err
    : new RedisUnavailableError(at.where, detail, { cause: err, use, ...(at.source && { source: at.source }) });
}
