// Run as a child process (node --import tsx): opens a page pool, waits until its workers are
// loaded, and ends without closing it. The process must then exit by itself: an idle pool's
// workers are unref'd (issue 23: a CLI lingered 30 s after its report).
import { openPagePool } from '../../src/sync/remote/page-pool.js';

const pool = openPagePool({ size: 2, idleMs: 600_000 });
while (pool.ready < pool.running || pool.running === 0) await new Promise((r) => setTimeout(r, 10));
process.stdout.write(`ready ${pool.ready}\n`);
