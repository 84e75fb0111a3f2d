export { createApiClient } from './client.js';
export { createCallCounter, type CallCounter, type CallCounts } from './call-counter.js';
export { apiBudget, localApiBudget, type ApiBudgetSettings } from './rate-limiter.js';
export { createStreamParser } from './stream-parser.js';
export type { ApiCallEvent, ApiClientOptions, CallOptions, ChatbotApi, ListPageDecoder, RawBody, RetryPolicy } from './types.js';
export * from './schemas.js';
