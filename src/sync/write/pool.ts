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
 * calls are made (and at most `concurrency` jobs ahead: readAhead). A job of a stopped executor is
 * skipped (its lane is over; the others go on); the pool ends when the source does, when every
 * executor seen has stopped and none other may come (`allStopped`), or when `signal` aborts.
 */
export async function runPool<J>(
  jobs: AsyncIterable<PoolJob<J>> | Iterable<PoolJob<J>>,
  opts: { concurrency: number; signal?: AbortSignal; allStopped?: () => boolean },
): Promise<void> {
  const it = Symbol.asyncIterator in jobs ? jobs[Symbol.asyncIterator]() : jobs[Symbol.iterator]();
  const concurrency = Math.max(1, opts.concurrency);
  const source = readAhead(it, concurrency);
  let exhausted = false;
  let last: PoolExecutor<J> | undefined;
  const over = () =>
    exhausted || opts.signal?.aborted || (opts.allStopped ? opts.allStopped() : Boolean(last?.result.stopped));
  const worker = async () => {
    while (!over()) {
      const next = await source.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      last = next.value.executor;
      if (!last.result.stopped) await last.runOne(next.value.job);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    source.stop();
  }
  // a job read ahead that no worker took failed to be read: that failure is the pool's
  await source.settled();
  if (!exhausted) await it.return?.();
}

/**
 * The source's next jobs, read up to `size` ahead of the workers, in a timer: a timer runs at the
 * start of an event loop turn, after the calls the last turn started were written to their sockets
 * (the HTTP client writes a call on a kept-alive socket only in the turn's check phase). Reading and
 * planning the next jobs while the answers come in would hold back the writes of every call started
 * in that turn: the answers of concurrent calls come in bunches, and each call's next job was planned
 * before any of them was sent (a first sync of 10k listings: a create's wait beyond the service's
 * own rose by about a millisecond). Jobs come out in the source's order.
 */
function readAhead<T>(it: AsyncIterator<T> | Iterator<T>, size: number) {
  const ahead: Array<Promise<IteratorResult<T>>> = [];
  let ended = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const pull = (): Promise<IteratorResult<T>> => {
    let got: IteratorResult<T> | Promise<IteratorResult<T>>;
    try {
      got = it.next();
    } catch (err) {
      got = Promise.reject(err);
    }
    const p = Promise.resolve(got).then((r) => {
      if (r.done) ended = true;
      return r;
    });
    // (a pull that fails is thrown where it is taken, or by settled())
    p.catch(() => (ended = true));
    return p;
  };
  const fill = () => {
    timer = undefined;
    while (!ended && !stopped && ahead.length < size) ahead.push(pull());
  };
  return {
    next(): Promise<IteratorResult<T>> {
      const p = ahead.shift() ?? pull();
      if (!ended && !stopped) timer ??= setTimeout(fill, 0);
      return p;
    },
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
    async settled(): Promise<void> {
      for (const p of ahead.splice(0)) await p;
    },
  };
}
