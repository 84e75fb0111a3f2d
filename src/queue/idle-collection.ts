// A worker's full garbage collection once its jobs have all ended and it has stayed idle a moment
// (issue 55 point 5). Between jobs V8 holds on to what the last job left: its heap stays committed
// (about 200 MB a worker at issue 55's size, 40 MB in use) and it frees Buffers (response bodies,
// feed downloads) only at a major collection, which it runs seldom while the heap is half used, so
// a worker's RSS as monitoring sees it rose 18-39% over ten ticks with nothing retained growing.
// One collection when the process goes idle gives that memory back while nothing runs: it never
// runs while a job is active (a job that starts cancels the one pending) and runs once an idle
// period (the next needs a job to have run). Its cost is a major GC's pause of the idle main
// thread (docs/runbook.md, "A worker's memory across jobs"). Then, where it can, malloc_trim(0)
// (malloc-trim.ts): the collection frees the Buffers, the trim gives their pages back.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface IdleCollectionSettings {
  /** how long the process stays with no active job before it collects */
  afterMs: number;
  /** the collection itself (fullCollection() in a worker; a counter in tests) */
  collect: () => void;
  /** told each collection's duration, for /metrics */
  onCollected?: (ms: number) => void;
  /** run right after each collection: malloc_trim(0) (malloc-trim.ts); absent: none */
  trim?: () => void;
  /** told each trim's duration and the resident bytes it gave back (RSS before less after, at least 0) */
  onTrimmed?: (trimmed: { ms: number; bytes: number }) => void;
}

export interface IdleCollection {
  /** a job of the process became active */
  started(): void;
  /** an active job ended (done, failed or handed back) */
  ended(): void;
  stop(): void;
}

export function idleCollection(settings: IdleCollectionSettings): IdleCollection {
  let active = 0;
  let pending: NodeJS.Timeout | undefined;
  let stopped = false;
  const cancel = () => {
    if (pending) clearTimeout(pending);
    pending = undefined;
  };
  const collect = () => {
    pending = undefined;
    if (active > 0 || stopped) return;
    const from = performance.now();
    settings.collect();
    settings.onCollected?.(performance.now() - from);
    if (settings.trim) trim(settings.trim, settings.onTrimmed);
  };
  return {
    started: () => {
      active++;
      cancel();
    },
    ended: () => {
      active = Math.max(0, active - 1);
      if (active > 0 || stopped) return;
      cancel();
      pending = setTimeout(collect, settings.afterMs);
      // an idle process with nothing else to do may exit: this timer does not hold it
      pending.unref();
    },
    stop: () => {
      stopped = true;
      cancel();
    },
  };
}

/** One trim, measured: its time and the RSS it gave back. */
function trim(run: () => void, told?: IdleCollectionSettings['onTrimmed']): void {
  const rss = process.memoryUsage.rss();
  const from = performance.now();
  run();
  told?.({ ms: performance.now() - from, bytes: Math.max(0, rss - process.memoryUsage.rss()) });
}

/**
 * What V8 does when memory runs out (`gc()`'s flavor 'last-resort', as the inspector's
 * HeapProfiler.collectGarbage): full collections until nothing more is freed, then the heap's empty
 * pages and young generation given back. A plain `gc()` frees the same objects but keeps the heap
 * committed (a worker's 180 MB of it, 40 MB in use). `gc` is exposed without `--expose-gc` on the
 * command line: the flag, set for a moment, exposes it to a new context only.
 */
export function fullCollection(): () => void {
  let gc: unknown = globalThis.gc;
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
    setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc !== 'function') throw new Error('V8 did not expose gc() to a new context');
  return () => {
    Reflect.apply(gc, undefined, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
  };
}
