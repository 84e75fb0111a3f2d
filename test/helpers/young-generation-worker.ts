// A worker (started by worker-start.ts, for its test) that allocates as a feed parse does: about
// 200 MB of short-lived objects while a rolling few MB of them stay alive across scavenges, then
// answers the largest its young generation (V8's new space) was committed meanwhile, in bytes.
import { getHeapSpaceStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';

const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
let most = newSpace();
const alive: string[][] = [];
for (let round = 0; round < 2000; round++) {
  // a batch of records, kept while the next few are built
  alive.push(Array.from({ length: 250 }, (_, i) => `record ${round} ${i} `.repeat(12)));
  if (alive.length > 40) alive.shift();
  if (round % 50 === 0) most = Math.max(most, newSpace());
}
parentPort!.postMessage(Math.max(most, newSpace()));
