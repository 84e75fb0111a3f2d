// Starting a worker thread on one of sync/'s modules, from the sources (tsx) or built. Each gets a
// young generation of at most YOUNG_GENERATION_MB: node's default follows the machine's memory (192
// MB on one of 16 GB or more), and a thread that parses a feed or decodes pages fills it with its
// garbage within a run and keeps it resident (a 30k first sync: the feed thread's heap 48 MB, 28
// MB so). What lives there is the batch or page in hand; the rest is gone at each scavenge.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** a sync worker thread's young generation, at most (its semi-spaces a third of it each) */
export const YOUNG_GENERATION_MB = 12;

/** `name` (without extension) next to the module `from` (its import.meta.url): .ts when run from the sources (tsx), .js when built. */
export function workerEntry(name: string, from: string): URL {
  return new URL(from.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, from);
}

/**
 * A worker on `entry`. A TypeScript entry (the sources run through tsx) needs tsx's loader in the
 * worker too: on Node 20 neither `--import tsx` in the worker's execArgv nor the parent's register()
 * reaches a worker's loader, so the worker starts from a module that registers tsx, then loads it.
 */
export function startWorker(entry: URL, given?: WorkerOptions): Worker {
  const options: WorkerOptions = {
    ...given,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, ...given?.resourceLimits },
  };
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import { register } from ${JSON.stringify(tsx)};\nregister();\nawait import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), options);
}
