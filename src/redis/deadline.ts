// A deadline on a call that may never settle: ioredis queues commands while it reconnects, so a
// ping, a QUIT or a worker's close waits forever without one.
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
