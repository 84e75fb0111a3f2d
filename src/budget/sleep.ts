import { AbortedError } from '../errors.js';

export { sleep } from '../net/sleep.js';

/** `p`, or AbortedError as soon as `signal` aborts (p itself goes on). */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new AbortedError(what, signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError(what, signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}
