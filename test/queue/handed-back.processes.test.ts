// A worker's graceful shutdown (SIGTERM) hands its running job back to the queue, where another
// worker takes it at once (issue 55 point 3): the stopped attempt did not fail, so it is recorded
// `handed-back` (not `aborted`), naming the worker that handed it back, and counts toward no failing
// streak (alerts.rules.failedRuns: 1, a webhook on port 0: any counted run would alert). On two
// `feedsync worker` processes, the real Redis and the emulator: the other worker completes the job
// `ok`, and `feedsync runs` and the change log's record say `handed-back`.
import '../setup/needs-redis.js';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { listRuns, waitForJob } from '../../src/queue/index.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { feedsync } from '../settings/run-cli.js';
import { alertedSyncUnderWay, runningOn, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-BACK';
const ROWS = 600;

describe("a worker's graceful shutdown", () => {
  it('hands its job back, recorded handed-back with its worker, no failure alert; another worker completes the job', async () => {
    const receiver = await startHttpReceiver();
    try {
      const {
        file,
        w: a,
        jobId,
      } = await alertedSyncUnderWay(d, {
        chatbot: SN,
        rows: ROWS,
        hookUrl: `${receiver.url}/hook`,
        // A job lock of a minute (the deployment's is 2 s): this test is of the hand-back, not of a
        // lapsed lock. With 2 s, a stall of A's event loop on a loaded machine let the lock (or the
        // chatbot lock, the same length) lapse beside B, and A's run ended "then taken over", not
        // handed back (A stopped 3 s before the SIGTERM: failed with 2 s, passed with a minute).
        worker: { concurrency: 1, shutdownTimeoutMs: 10_000, lockDurationMs: 60_000 },
      });
      // (started once the job runs on A: it cannot take the job first)
      const b = await d.start(file);

      await a.kill('SIGTERM');
      const end = await waitForJob(d.redis, d.queues, 'sync', jobId);
      expect(end.state).toBe('completed');
      expect(runningOn(await d.queues.sync.getJob(jobId))).toBe(b.proc.pid);
      expect(await d.emu!.listings(SN)).toHaveLength(ROWS);

      // newest first: B's run, then A's, handed back and naming A
      const runs = (await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 10 })).filter((r) => r.jobId === jobId);
      expect(runs.map((r) => [r.outcome, r.worker?.pid])).toEqual([
        ['ok', b.proc.pid],
        ['handed-back', a.proc.pid],
      ]);
      expect(runs[1]!.summary).toContain(
        `handed back to the queue: its worker (${hostname()} pid ${a.proc.pid}) is shutting down`,
      );
      const table = await feedsync(['runs', '--config', file, '--feed', 'homes']);
      expect(table.stdout).toMatch(new RegExp(`handed-back .+ ${hostname()} pid ${a.proc.pid} `));

      // no alert of any kind: a hand-back is no failed run
      expect(receiver.received.map((r) => r.body)).toEqual([]);
      // the change log's records of the run's two attempts, newest first
      const log = createRedisChangeLog(d.redis, d.prefix, { retentionDays: 1, maxPerFeed: 1000, maxPerRun: 1000 });
      const entries = (await log.runs('homes', 10)).filter((r) => r.runId === `${jobId}.1`);
      expect(entries.map((r) => r.outcome)).toEqual(['ok', 'handed-back']);
    } finally {
      await receiver.close();
    }
  }, 180_000);
});
