// A run stopped because its job lock was lost (the job taken over: here by the workers' own sweep,
// which takes a live worker's job for a dead one's when its holder record names a process that is
// gone, as a lock expired in an event-loop stall or a Redis outage ends the same way) is not a
// failed run: the sync goes on in the attempt that takes the job over, which records its own
// outcome. On a `feedsync worker` process, the real Redis and the emulator: the stopped attempt is
// recorded `taken-over` in the run history, no failure alert is sent (alerts.rules.failedRuns: 1, a
// webhook on port 0), the job completes `ok`, and the change log keeps the stopped attempt's writes
// (`runs show` counts them: undo reads the same records).
import '../setup/needs-redis.js';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { listRuns, waitForJob } from '../../src/queue/index.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { feedsync } from '../settings/run-cli.js';
import { alertedSyncUnderWay, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-TAKEN';
const ROWS = 200;

/** A PID that was a node process of this host a moment ago. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  const pid = child.pid!;
  child.kill('SIGKILL');
  await once(child, 'exit');
  return pid;
}

describe('a run whose job lock was lost', () => {
  it('is recorded taken-over, sends no failure alert, keeps its writes; the attempt that takes the job over records ok', async () => {
    const receiver = await startHttpReceiver();
    try {
      const { file, w, jobId } = await alertedSyncUnderWay(d, {
        chatbot: SN,
        rows: ROWS,
        hookUrl: `${receiver.url}/hook`,
        // (no stalled check within the test: the sweep alone takes the job)
        worker: { lockDurationMs: 4000, stalledIntervalMs: 60_000, concurrency: 1 },
      });

      // its holder record made a dead process's (another owner, a PID gone): the worker's own sweep
      // hands the live job back
      const holders = `${d.prefix}:job-holders`;
      const records = Object.entries(await d.redis.hgetall(holders));
      expect(records).toHaveLength(1);
      const [token, text] = records[0]!;
      const dead = { ...(JSON.parse(text) as object), owner: randomUUID(), pid: await deadPid(), startTime: undefined };
      await d.redis.hset(holders, token, JSON.stringify(dead));

      const end = await waitForJob(d.redis, d.queues, 'sync', jobId);
      expect(end.state).toBe('completed');
      expect(w.logs()).toContain(`job ${jobId} of listing-sync handed back to the queue at once`);
      const runs = (await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 10 })).filter((r) => r.jobId === jobId);
      // newest first: the attempt that took the job over, then the stopped one
      expect(runs.map((r) => r.outcome)).toEqual(['ok', 'taken-over']);
      expect(runs[1]!.summary).toMatch(/taken over/);
      expect(await d.emu!.listings(SN)).toHaveLength(ROWS);

      // no alert of any kind: the stopped attempt is no failed run
      expect(receiver.received.map((r) => r.body)).toEqual([]);
      // the change log: the stopped attempt's writes are there, counted under the run
      const shown = await feedsync(['runs', 'show', `${jobId}.1`, '--config', file]);
      expect(shown.code).toBe(0);
      const earlier =
        /\n {2}(\d+) of these changes were made by an earlier attempt of this run \(its worker shut down, died or lost the job’s lock before it ended\)/.exec(
          shown.stdout,
        );
      expect(Number(earlier?.[1])).toBeGreaterThanOrEqual(10);
      expect(shown.stdout).toContain(`\n  changes (${ROWS}):\n`);
    } finally {
      await receiver.close();
    }
  }, 180_000);
});
