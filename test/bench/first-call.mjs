// Preloaded into a benchmarked `feedsync` process (`node --import`) by start-turns.ts: at exit, its
// main thread writes to stderr one line, `FIRST_CALL <ms> <cpu ms> EXIT <ms> <cpu ms>`: the time since
// the process started (performance.now(), from Node's own start) and its CPU (process.cpuUsage())
// at its first HTTP request (undici's request:create channel: the bundle's undici and Node's publish
// it) and at exit.
import { subscribe } from 'node:diagnostics_channel';
import { isMainThread } from 'node:worker_threads';

const at = () => {
  const c = process.cpuUsage();
  return `${performance.now().toFixed(1)} ${((c.user + c.system) / 1000).toFixed(1)}`;
};
if (isMainThread) {
  let first = 'NaN NaN';
  const onRequest = () => {
    if (first !== 'NaN NaN') return;
    first = at();
  };
  subscribe('undici:request:create', onRequest);
  process.on('exit', () => process.stderr.write(`FIRST_CALL ${first} EXIT ${at()}\n`));
}
