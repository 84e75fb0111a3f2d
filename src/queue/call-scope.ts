// Counting API calls per job when several jobs share one API client (worker concurrency > 1): the
// client's onCall is one function for the process, so each job's counter rides along in an
// AsyncLocalStorage and the shared onCall forwards each event to the counter of the job it is in.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallCounter } from '../api/call-counter.js';
import type { ApiCallEvent } from '../api/types.js';

const scope = new AsyncLocalStorage<CallCounter>();

export function withCallCounter<T>(counter: CallCounter, fn: () => Promise<T>): Promise<T> {
  return scope.run(counter, fn);
}

/** Wire into the API client's onCall. */
export function forwardCallToJob(event: ApiCallEvent): void {
  scope.getStore()?.onCall(event);
}
