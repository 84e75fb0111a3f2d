// How many Redis round trips a budgeted call costs: every Chatbot Service call of every worker asks
// the shared budget, so its Redis traffic is per call. Counted at the connection (every command
// ioredis sends), over calls that never wait (a wait adds the asks it takes, by design).
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBudget } from '../../src/api/rate-limiter.js';
import { createBudgets, credentialKey, redisBackend } from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

let redis: Redis;
let emu: TestEmulator;
let sent = 0;
/** the commands sent, by name (eval, evalsha, …) */
const byName = new Map<string, number>();
const prefix = uniquePrefix();

beforeAll(async () => {
  redis = testRedis();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    byName.set(args[0].name, (byName.get(args[0].name) ?? 0) + 1);
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
    const budget = apiBudget(createBudgets(redisBackend(redis, prefix), silentLogger), {
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
    const b = createBudgets(redisBackend(redis, prefix), silentLogger).budget(
      credentialKey('feed', 'https://mls.example', 'round-trips'),
      { perSecond: 10_000, perMinute: 100_000, perHour: 1_000_000, perDay: 10_000_000 },
      { label: 'feed source', maxWaitMs: 1000 },
    );
    const n = await perCall(async () => (await b.acquire()).release());
    console.log(`MLS source request: ${n} Redis commands for its budget`);
    expect(n).toBeLessThanOrEqual(4);
  });

  it("sends a script's text only when Redis does not know it (NOSCRIPT: a restart, a flush, another node)", async () => {
    const b = createBudgets(redisBackend(redis, prefix), silentLogger).budget(
      credentialKey('api', 'https://scripts.example', 'round-trips'),
      { perSecond: 10_000, concurrency: 4 },
      { label: 'scripts', maxWaitMs: 1000 },
    );
    const call = async () => (await b.acquire()).release();
    await call();
    await settle();
    byName.clear();
    for (let i = 0; i < 5; i++) await call();
    await settle();
    expect(byName.get('evalsha')).toBe(10);
    expect(byName.get('eval') ?? 0).toBe(0);
    // Redis forgot the scripts (as after a restart): the next asks send them whole, once, and go on
    const evalsha = redis.evalsha.bind(redis);
    let forgot = 2;
    redis.evalsha = ((...args: Parameters<typeof evalsha>) =>
      forgot-- > 0
        ? Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'))
        : evalsha(...args)) as typeof redis.evalsha;
    byName.clear();
    for (let i = 0; i < 3; i++) await call();
    await settle();
    redis.evalsha = evalsha;
    expect(byName.get('eval')).toBe(2);
    expect(byName.get('evalsha')).toBe(4);
  });
});
