// A page worker (page-pool.ts) that goes wrong as its URL's ?mode= says, for the pool's tests:
// throw: ready, then an uncaught error on the first page; exit: ready, then the thread exits;
// hang: ready, then never answers; never-ready: loads but never says it is ready.
import { parentPort } from 'node:worker_threads';

const mode = new URL(import.meta.url).searchParams.get('mode');
const port = parentPort!;
port.on('message', () => {
  if (mode === 'throw') throw new Error('the decoder broke');
  if (mode === 'exit') process.exit(3);
});
if (mode !== 'never-ready') port.postMessage({ ready: true });
