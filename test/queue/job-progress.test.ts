// The job progress throttle (src/queue/job-progress.ts): the first update goes at once, those within
// the interval wait and only the latest of them is sent, flush sends what waits and stops; a failed
// send loses that progress only. And the run's progress (sync/report/progress.ts) as it reads,
// then writes of a known plan with the time left.
import { describe, expect, it, vi } from 'vitest';
import { createProgressThrottle } from '../../src/queue/job-progress.js';
import { createRunProgress, describeProgress } from '../../src/sync/index.js';

describe('job progress throttle', () => {
  it('sends at most one update an interval, the latest, and the last on flush', async () => {
    vi.useFakeTimers();
    try {
      const sent: object[] = [];
      const throttle = createProgressThrottle(async (d) => void sent.push(d), { everyMs: 1000, now: () => Date.now() });
      for (let i = 1; i <= 500; i++) throttle.report({ i });
      await vi.advanceTimersByTimeAsync(0);
      expect(sent).toEqual([{ i: 1 }]);
      await vi.advanceTimersByTimeAsync(1000);
      expect(sent).toEqual([{ i: 1 }, { i: 500 }]);
      throttle.report({ i: 501 });
      throttle.report({ i: 502 });
      await throttle.flush();
      expect(sent).toEqual([{ i: 1 }, { i: 500 }, { i: 502 }]);
      throttle.report({ i: 503 });
      await vi.advanceTimersByTimeAsync(5000);
      expect(sent).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a send that fails is reported and the next one goes', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const throttle = createProgressThrottle(
      async () => {
        if (++calls === 1) throw new Error('Missing key for job');
      },
      { everyMs: 0, onError: (e) => errors.push(e) },
    );
    throttle.report({ a: 1 });
    throttle.report({ a: 2 });
    await throttle.flush();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });
});

describe('run progress', () => {
  it('reads, then writes of a known plan with the time left by the write rate', () => {
    let t = 0;
    const run = createRunProgress(() => t);
    expect(describeProgress(run.update({ feed: 'homes', phase: 'feed', done: 5000 }))).toBe(
      'homes: reading, 5,000 records read, 0 writes done',
    );
    run.update({ feed: 'homes', phase: 'write', done: 100 });
    t = 10_000;
    const p = run.update({ feed: 'homes', phase: 'write', done: 1200, total: 3400 });
    expect(p).toMatchObject({ phase: 'writing', read: 5000, written: 1200, planned: 3400, etaSeconds: 20 });
    expect(describeProgress(p)).toBe('homes: writing 1,200/3,400 (35%), about 20 s left');
  });
});
