// Starting a worker thread on one of sync/'s modules, from the sources (tsx) or built.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `name` (without extension) next to the module `from` (its import.meta.url): .ts when run from the sources (tsx), .js when built. */
export function workerEntry(name: string, from: string): URL {
  return new URL(from.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, from);
}

/**
 * A worker on `entry`. A TypeScript entry (the sources run through tsx) needs tsx's loader in the
 * worker too: on Node 20 neither `--import tsx` in the worker's execArgv nor the parent's register()
 * reaches a worker's loader, so the worker starts from a module that registers tsx, then loads it.
 */
export function startWorker(entry: URL, options?: WorkerOptions): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import { register } from ${JSON.stringify(tsx)};\nregister();\nawait import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`), options);
}
