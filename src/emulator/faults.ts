// Which fault, if any, the next request gets: first the scripted `nextFaults`, then a draw from the
// seeded PRNG (faultRate, split evenly over `faults`), so a run with one seed repeats exactly.
import type { Fault, ResolvedOptions } from './options.js';
import { mulberry32 } from './prng.js';

export interface FaultPicker {
  next(): Fault | undefined;
  reseed(seed: number): void;
}

export function createFaultPicker(opts: ResolvedOptions): FaultPicker {
  let random = mulberry32(opts.seed);
  return {
    next() {
      const scripted = opts.nextFaults.shift();
      if (scripted) return scripted;
      if (opts.faultRate <= 0 || opts.faults.length === 0) return undefined;
      if (random() >= opts.faultRate) return undefined;
      return opts.faults[Math.floor(random() * opts.faults.length)];
    },
    reseed(seed) {
      random = mulberry32(seed);
    },
  };
}
