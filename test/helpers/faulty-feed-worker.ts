// A feed worker (feed-thread.ts) that goes wrong as its URL's ?mode= says, for the feed thread's
// tests: throw: an uncaught error on the read; exit: the thread exits; hang: it never answers,
// not even a stop.
import { parentPort } from 'node:worker_threads';

const mode = new URL(import.meta.url).searchParams.get('mode');
parentPort!.on('message', () => {
  if (mode === 'throw') throw new Error('the reader broke');
  if (mode === 'exit') process.exit(3);
});
