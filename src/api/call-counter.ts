// Counts API calls from the client's `onCall` events, for the run reports: all of them, and those
// made inside `callsAs(scope, fn)` by scope (a sync run counts each lane's own calls so; the
// client's events are told in the async context of the call, so the scope follows the call).
import { AsyncLocalStorage } from 'node:async_hooks';
import { ENDPOINTS, type EndpointName } from './schemas.js';
import type { ApiCallEvent } from './types.js';

export interface CallCounts {
  byEndpoint: Record<EndpointName, number>;
  total: number;
  /** attempts after the first of a call */
  retries: number;
}

export interface CallCounter {
  onCall(event: ApiCallEvent): void;
  /** every call counted; with `scope`, the calls made inside callsAs(scope, …) */
  snapshot(scope?: string): CallCounts;
}

const attributed = new AsyncLocalStorage<string>();

/** Runs `fn` with the API calls it makes (and their retries) counted for `scope` too. */
export function callsAs<T>(scope: string, fn: () => T): T {
  return attributed.run(scope, fn);
}

export function createCallCounter(): CallCounter {
  const all = zero();
  const scoped = new Map<string, CallCounts>();
  const add = (c: CallCounts, event: ApiCallEvent) => {
    c.byEndpoint[event.endpoint] += 1;
    c.total += 1;
    if (event.attempt > 1) c.retries += 1;
  };
  return {
    onCall(event) {
      add(all, event);
      const scope = attributed.getStore();
      if (scope === undefined) return;
      let c = scoped.get(scope);
      if (!c) scoped.set(scope, (c = zero()));
      add(c, event);
    },
    snapshot(scope) {
      const c = scope === undefined ? all : (scoped.get(scope) ?? zero());
      return { byEndpoint: { ...c.byEndpoint }, total: c.total, retries: c.retries };
    },
  };
}

function zero(): CallCounts {
  return { byEndpoint: Object.fromEntries(Object.keys(ENDPOINTS).map((k) => [k, 0])) as Record<EndpointName, number>, total: 0, retries: 0 };
}
