// The look a run makes when it lost a lock (src/queue/job-gone.ts): only a job Redis answers is in
// none of its queue's lists counts as gone; a look that fails or hangs says taken over, as a run said
// before the look was made, so a Redis that is away never turns a takeover into an alert.
import { describe, expect, it } from 'vitest';
import { jobGone } from '../../src/queue/job-gone.js';

describe('jobGone', () => {
  it('is true for a job in no list of its queue, false for one in any', async () => {
    expect(await jobGone(async () => 'unknown')).toBe(true);
    for (const state of ['active', 'waiting', 'delayed', 'completed', 'failed', 'prioritized'])
      expect(await jobGone(async () => state)).toBe(false);
  });

  it('says false when the look fails, throws at once or does not answer in time', async () => {
    expect(await jobGone(() => Promise.reject(new Error('Connection is closed.')))).toBe(false);
    expect(
      await jobGone(() => {
        throw new TypeError('no connection');
      }),
    ).toBe(false);
    // (unbounded, this one would never settle: the test's timeout would fail it)
    expect(await jobGone(() => new Promise<string>(() => {}), 50)).toBe(false);
  });
});
