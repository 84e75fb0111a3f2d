// A sync worker thread (worker-start.ts) runs with a bounded young generation: a thread that
// allocates as a feed parse does keeps its new space within the bound, where node's default lets it
// grow with the machine's memory (192 MB of young generation on one of 16 GB) and stay resident.
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startWorker, YOUNG_GENERATION_MB } from '../../src/sync/util/worker-start.js';

const entry = new URL('../helpers/young-generation-worker.ts', import.meta.url);

async function newSpaceMost(options?: Parameters<typeof startWorker>[1]): Promise<number> {
  const worker = startWorker(entry, options);
  const [most] = (await once(worker, 'message')) as [number];
  await worker.terminate();
  return most;
}

describe('startWorker', () => {
  it("bounds a worker's young generation, whatever the machine's memory", async () => {
    // (the new space is the young generation's two semi-spaces: 8 MB here; 32 MB and growing unbounded)
    expect(await newSpaceMost()).toBeLessThanOrEqual(YOUNG_GENERATION_MB * 2 ** 20);
  });

  it("without the bound the same allocations grow the new space past it (node's default on 16 GB: the test's worker does what a parse does)", async () => {
    expect(await newSpaceMost({ resourceLimits: { maxYoungGenerationSizeMb: 192 } })).toBeGreaterThan(
      YOUNG_GENERATION_MB * 2 ** 20,
    );
  });
});
