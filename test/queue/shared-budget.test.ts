// Three worker processes share the Chatbot Service credential's budget through Redis. The proof is
// the emulator's own request log: no one-second window holds more than ratePerSecond plus its burst
// (one second's worth), and after the emulator answers one 429 with Retry-After, no request arrives
// until the pause ends except those already holding one of the credential's slots in flight
// (api.concurrency, summed over the three). A slow machine only lowers the rate, so neither can flake.
import { describe, expect, it } from 'vitest';
import type { PauseRecord } from '../../src/budget/index.js';
import { enqueueJob, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { busiestWindow, requestLog } from './deploy.js';
import { useDeployment } from './use-deployment.js';
import { until } from './helpers.js';

const d = useDeployment();

describe('the Chatbot Service budget across three worker processes', () => {
  it('holds ratePerSecond over all three, and a 429 with Retry-After stops all three until it passes', async () => {
    const RATE = 20;
    const CONCURRENCY = 3;
    const emu = (d.emu = await startTestEmulator({ latencyMs: 5 }));
    const feeds = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}`, chatbot: `SN-B${i}`, rows: 30 }));
    const file = await d.deploy(feeds, { api: `ratePerSecond: ${RATE}, concurrency: ${CONCURRENCY}, retries: 4` });
    const workers = await Promise.all([d.start(file), d.start(file), d.start(file)]);
    const jobs = [];
    for (const f of feeds) jobs.push(await enqueueJob(d.redis, d.queues, 'sync', f.name, { feed: f.name }));

    // Under way on every worker: then the service answers the next call with 429, Retry-After 2 s.
    await until('the syncs to be under way', async () => (await requestLog(emu)).length >= 60);
    emu.emulator.configure({ nextFaults: ['429'], retryAfterSeconds: 2 });

    for (const j of jobs) expect((await waitForJob(d.redis, d.queues, 'sync', j.jobId)).state).toBe('completed');
    for (const f of feeds) expect(await emu.listings(f.chatbot)).toHaveLength(30);

    const log = await requestLog(emu);
    const calls = log.filter((r) => r.path.startsWith('/chat/'));
    expect(calls.length).toBeGreaterThanOrEqual(6 * 31);
    // budget plus its burst (one second's worth)
    expect(
      busiestWindow(
        calls.map((r) => r.at),
        1000,
      ),
    ).toBeLessThanOrEqual(2 * RATE);

    const limited = calls.filter((r) => r.status === '429');
    expect(limited).toHaveLength(1);
    const [pauseKey] = await d.redis.keys(`${d.prefix}:budget:*:pause`);
    expect(pauseKey).toBeDefined();
    const pause = JSON.parse((await d.redis.get(pauseKey!))!) as PauseRecord;
    expect(pause.until - pause.at).toBeGreaterThan(1500);
    expect(pause.at).toBeGreaterThanOrEqual(limited[0]!.at);
    // Only calls that held a slot when the pause was set may still arrive; the 429's own is waiting.
    const during = calls.filter((r) => r.at > pause.at && r.at < pause.until);
    expect(during.length).toBeLessThanOrEqual(CONCURRENCY - 1);
    // ...and the syncs went on after it, on all three workers.
    expect(calls.filter((r) => r.at >= pause.until).length).toBeGreaterThan(CONCURRENCY);
    for (const w of workers) expect(w.logs()).toMatch(/"msg":"synced f\d/);
  }, 90_000);
});
