import { describe, expect, it } from 'vitest';
import { createCallCounter } from '../../src/api/call-counter.js';
import { backoffDelay, parseRetryAfter, retryDelay, retryPolicy } from '../../src/api/retry.js';
import { AbortedError, ApiError, RateLimitedError, TimeoutError, ValidationError } from '../../src/errors.js';

describe('retry policy', () => {
  const policy = retryPolicy({ retries: 3 });

  it('has the documented defaults', () => {
    expect(retryPolicy(undefined)).toEqual({ retries: 4, baseDelayMs: 200, maxDelayMs: 10_000 });
  });

  it('draws full jitter below an exponential ceiling capped at maxDelayMs', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(policy, n, () => 0.999999))).toEqual([200, 400, 800, 1600]);
    expect(backoffDelay(policy, 20, () => 0.999999)).toBe(10_000);
    expect(backoffDelay(policy, 3, () => 0)).toBe(0);
  });

  it('retries network-ish failures, 5xx, 408 and 429, never other 4xx or validation errors', () => {
    expect(retryDelay(new TimeoutError('/x', 10), policy, 1)).toBeTypeOf('number');
    expect(retryDelay(new ApiError('/x', 503, 503, ''), policy, 1)).toBeTypeOf('number');
    expect(retryDelay(new ApiError('/x', 408, undefined, ''), policy, 1)).toBeTypeOf('number');
    expect(retryDelay(new ApiError('/x', 200, 500, ''), policy, 1)).toBeTypeOf('number');
    expect(retryDelay(new ApiError('/x', 400, 400, ''), policy, 1)).toBeUndefined();
    expect(retryDelay(new ApiError('/x', 404, 404, ''), policy, 1)).toBeUndefined();
    expect(retryDelay(new ValidationError({}, []), policy, 1)).toBeUndefined();
    expect(retryDelay(new AbortedError('/x'), policy, 1)).toBeUndefined();
    expect(retryDelay(new TimeoutError('/x', 10), policy, 4)).toBeUndefined(); // out of retries
  });

  it('waits the Retry-After of a 429, and does not wait in-process for one over a minute', () => {
    expect(retryDelay(new RateLimitedError('/x', 429, 3000), policy, 1)).toBe(3000);
    expect(retryDelay(new RateLimitedError('/x', 429, 3_600_000), policy, 1)).toBeUndefined();
    expect(retryDelay(new RateLimitedError('/x', 429, undefined), policy, 1)).toBeLessThanOrEqual(200);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('call counter', () => {
  it('counts calls per endpoint and the retries among them', () => {
    const counter = createCallCounter();
    counter.onCall({ endpoint: 'create', attempt: 1, durationMs: 1, outcome: 'retry' });
    counter.onCall({ endpoint: 'create', attempt: 2, durationMs: 1, outcome: 'ok' });
    counter.onCall({ endpoint: 'list', attempt: 1, durationMs: 1, outcome: 'ok' });
    const snap = counter.snapshot();
    expect(snap).toMatchObject({ total: 3, retries: 1 });
    expect(snap.byEndpoint).toEqual({ edit: 0, ask: 0, create: 2, update: 0, list: 1, delete: 0 });
  });
});
