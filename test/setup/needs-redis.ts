// Imported first by every test file that uses Redis (the test Redis at REDIS_URL, or redis-server
// processes it starts itself): when the preflight (preflight.ts) found no Redis answering, the file
// fails at once, in one line saying how to start one, and files without this import run as usual.
import { inject } from 'vitest';

const problem = inject('redisProblem');
if (problem) {
  const err = new Error(problem);
  err.stack = `Error: ${problem}`; // the line is the message: no stack of this module
  throw err;
}
