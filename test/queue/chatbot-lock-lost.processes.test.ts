// A worker's run whose chatbot lock is lost before its job lock (Redis away or an event loop stalled
// past two thirds of the lock's TTL: the chatbot lock's holder stops first; here another holder
// put in its place) is left to the attempt that takes its job over, as a run whose job lock was lost
// is (taken-over.processes.test.ts): recorded `taken-over`, no failed run (alerts.rules.failedRuns: 1,
// a webhook on port 0: no alert), and the job goes on in that attempt, which records `ok`.
import '../setup/needs-redis.js';
import { describe, expect, it } from 'vitest';
import { chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { listRuns, waitForJob } from '../../src/queue/index.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { alertedSyncUnderWay, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-CHATLOCK';
const ROWS = 200;

describe('a run whose chatbot lock is lost before its job lock', () => {
  it('is recorded taken-over, sends no failure alert; the attempt that takes the job over records ok', async () => {
    const receiver = await startHttpReceiver();
    try {
      const { jobId } = await alertedSyncUnderWay(d, {
        chatbot: SN,
        rows: ROWS,
        hookUrl: `${receiver.url}/hook`,
        worker: { lockDurationMs: 4000, stalledIntervalMs: 2000, concurrency: 1 },
      });

      // another holder in its place (for 3 s): the lock's next renewal finds it another's
      const lock = targetLockKey(d.prefix, chatbotLockName({ chatbot: SN }, 'sync'));
      expect(await d.redis.set(lock, 'another-taking', 'PX', 3000, 'XX')).toBe('OK');

      const end = await waitForJob(d.redis, d.queues, 'sync', jobId);
      expect(end.state).toBe('completed');
      const runs = (await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 10 })).filter((r) => r.jobId === jobId);
      // newest first: the attempt that took the job over, then the stopped one
      expect(runs.map((r) => r.outcome)).toEqual(['ok', 'taken-over']);
      expect(runs[1]!.summary).toMatch(/taken over/);
      expect(await d.emu!.listings(SN)).toHaveLength(ROWS);
      // no alert of any kind: the stopped attempt is no failed run
      expect(receiver.received.map((r) => r.body)).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 180_000);
});
