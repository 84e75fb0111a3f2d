import { UnrecoverableError } from 'bullmq';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ApiError, ConfigError, FeedReadError, GuardError, NetworkError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { checkEvictionPolicy, reportError, toJobError, verdictFor } from '../../src/queue/index.js';

describe('retry policy', () => {
  it('maps report outcomes: what a finished run found completes, transient failures retry, failed checks fail', () => {
    expect(verdictFor({ outcome: 'ok', summary: '' })).toBe('done');
    expect(verdictFor({ outcome: 'partial', summary: '', retryable: false })).toBe('done');
    expect(verdictFor({ outcome: 'partial', summary: '', retryable: true })).toBe('retry');
    // the last attempt of a partial read completes with its outcome: it is not a failed job
    expect(verdictFor({ outcome: 'partial', summary: '', retryable: true }, { made: 3, max: 3 })).toBe('done');
    expect(verdictFor({ outcome: 'partial', summary: '', retryable: true }, { made: 2, max: 3 })).toBe('retry');
    expect(verdictFor({ outcome: 'unavailable', summary: '' })).toBe('retry');
    expect(verdictFor({ outcome: 'unavailable', summary: '' }, { made: 3, max: 3 })).toBe('retry');
    // a guard hold, a rejected feed and any outcome added later keep their name: the job completes
    for (const outcome of ['guard', 'rejected', 'cancelled', 'paused', 'some-new-outcome'])
      expect(verdictFor({ outcome, summary: '' })).toBe('done');
    expect(verdictFor({ outcome: 'failed', summary: '' })).toBe('fail');
    expect(verdictFor({ outcome: 'error', summary: '' })).toBe('fail');
    expect(reportError({ outcome: 'guard', summary: 'refused' }, 'fail')).toBeInstanceOf(UnrecoverableError);
    expect(reportError({ outcome: 'unavailable', summary: 'down' }, 'retry')).not.toBeInstanceOf(UnrecoverableError);
  });

  it('maps FeedsyncError.retryable to retry or UnrecoverableError', () => {
    expect(toJobError(new NetworkError('list', new Error('ECONNRESET')))).not.toBeInstanceOf(UnrecoverableError);
    expect(toJobError(new ApiError('create', 503, 503, 'busy'))).not.toBeInstanceOf(UnrecoverableError);
    expect(toJobError(new ApiError('create', 400, 400, 'bad'))).toBeInstanceOf(UnrecoverableError);
    expect(toJobError(new ConfigError('bad config'))).toBeInstanceOf(UnrecoverableError);
    expect(toJobError(new GuardError('too many deletes'))).toBeInstanceOf(UnrecoverableError);
    expect(toJobError(new FeedReadError('HTTP 503', { file: 'https://x' }, true))).not.toBeInstanceOf(
      UnrecoverableError,
    );
    expect(toJobError(new FeedReadError('truncated', { file: 'a.xml' }, false))).toBeInstanceOf(UnrecoverableError);
    // Cut short by our own abort (shutdown, lost lock): retried, whatever the error says.
    const aborted = AbortSignal.abort();
    expect(toJobError(new ConfigError('x'), aborted)).not.toBeInstanceOf(UnrecoverableError);
  });
});

describe('maxmemory-policy check', () => {
  const capture = () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
    return { lines, logger: createLogger({ level: 'info', destination }) };
  };

  it('warns when the policy may evict keys', async () => {
    const { lines, logger } = capture();
    const redis = { config: async () => ['maxmemory-policy', 'allkeys-lru'] } as unknown as Redis;
    expect(await checkEvictionPolicy(redis, logger)).toBe('allkeys-lru');
    expect(lines.join('')).toMatch(/"level":40.*maxmemory-policy is allkeys-lru/);
  });

  it('is quiet on noeviction and tolerates CONFIG being disabled', async () => {
    const ok = capture();
    expect(
      await checkEvictionPolicy(
        { config: async () => ['maxmemory-policy', 'noeviction'] } as unknown as Redis,
        ok.logger,
      ),
    ).toBe('noeviction');
    expect(ok.lines).toEqual([]);
    const disabled = capture();
    const redis = { config: async () => Promise.reject(new Error("ERR unknown command 'CONFIG'")) } as unknown as Redis;
    expect(await checkEvictionPolicy(redis, disabled.logger)).toBeUndefined();
    expect(disabled.lines.join('')).toMatch(/"level":30.*could not read maxmemory-policy/);
  });
});
