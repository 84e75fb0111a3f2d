// One HTTP attempt: POST a JSON body with a per-attempt timeout combined with the caller's signal,
// and turn transport failures into the error family (AbortedError, TimeoutError, NetworkError).
import { AbortedError, NetworkError, TimeoutError } from '../errors.js';
import { redactSecrets } from '../log.js';

/**
 * The signal of one attempt. The timeout is an idle timeout: `touch()` restarts it, so a stream that
 * keeps sending is not cut while one that stalls for `timeoutMs` is.
 */
export interface AttemptSignal {
  signal: AbortSignal;
  touch(): void;
  dispose(): void;
  readonly timedOut: boolean;
}

export function attemptSignal(timeoutMs: number, caller: AbortSignal | undefined): AttemptSignal {
  const timer = new AbortController();
  let timedOut = false;
  const fire = () => {
    timedOut = true;
    timer.abort(new Error(`timeout after ${timeoutMs} ms`));
  };
  let handle = setTimeout(fire, timeoutMs);
  return {
    signal: caller ? AbortSignal.any([caller, timer.signal]) : timer.signal,
    touch() {
      clearTimeout(handle);
      if (!timedOut) handle = setTimeout(fire, timeoutMs);
    },
    dispose: () => clearTimeout(handle),
    get timedOut() {
      return timedOut;
    },
  };
}

/** The error for a failure while sending or reading: the caller's abort wins, then our timeout. */
export function transportError(
  endpoint: string,
  err: unknown,
  attempt: AttemptSignal,
  caller: AbortSignal | undefined,
  timeoutMs: number,
): Error {
  if (caller?.aborted) return new AbortedError(endpoint, caller.reason);
  if (attempt.timedOut) return new TimeoutError(endpoint, timeoutMs);
  const error = new NetworkError(endpoint, err);
  error.message = redactSecrets(error.message);
  return error;
}

export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
}
