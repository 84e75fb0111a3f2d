// Retry with exponential backoff and full jitter (delay drawn uniformly from 0..min(max, base·2^n)),
// on the failures a retry can help: network errors, timeouts, 5xx, 408 and 429. A 429's Retry-After
// is honoured as the delay; one longer than MAX_RETRY_AFTER_MS is not waited for in-process (the
// error goes up, still marked retryable, so a job retry can come back later).
import { isRetryable, RateLimitedError } from '../errors.js';
import type { RetryPolicy } from './types.js';

const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 200, maxDelayMs: 10_000 };
export const MAX_RETRY_AFTER_MS = 60_000;

export function retryPolicy(partial: Partial<RetryPolicy> | undefined): RetryPolicy {
  return { ...DEFAULT_RETRY, ...partial };
}

/** Full-jitter backoff before retry number `retry` (1 = the first retry). */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(random() * ceiling);
}

/**
 * How long to wait before retrying after `err`, or undefined when it must not be retried:
 * not retryable, out of retries, or a Retry-After too long to wait for here.
 */
export function retryDelay(err: unknown, policy: RetryPolicy, attempt: number): number | undefined {
  if (!isRetryable(err) || attempt > policy.retries) return undefined;
  if (err instanceof RateLimitedError && err.retryAfterMs !== undefined) {
    return err.retryAfterMs > MAX_RETRY_AFTER_MS ? undefined : err.retryAfterMs;
  }
  return backoffDelay(policy, attempt);
}

export { parseRetryAfter } from '../net/retry-after.js';
