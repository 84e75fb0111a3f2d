// The write pool (src/sync/write/pool.ts) reads jobs ahead of its workers, in a timer; held here to
// the plain rule of a pool without the read-ahead: every job runs once, in the source's order, never
// more than `concurrency` at once; the source is read at most `concurrency` jobs ahead; a stopped
// lane's jobs are not run and the pool ends with it; an abort lets no worker take another job; a source that fails
// fails the pool.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runPool, type PoolExecutor, type PoolJob } from '../../src/sync/write/pool.js';

/** a job's wait: microtasks only (-1) or a timer of so many ms */
const waits = fc.array(fc.integer({ min: -1, max: 3 }), { minLength: 0, maxLength: 60 });

interface Trace {
  pulled: number;
  started: number[];
  finished: number;
  inFlight: number;
  maxInFlight: number;
  /** the most jobs pulled from the source and not yet started, over the run */
  maxAhead: number;
}

function lane(trace: Trace, stopAfter = Infinity): PoolExecutor<number> & { result: { stopped?: string } } {
  const ex = {
    result: {} as { stopped?: string },
    async runOne(job: number) {
      trace.started.push(job);
      trace.inFlight++;
      trace.maxInFlight = Math.max(trace.maxInFlight, trace.inFlight);
      const wait = jobWaits.get(job) ?? -1;
      if (wait < 0) await Promise.resolve();
      else await new Promise((r) => setTimeout(r, wait));
      trace.inFlight--;
      trace.finished++;
      if (trace.finished >= stopAfter) ex.result.stopped = 'failed';
    },
  };
  return ex;
}
const jobWaits = new Map<number, number>();

function* source(trace: Trace, ex: PoolExecutor<number>, n: number, failAt = Infinity): Generator<PoolJob<number>> {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error(`source failed at ${i}`);
    trace.pulled++;
    trace.maxAhead = Math.max(trace.maxAhead, trace.pulled - trace.started.length);
    yield { executor: ex, job: i };
  }
}

async function* asyncSource(
  trace: Trace,
  ex: PoolExecutor<number>,
  n: number,
  failAt = Infinity,
): AsyncGenerator<PoolJob<number>> {
  for (const job of source(trace, ex, n, failAt)) {
    // (a reader that waits for its file now and then)
    if (job.job % 7 === 3) await new Promise((r) => setTimeout(r, 1));
    yield job;
  }
}

const newTrace = (): Trace => ({ pulled: 0, started: [], finished: 0, inFlight: 0, maxInFlight: 0, maxAhead: 0 });
const setWaits = (w: number[]) => {
  jobWaits.clear();
  w.forEach((x, i) => jobWaits.set(i, x));
};

describe('runPool', () => {
  it('runs every job once, in the order read, at most `concurrency` at once, reading at most `concurrency` ahead', async () => {
    await fc.assert(
      fc.asyncProperty(waits, fc.integer({ min: 1, max: 6 }), fc.boolean(), async (w, concurrency, streamed) => {
        setWaits(w);
        const trace = newTrace();
        const ex = lane(trace);
        await runPool(streamed ? asyncSource(trace, ex, w.length) : source(trace, ex, w.length), { concurrency });
        expect(trace.started).toEqual(w.map((_, i) => i));
        expect(trace.finished).toBe(w.length);
        expect(trace.maxInFlight).toBeLessThanOrEqual(concurrency);
        // the workers' own pulls (one each) and the read-ahead
        expect(trace.maxAhead).toBeLessThanOrEqual(2 * concurrency);
      }),
      { numRuns: 60 },
    );
  });

  it('ends with a stopped lane: the jobs run are the first ones read, each finished; none starts once it stopped', async () => {
    await fc.assert(
      fc.asyncProperty(
        waits,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 20 }),
        fc.boolean(),
        async (w, concurrency, stopAfter, streamed) => {
          setWaits(w);
          const trace = newTrace();
          const ex = lane(trace, stopAfter);
          let startedAtStop: number | undefined;
          const watched: PoolExecutor<number> = {
            result: ex.result,
            async runOne(job) {
              if (ex.result.stopped) startedAtStop ??= job;
              await ex.runOne(job);
            },
          };
          await runPool(streamed ? asyncSource(trace, watched, w.length) : source(trace, watched, w.length), {
            concurrency,
          });
          expect(startedAtStop).toBeUndefined();
          expect(trace.started).toEqual(trace.started.map((_, i) => i));
          expect(trace.finished).toBe(trace.started.length);
          if (w.length > stopAfter + concurrency) expect(trace.started.length).toBeLessThan(w.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('takes no job once the signal aborts (a worker past its check still runs the one it was taking), and waits for the jobs in flight', async () => {
    await fc.assert(
      fc.asyncProperty(
        waits,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 30 }),
        async (w, concurrency, abortAt) => {
          setWaits(w);
          const trace = newTrace();
          const ex = lane(trace);
          const ac = new AbortController();
          let afterAbort = 0;
          const watched: PoolExecutor<number> = {
            result: ex.result,
            async runOne(job) {
              if (ac.signal.aborted) afterAbort++;
              if (job === abortAt) ac.abort();
              await ex.runOne(job);
            },
          };
          await runPool(asyncSource(trace, watched, w.length), { concurrency, signal: ac.signal });
          expect(afterAbort).toBeLessThanOrEqual(concurrency - 1);
          if (abortAt < w.length) expect(trace.started.length).toBeLessThanOrEqual(abortAt + concurrency);
          expect(trace.inFlight).toBe(0);
          expect(trace.started).toEqual(trace.started.map((_, i) => i));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('fails with the source: the error of a job read ahead is not lost', async () => {
    for (const streamed of [false, true]) {
      setWaits(Array.from({ length: 40 }, () => 1));
      const trace = newTrace();
      const ex = lane(trace);
      await expect(
        runPool(streamed ? asyncSource(trace, ex, 40, 25) : source(trace, ex, 40, 25), { concurrency: 4 }),
      ).rejects.toThrow('source failed at 25');
      expect(trace.started.length).toBeLessThanOrEqual(25);
    }
  });
});
