// A feed worker (feed-thread.ts) for the thread's memory test: on its read it allocates as a parse
// does, about 200 MB of short-lived strings while a rolling few MB of them stay alive across
// scavenges, then fails the read with the most its young generation (V8's new space) was committed
// meanwhile, in bytes, and the young generation's limit the thread was started with (MB, 0: none), as
// its message "BYTES LIMIT": what the thread it runs on allows.
import { getHeapSpaceStatistics } from 'node:v8';
import { parentPort, resourceLimits } from 'node:worker_threads';

const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
parentPort!.on('message', (task: { read?: { id: number } }) => {
  if (!task.read) return;
  let most = newSpace();
  const alive: string[][] = [];
  for (let round = 0; round < 2000; round++) {
    // a batch of records, kept while the next few are built
    alive.push(Array.from({ length: 250 }, (_, i) => `record ${round} ${i} `.repeat(12)));
    if (alive.length > 40) alive.shift();
    if (round % 50 === 0) most = Math.max(most, newSpace());
  }
  most = Math.max(most, newSpace());
  const limit = resourceLimits.maxYoungGenerationSizeMb ?? 0;
  parentPort!.postMessage({ id: task.read.id, failed: { kind: 'crash', message: `${most} ${limit}` } });
});
