// A feed source's request budget in one sync: a spent daily budget stops the read cleanly (marked
// incomplete, nothing deleted) and the report says when it resets; a server's quota headers tighten
// the configured limits; Retry-After from the source pauses the credential.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBudgets, credentialKey, memoryBackend } from '../../src/budget/index.js';
import { silentLogger } from '../../src/log.js';
import { resetTime, requestBudget, sourceBudget } from '../../src/feeds/source/source-budget.js';
import { FeedSource } from '../../src/feeds/index.js';
import { FeedReadError } from '../../src/errors.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startFakeMls, type FakeMls } from '../helpers/fake-mls.js';
import { createSyncEnv, csv, rows, type SyncEnv } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
let mls: FakeMls;
let served = 5;

beforeEach(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  served = 5;
  mls = await startFakeMls({ perSecond: 100, body: () => csv(rows(served)) });
});
afterEach(async () => {
  await mls.close();
  await te.close();
  await env.cleanup();
});

const urlFeed = (limits: string, token: string) =>
  env.feed({ source: { kind: 'csv', url: `${mls.url}/feed.csv`, bearerToken: token, limits: JSON.parse(limits) } });

describe('feed source budget in a sync', () => {
  it('a spent daily budget stops the read: incomplete, no deletes, says when it resets, retry after it', async () => {
    const feed = urlFeed('{"perDay": 1}', `day-${Math.random()}`);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect(await te.listings('SN-SYNC')).toHaveLength(5);

    served = 2; // three listings left the feed: a whole read would delete them
    const report = await env.sync(te, feed);
    expect(report.outcome).not.toBe('ok'); // 'guard': the deletes an incomplete read implies are withheld
    expect(report.source.complete).toBe(false);
    expect(report.counts.deleted).toBe(0);
    expect(await te.listings('SN-SYNC')).toHaveLength(5);
    expect(report.source.error).toMatch(
      /request budget is spent \(1 requests per day\); it resets at \d{4}-\d\d-\d\dT/,
    );
    expect(report.retryable).toBe(true);
    expect(Date.parse(report.retryAt!)).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(mls.log).toHaveLength(1); // the second request was never sent
  });

  it('Hour-Quota-Limit from the server tightens a looser configured limit', async () => {
    await mls.close();
    mls = await startFakeMls({
      perSecond: 100,
      body: () => csv(rows(served)),
      headers: () => ({ 'Hour-Quota-Limit': '1', 'Minute-Quota-Limit': '180' }),
    });
    const feed = urlFeed('{"perHour": 7200}', `hour-${Math.random()}`);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const report = await env.sync(te, feed);
    expect(report.source.complete).toBe(false);
    expect(report.source.error).toMatch(/1 requests per hour/);
    expect(Date.parse(report.retryAt!)).toBeGreaterThan(Date.now() + 50 * 60_000);
  });
});

describe('feed request budget hook', () => {
  it('a 429 with Retry-After pauses the credential for every reader of it', async () => {
    const budgets = createBudgets(memoryBackend(), silentLogger);
    const b = budgets.budget(credentialKey('feed', 'x'), {}, { label: 'feed source x', maxWaitMs: 70_000 });
    const hook = requestBudget(b);
    await hook.onResponse(429, new Headers({ 'retry-after': '1' }));
    const started = Date.now();
    await hook.beforeRequest();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a pause longer than a read can wait is a retryable FeedReadError with retryAt', async () => {
    const b = createBudgets(memoryBackend(), silentLogger).budget(
      credentialKey('feed', 'y'),
      {},
      { label: 'feed source y', maxWaitMs: 1000 },
    );
    const hook = requestBudget(b);
    await hook.onResponse(
      200,
      new Headers({
        'Hour-Quota-Available': '0',
        'Hour-Quota-ResetTime': new Date(Date.now() + 3600_000).toUTCString(),
      }),
    );
    const err = await hook.beforeRequest().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FeedReadError);
    expect((err as FeedReadError).retryable).toBe(true);
    expect((err as FeedReadError).retryAt!.getTime()).toBeGreaterThan(Date.now() + 3500_000);
  });

  it('reads reset times as dates, epoch seconds or ms, and seconds from now', () => {
    const now = 1_700_000_000_000;
    expect(resetTime('30', now)).toBe(now + 30_000);
    expect(resetTime('1700003600', now)).toBe(1_700_003_600_000);
    expect(resetTime('1700003600000', now)).toBe(1_700_003_600_000);
    expect(resetTime('2023-11-14T23:13:20Z', now)).toBe(Date.parse('2023-11-14T23:13:20Z'));
    expect(resetTime('soon', now)).toBeUndefined();
  });
});

describe("a push job's share of the source budget (feeds[].push.sourceShare)", () => {
  it("a push job takes at most its share of the credential's windows, a budget of its own; pulls on the credential keep the rest", async () => {
    const budgets = createBudgets(memoryBackend(), silentLogger);
    const source = FeedSource.parse({
      kind: 'csv',
      url: 'https://mls.test/feed.csv',
      bearerToken: `share-${Math.random()}`,
      limits: { perHour: 8 },
    });
    const pushes = sourceBudget(source, { budgets, sourceShare: { feed: 'mls', share: 0.25 } })!;
    for (let i = 0; i < 2; i++) {
      await pushes.beforeRequest();
      await pushes.onResponse(200, new Headers());
    }
    await expect(pushes.beforeRequest()).rejects.toThrow(
      /push jobs of feed mls: push\.sourceShare 0\.25 of source\.limits.*2 requests per hour/,
    );
    // the pulls: the 6 the pushes left, then no more
    const pulls = sourceBudget(source, { budgets })!;
    for (let i = 0; i < 6; i++) {
      await pulls.beforeRequest();
      await pulls.onResponse(200, new Headers());
    }
    await expect(pulls.beforeRequest()).rejects.toThrow(/8 requests per hour/);
  });
});
