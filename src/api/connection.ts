// The Chatbot Service client's parts below the endpoints: one connection (base URL, keys, transport,
// budget, retry policy), a request's headers, the retry loop over attempts (each waits for the budget
// and reports to `onCall`), the request check and reading a response's body. client.ts builds the
// endpoints from these; ask-stream.ts the streamed answer.
import type { z } from 'zod';
import { FeedsyncError, RateLimitedError, ValidationError } from '../errors.js';
import type { BoundedResponse } from '../net/request.js';
import { keepAliveAgent, wholePool } from '../net/request.js';
import { sleep } from '../net/sleep.js';
import { registerSecret } from '../secrets.js';
import type { Budget, Permit } from '../budget/budget.js';
import { DEFAULT_MAX_RESPONSE_BYTES, transportError, type ApiTransport } from './http.js';
import { localApiBudget } from './rate-limiter.js';
import { retryDelay, retryPolicy } from './retry.js';
import { AUTH_HEADER, ENDPOINTS, type EndpointName } from './schemas.js';
import type { ApiCallEvent, ApiClientOptions, CallOptions, RetryPolicy } from './types.js';
import { zodIssues } from './zod-issues.js';

/** What every call of one client shares. */
export interface Connection {
  opts: ApiClientOptions;
  baseUrl: string;
  policy: RetryPolicy;
  budget: Budget;
  transport: ApiTransport;
  /** each endpoint's URL once parsed (endpointUrl) */
  urls: Map<EndpointName, string | URL>;
}

/** One attempt's result: the value and the HTTP status it came with. */
export type Attempt<T> = () => Promise<{ value: T; httpStatus: number }>;

export function connect(opts: ApiClientOptions): Connection {
  registerSecret(opts.secretKey);
  registerSecret(opts.sessionKey);
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const budget =
    opts.budget ??
    localApiBudget({
      baseUrl,
      secretKey: opts.secretKey,
      ratePerSecond: opts.ratePerSecond,
      concurrency: opts.concurrency,
    });
  return {
    opts,
    baseUrl,
    policy: retryPolicy(opts.retry),
    budget,
    transport: {
      // as many connections as calls in flight (api.concurrency), the budget's own or the one shared
      pool: wholePool(budget.limits.concurrency),
      // (the streamed answer's, apart: a client that asks holds at most that many more)
      dispatcher: keepAliveAgent(budget.limits.concurrency),
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    },
    urls: new Map(),
  };
}

/**
 * An endpoint's URL, parsed once for the connection: undici parses a URL given as text on every
 * call, and takes a parsed one as it is. A base that does not parse stays text, for undici to
 * refuse as before (the call fails, not the client).
 */
export function endpointUrl(c: Connection, endpoint: EndpointName): string | URL {
  let url = c.urls.get(endpoint);
  if (url === undefined) {
    const text = c.baseUrl + ENDPOINTS[endpoint];
    url = URL.canParse(text) ? new URL(text) : text;
    c.urls.set(endpoint, url);
  }
  return url;
}

export function headers(c: Connection, endpoint: EndpointName, accept: string): Record<string, string> {
  const key = AUTH_HEADER[endpoint] === 'authorization' ? c.opts.secretKey : c.opts.sessionKey;
  return { 'content-type': 'application/json', accept, [AUTH_HEADER[endpoint]]: key };
}

/** Runs `attempt` until it succeeds, fails for good, or runs out of retries; one onCall per attempt. */
export async function withRetry<T>(
  c: Connection,
  endpoint: EndpointName,
  call: CallOptions | undefined,
  attempt: Attempt<T>,
): Promise<T> {
  const { value, permit } = await withRetryHeld(c, endpoint, call, attempt);
  permit.release();
  return value;
}

/**
 * withRetry, but the successful attempt's permit (its slot in flight) stays held for the caller to
 * release: a streamed answer is still being sent when its headers come.
 */
export async function withRetryHeld<T>(
  c: Connection,
  endpoint: EndpointName,
  call: CallOptions | undefined,
  attempt: Attempt<T>,
): Promise<{ value: T; permit: Permit }> {
  const caller = call?.signal;
  for (let n = 1; ; n++) {
    const permit = await c.budget.acquire(caller);
    const started = performance.now();
    const report = (e: Omit<ApiCallEvent, 'endpoint' | 'attempt' | 'durationMs'>) =>
      c.opts.onCall?.({
        endpoint,
        attempt: n,
        durationMs: Math.round(performance.now() - started),
        ...e,
        ...(call?.scope !== undefined && { scope: call.scope }),
      });
    try {
      const { value, httpStatus } = await attempt();
      report({ outcome: 'ok', httpStatus, apiCode: 200 });
      return { value, permit };
    } catch (raw) {
      const err = raw instanceof FeedsyncError ? raw : transportError(ENDPOINTS[endpoint], raw, caller, c.transport);
      await pauseOnRetryAfter(c, endpoint, err, permit);
      permit.release();
      const delay = call?.retry === false ? undefined : retryDelay(err, c.policy, n);
      const status = err as { httpStatus?: number; apiCode?: number };
      report({
        outcome: delay === undefined ? 'error' : 'retry',
        httpStatus: status.httpStatus,
        apiCode: status.apiCode,
        error: err.message,
        ...(delay !== undefined && { retryDelayMs: delay }),
      });
      if (delay === undefined) throw err;
      await sleep(delay, caller, ENDPOINTS[endpoint]);
    }
  }
}

/**
 * The service asked the credential to wait: every process on it waits, not only this call. Set
 * before this call's slot is freed, so no call of ours starts in between.
 */
async function pauseOnRetryAfter(c: Connection, endpoint: EndpointName, err: Error, permit: Permit): Promise<void> {
  if (!(err instanceof RateLimitedError) || err.retryAfterMs === undefined) return;
  await c.budget
    .pauseUntil(
      Date.now() + err.retryAfterMs,
      `${ENDPOINTS[endpoint]} answered HTTP ${err.httpStatus} with Retry-After`,
    )
    .catch((e: unknown) => {
      permit.release();
      throw e;
    });
}

/** `quick`: a hand-written check that agrees with `schema` (validate.ts), tried first; zod decides the rest and names the issues */
export function validate<S extends z.ZodType>(
  endpoint: EndpointName,
  schema: S,
  req: unknown,
  quick?: (req: unknown) => z.output<S> | undefined,
): z.output<S> {
  const fast = quick?.(req);
  if (fast) return fast;
  const parsed = schema.safeParse(req);
  if (parsed.success) return parsed.data;
  throw new ValidationError({ file: ENDPOINTS[endpoint] }, zodIssues(parsed.error, req));
}

export async function readBody(
  c: Connection,
  endpoint: EndpointName,
  res: BoundedResponse,
  caller: AbortSignal | undefined,
): Promise<Buffer> {
  try {
    return await res.bytes();
  } catch (err) {
    throw transportError(ENDPOINTS[endpoint], err, caller, c.transport, res.status);
  }
}

export async function readText(
  c: Connection,
  endpoint: EndpointName,
  res: BoundedResponse,
  caller: AbortSignal | undefined,
): Promise<string> {
  return (await readBody(c, endpoint, res, caller)).toString('utf8');
}
