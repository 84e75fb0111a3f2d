// A run whose job lock was lost because its job is gone from Redis (a failover to a replica that
// lacked it, keys evicted or deleted by hand) is not `taken-over`: no attempt has the job or ever
// will, so nothing runs what it left or records its outcome. It is a stopped run (`aborted`, a
// failed run for the alert rules), so the loss is heard of; `taken-over` said nothing. On a
// `feedsync worker` process, the real Redis and the emulator (s28 review of 7e233368). The same
// when the chatbot lock goes with the job (a flush, a forced obliterate): its loss is heard first,
// and the worker looks whether the job is still there before it stops the run (s29).
import '../setup/needs-redis.js';
import { describe, expect, it } from 'vitest';
import { chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { listRuns } from '../../src/queue/index.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { until } from './helpers.js';
import { alertedSyncUnderWay, useDeployment } from './use-deployment.js';

const d = useDeployment();

const SN = 'SN-LOST';
const ROWS = 200;

/**
 * A sync under way on a `feedsync worker`, the keys `lost` names deleted under it with its place in
 * `active`: its run is recorded `aborted`, job lost from Redis, a failure alert is sent, and the job
 * is nowhere (no attempt of it runs).
 */
async function lostUnderIt(lost: (jobKey: string) => string[]): Promise<void> {
  const receiver = await startHttpReceiver();
  try {
    const { w, jobId } = await alertedSyncUnderWay(d, {
      chatbot: SN,
      rows: ROWS,
      hookUrl: `${receiver.url}/hook`,
      // (no stalled check within the test: what becomes of the job is the test's)
      worker: { lockDurationMs: 4000, stalledIntervalMs: 60_000, concurrency: 1 },
    });

    const jobKey = d.queues.sync.toKey(jobId);
    await d.redis
      .multi()
      .del(...lost(jobKey))
      .lrem(d.queues.sync.toKey('active'), 0, jobId)
      .exec();

    const run = await until(
      'the stopped run recorded',
      async () => (await listRuns(d.redis, d.prefix, { feed: 'homes', limit: 10 })).find((r) => r.jobId === jobId),
      60_000,
    );
    expect(run.outcome).toBe('aborted');
    expect(run.summary).toContain('job lost from Redis');
    expect(run.summary).not.toMatch(/taken over/);
    await until('a failure alert', async () => receiver.received.length > 0, 30_000);
    expect(JSON.stringify(receiver.received[0]!.body)).toMatch(/failing/);
    expect(await d.queues.sync.getJobState(jobId)).toBe('unknown');
    expect(w.logs()).toContain('enqueue it again');
  } finally {
    await receiver.close();
  }
}

describe('a run whose job is lost from Redis under it', () => {
  it('is recorded as a stopped run, not taken-over, and its alert rules hear of it', async () => {
    // the job's keys lost (its hash, its lock, its log): its lock's renewal fails
    await lostUnderIt((jobKey) => [jobKey, `${jobKey}:lock`, `${jobKey}:logs`]);
  }, 180_000);

  it('its chatbot lock lost first: the job found gone, the run is the same stopped run, alerted', async () => {
    // The job gone (its hash, its log) and its chatbot lock with it, as a flush leaves them. Its job
    // lock is kept: its loss is heard later than the chatbot lock's, or not at all before the run
    // ends (the chatbot lock's holder stops first), so the run hears only that a chatbot lock was
    // lost, and must look whether the job still exists (it ended `taken-over` before).
    const chatbotLock = targetLockKey(d.prefix, chatbotLockName({ chatbot: SN }, 'sync'));
    await lostUnderIt((jobKey) => [jobKey, `${jobKey}:logs`, chatbotLock]);
  }, 180_000);
});
