// Deadlines on calls that may never settle: ioredis queues commands while it reconnects, and with
// `maxRetriesPerRequest: null` (BullMQ's requirement) it reconnects without end, so a ping, a QUIT, a
// queue's read or a worker's close waits forever without one. A Redis that refuses the connection's
// commands (NOAUTH once a password is set) is such a Redis too: it is never `ready` again.

/** `p`'s value, or `fallback` when `p` has not settled within `ms`; the timer never outlives the race. */
export async function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `p`, or the signal's reason once the signal (the caller's deadline) aborts first; `p` alone without one. */
export function byDeadline<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
