// How many Redis round trips a budgeted call costs: every Chatbot Service call of every worker asks
// the shared budget, so its Redis traffic is per call. Counted at the connection (every command
// ioredis sends), over calls that never wait (a wait adds the asks it takes, by design).
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBudget } from '../../src/api/rate-limiter.js';
import { createBudgets, credentialKey, redisBackend } from '../../src/budget/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

let redis: Redis;
let emu: TestEmulator;
let sent = 0;
const prefix = uniquePrefix();

beforeAll(async () => {
  redis = testRedis();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    return send(...args);
  };
  await redis.ping();
  emu = await startTestEmulator();
});

afterAll(async () => {
  await emu.close();
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const CALLS = 20;
/** a release's commands are sent without waiting for them; let them go out before counting */
const settle = () => new Promise((r) => setTimeout(r, 50));

/** Redis commands per call of `call`, averaged over CALLS calls, after a first call that warms up */
async function perCall(call: () => Promise<unknown>): Promise<number> {
  await call();
  await settle();
  const before = sent;
  for (let i = 0; i < CALLS; i++) await call();
  await settle();
  return (sent - before) / CALLS;
}

describe('Redis round trips of a budgeted call', () => {
  it('a Chatbot Service call (rate and calls in flight shared) asks Redis at most twice: take, then release', async () => {
    const budget = apiBudget(createBudgets(redisBackend(redis, prefix)), {
      baseUrl: emu.url,
      secretKey: 'k-round-trips',
      ratePerSecond: 10_000,
      concurrency: 8,
    });
    const api = emu.client({ budget });
    const n = await perCall(() => api.listListings({ SerialNumber: 'SN-1' }));
    console.log(`Chatbot Service call: ${n} Redis commands for its budget`);
    expect(n).toBeLessThanOrEqual(2);
  });

  it('an MLS source request (per second, minute, hour and day) asks once per fixed window more', async () => {
    const b = createBudgets(redisBackend(redis, prefix)).budget(
      credentialKey('feed', 'https://mls.example', 'round-trips'),
      { perSecond: 10_000, perMinute: 100_000, perHour: 1_000_000, perDay: 10_000_000 },
      { label: 'feed source', maxWaitMs: 1000 },
    );
    const n = await perCall(async () => (await b.acquire()).release());
    console.log(`MLS source request: ${n} Redis commands for its budget`);
    expect(n).toBeLessThanOrEqual(4);
  });
});
