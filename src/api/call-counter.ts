// Counts API calls from the client's `onCall` events, for the run reports: all of them, and by
// the scope each call was made for (CallOptions.scope: a sync run counts each lane's own calls
// so). The scope rides on the call itself, not in an AsyncLocalStorage: on Node 20 one of those,
// once used, makes every promise of the process pay a hook (about 3% of a sync run's CPU).
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
  /** every call counted; with `scope`, the calls made for it (CallOptions.scope) */
  snapshot(scope?: string): CallCounts;
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
      const scope = event.scope;
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
  return {
    byEndpoint: Object.fromEntries(Object.keys(ENDPOINTS).map((k) => [k, 0])) as Record<EndpointName, number>,
    total: 0,
    retries: 0,
  };
}
