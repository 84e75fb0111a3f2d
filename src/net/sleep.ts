import { AbortedError } from '../errors.js';

/** Wait `ms`, or reject with AbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError(what, signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(what, signal?.reason));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
