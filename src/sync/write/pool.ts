// The write pool: jobs of one or more lanes, `concurrency` calls in flight at once, each job run by
// its lane's executor (execute.ts).

/** What the pool needs of an executor: whether its lane has stopped, and how to run one job now. */
export interface PoolExecutor<J> {
  readonly result: { readonly stopped?: unknown };
  runOne(job: J): Promise<void>;
}

/** A job and the executor (the lane) that runs it. */
export interface PoolJob<J> {
  executor: PoolExecutor<J>;
  job: J;
}

/**
 * Runs jobs `concurrency` at a time from one iterator: a streamed source is read only as fast as
 * calls are made. A job of a stopped executor is skipped (its lane is over; the others go on);
 * the pool ends when the source does, when every executor seen has stopped and none other may come
 * (`allStopped`), or when `signal` aborts.
 */
export async function runPool<J>(
  jobs: AsyncIterable<PoolJob<J>> | Iterable<PoolJob<J>>,
  opts: { concurrency: number; signal?: AbortSignal; allStopped?: () => boolean },
): Promise<void> {
  const it = Symbol.asyncIterator in jobs ? jobs[Symbol.asyncIterator]() : jobs[Symbol.iterator]();
  let exhausted = false;
  let last: PoolExecutor<J> | undefined;
  const over = () => exhausted || opts.signal?.aborted || (opts.allStopped ? opts.allStopped() : Boolean(last?.result.stopped));
  const worker = async () => {
    while (!over()) {
      const next = await it.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      last = next.value.executor;
      if (!last.result.stopped) await last.runOne(next.value.job);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  if (!exhausted) await it.return?.();
}
