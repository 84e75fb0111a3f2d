// Issue 38, point 5: what the change paths cost, counted in the source credential's one shared budget
// (source.limits; src/feeds/source/source-budget.ts: one budget per origin and credential, through
// Redis as the workers hold it). Two feeds on one RESO server with one token: a no-change EntityEvent
// poll of one is 1 request; a keys-only reconcile of the other is ceil(N / page) key pages, plus the
// empty page that ends a keyset read, plus $metadata (read once by a run that fetches by key: keys are
// sent as it types them) and one by-key fetch of the changed record; a pushed event's fetch (RCP-028,
// the job's path: SyncOptions.pushed) is $metadata and 1 by-key request. The budget is set to exactly their
// sum: the server receives every one of them, and the next request, by either feed, is not sent.
import '../setup/needs-redis.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createBudgets, redisBackend } from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { pushedAsk, reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const redis = testRedis();
const prefix = uniquePrefix();
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const N = 25;
const PAGE = 10;

describe("the source's shared request budget", () => {
  it('counts a no-change EntityEvent poll (1), a reconcile of N keys (ceil(N / page) + 1, $metadata, the fetches) and a pushed fetch ($metadata, 1) of two feeds against one budget', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(N, 385), maxPageSize: PAGE, entityEvents: true }),
    );
    const feedOf = (name: string, sn: string, token: string, limits?: Record<string, number>) =>
      FeedConfig.parse({
        name,
        chatbot: sn,
        source: {
          kind: 'reso',
          url: server.url,
          bearerToken: token,
          ...(limits && { limits }),
          incremental: true,
          changes: 'entityEvent',
          retries: 0,
          timeoutMs: 10_000,
          photosTimestampField: null,
        },
        mapping: {
          preset: 'reso',
          fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
        },
        deletes: { maxFraction: 0.5, maxCount: 100 },
      });
    // the first pulls, on a credential of their own
    const setup = `setup-${prefix}`;
    for (const [name, sn] of [
      ['a', 'SN-A'],
      ['b', 'SN-B'],
    ] as const) {
      const first = await env.sync(te, feedOf(name, sn, setup));
      expect(first.outcome, first.message).toBe('ok');
    }
    // (changed a minute ago: a reconcile's mark never passes the server's clock at its start, less a second)
    const changed = () =>
      server.touch('K-03', { ListPrice: 303_303, ModificationTimestamp: new Date(Date.now() - 60_000).toISOString() });

    // (a run that fetches by key reads $metadata once first: keys are sent as it types them)
    const expected = { poll: 1, reconcile: Math.ceil(N / PAGE) + 1 + 1 + 1, push: 1 + 1 };
    const total = expected.poll + expected.reconcile + expected.push;
    const token = `shared-${prefix}`;
    const budgets = createBudgets(redisBackend(redis, prefix), silentLogger);
    const a = feedOf('a', 'SN-A', token, { perDay: total });
    const b = feedOf('b', 'SN-B', token, { perDay: total });
    const received = server.received;

    const poll = await env.sync(te, a, { budgets });
    expect(poll.outcome, poll.message).toBe('ok');
    expect(poll.source.events).toEqual({ read: 0, keys: 0, fetched: 0, gone: 0 });
    expect(poll.source.requestsBy).toEqual({ events: 1 });
    expect(poll.source.requests).toBe(expected.poll);

    changed();
    const reconcile = await env.sync(te, b, { budgets, ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.source.reconcile).toEqual({ keys: N, fetched: 1 });
    expect(reconcile.counts.updated).toBe(1);
    expect(reconcile.source.requestsBy).toEqual({ keys: Math.ceil(N / PAGE) + 1, metadata: 1, byKey: 1 });
    expect(reconcile.source.requests).toBe(expected.reconcile);

    const pushed = await env.sync(te, a, { budgets, ask: pushedAsk({ keys: ['K-03'], media: [], events: 1 }) });
    expect(pushed.outcome, pushed.message).toBe('ok');
    expect(pushed.counts.updated).toBe(1);
    expect(pushed.source.requestsBy).toEqual({ metadata: 1, byKey: 1 });
    expect(pushed.source.requests).toBe(expected.push);

    // every request counted was sent, and nothing else was
    expect(server.received - received).toBe(total);
    // the budget is spent for both feeds: b's next poll is not sent
    const refused = await env.sync(te, b, { budgets });
    expect(refused.outcome).not.toBe('ok');
    expect(refused.source.error).toMatch(new RegExp(`request budget is spent \\(${total} requests per day\\)`));
    expect(refused.retryable).toBe(true);
    expect(server.received - received).toBe(total);
  }, 120_000);
});
