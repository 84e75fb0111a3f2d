// Preloaded into a benchmarked child process (`node --import`): at exit, its main thread writes the
// process's peak RSS in kB (process.resourceUsage().maxRSS) to the file named by BENCH_PEAK_RSS_FILE.
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_PEAK_RSS_FILE;
if (file && isMainThread) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
