// A client-side token bucket: at most `ratePerSecond` calls a second on average, with bursts of up
// to one second's worth. Reservation based (each caller is given the next free slot), so waiters are
// served in order without a queue, and an aborted wait leaves nothing behind but an unused slot.
import { AbortedError } from '../errors.js';
import { sleep } from './sleep.js';

export interface RateLimiter {
  /** Resolves when the caller may send; rejects with AbortedError when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<void>;
}

export function createRateLimiter(ratePerSecond: number | undefined, opts: { burst?: number } = {}): RateLimiter {
  if (!ratePerSecond || ratePerSecond <= 0 || !Number.isFinite(ratePerSecond)) {
    return {
      acquire: async (signal) => {
        if (signal?.aborted) throw new AbortedError('rate limiter', signal.reason);
      },
    };
  }
  const interval = 1000 / ratePerSecond;
  const burst = Math.max(1, opts.burst ?? Math.ceil(ratePerSecond));
  let next = 0;
  return {
    async acquire(signal) {
      if (signal?.aborted) throw new AbortedError('rate limiter', signal.reason);
      const now = performance.now();
      const slot = Math.max(next, now - (burst - 1) * interval);
      next = slot + interval;
      if (slot > now) await sleep(slot - now, signal, 'rate limiter');
    },
  };
}
