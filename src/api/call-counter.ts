// Counts API calls from the client's `onCall` events, for the run reports.
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
  snapshot(): CallCounts;
}

export function createCallCounter(): CallCounter {
  const byEndpoint = Object.fromEntries(Object.keys(ENDPOINTS).map((k) => [k, 0])) as Record<EndpointName, number>;
  let total = 0;
  let retries = 0;
  return {
    onCall(event) {
      byEndpoint[event.endpoint] += 1;
      total += 1;
      if (event.attempt > 1) retries += 1;
    },
    snapshot: () => ({ byEndpoint: { ...byEndpoint }, total, retries }),
  };
}
