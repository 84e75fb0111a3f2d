// The sliding windows against a server that counts requests per window (test/helpers/fake-mls.ts:
// each token may make `perSecond` requests in any one-second window by their arrival, one more and
// it is suspended for good, as MLS Grid does). A request counts from its take until its answer,
// however long that is, then for the window from its answer (src/budget/backend.ts): so a send
// held up after its take (a busy process, a connection waited for) never lets other processes'
// requests through early. Here a third of the calls hold their permit 1.3 s (past the window and
// its margin) before sending, while other callers, on two budgets sharing one Redis (two processes)
// or one in memory, take what the window leaves. The server never suspends the token, and its
// log's busiest second holds at most the limit.
import '../setup/needs-redis.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBudget, credentialKey, memoryBackend, redisBackend, type Budget } from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';
import { startFakeMls, type FakeMls } from '../helpers/fake-mls.js';
import { busiestWindow } from '../queue/deploy.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const PER_SECOND = 3;
const CALLS = 15;
const HELD_MS = 1300;

let redis: Redis;
let mls: FakeMls;
const prefix = uniquePrefix();
beforeAll(async () => {
  redis = testRedis();
  mls = await startFakeMls({ perSecond: PER_SECOND, body: () => 'ok\n' });
});
afterAll(async () => {
  await mls.close();
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const opts = { label: 'feed source fake-mls', maxWaitMs: 60_000 };

/** `CALLS` calls spread over the budgets, every third holding its permit HELD_MS before it sends. */
async function calls(budgets: Budget[], token: string): Promise<void> {
  await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => {
      const permit = await budgets[i % budgets.length]!.acquire();
      try {
        if (i % 3 === 0) await new Promise((r) => setTimeout(r, HELD_MS));
        const res = await freshFetch(`${mls.url}/feeds/x.csv`, { headers: { authorization: `Bearer ${token}` } });
        await res.text();
      } finally {
        permit.release();
      }
    }),
  );
}

describe('sliding windows against a server counting requests per window', () => {
  it.each([
    ['two processes on Redis', () => redisBackend(redis, prefix), 2],
    ['one process in memory', () => memoryBackend(), 1],
  ] as const)('%s: sends held past the window never let others through early', async (_name, backend, processes) => {
    const token = `token-${Math.random()}`;
    const key = credentialKey('mls', token);
    const budgets = Array.from({ length: processes }, () =>
      createBudget(backend(), key, { perSecond: PER_SECOND }, opts, silentLogger),
    );
    await calls(budgets, token);
    const mine = mls.log.filter((r) => r.token === token);
    expect(mine.map((r) => r.status)).toEqual(Array.from({ length: CALLS }, () => 200));
    expect(mls.suspended.has(token)).toBe(false);
    expect(
      busiestWindow(
        mine.map((r) => r.at),
        1000,
      ),
    ).toBeLessThanOrEqual(PER_SECOND);
  });
});
