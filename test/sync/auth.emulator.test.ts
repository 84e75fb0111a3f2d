// Invariant 6 over HTTP: the first 401/403 from the API or a feed ends the feed's run as `failed`,
// naming the config key to fix, and no further call is made.
import { describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, type TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { requests, rows, SN, type SyncEnv, total, useEmulatorSync } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

/** a TestEmulator whose client sends other keys */
const withKeys = (keys: { secretKey?: string; sessionKey?: string }): TestEmulator => ({
  ...te,
  client: (o = {}) => te.client({ ...o, ...keys }),
});

describe('auth failures stop at once', () => {
  it('a wrong API secret: the first 401 ends the run as failed, naming api.secretKey; no call after it', async () => {
    await env.writeFeed(rows(40));
    const report = await env.sync(withKeys({ secretKey: 'wrong-secret-key-000' }), env.feed(), {
      api: { concurrency: 1 },
    });
    expect(report.outcome).toBe('failed');
    expect(report.retryable).toBe(false);
    expect(report.message).toContain('api.secretKey');
    expect(report.message).not.toContain('wrong-secret-key-000');
    expect(total(await requests(te, 'RealEstateCreate'))).toBe(1);
    expect(report.counts.failed).toBeLessThanOrEqual(1);
  });

  it('a wrong session key: the list answers 401, the run fails naming api.sessionKey, nothing is written', async () => {
    await env.writeFeed(rows(5));
    const report = await env.sync(withKeys({ sessionKey: 'wrong-session-key-00' }), env.feed());
    expect(report.outcome).toBe('failed');
    expect(report.message).toContain('api.sessionKey');
    expect(total(await requests(te, 'RealEstateList'))).toBe(1);
    expect(total(await requests(te, 'RealEstateCreate'))).toBe(0);
  });

  it('a feed answering 403: failed, naming the feed bearer token, and no write', async () => {
    await env.writeFeed(rows(5));
    await env.sync(te);
    const writesBefore = total(await requests(te, 'RealEstateCreate')) + total(await requests(te, 'RealEstateDelete'));
    const server = await startFeedServer({ status: 403, body: 'forbidden' });
    emulator.closeAfterTest(server);
    const report = await env.sync(
      te,
      env.feed({ source: { kind: 'csv', url: server.url, bearerToken: 'tok-wrong-123456', retries: 3 } }),
      { force: true },
    );
    expect(report.outcome).toBe('failed');
    expect(report.message).toContain('feeds[test-feed].source.bearerToken');
    expect(server.requests).toBe(1);
    expect(total(await requests(te, 'RealEstateCreate')) + total(await requests(te, 'RealEstateDelete'))).toBe(
      writesBefore,
    );
    expect((await te.listings(SN)).length).toBe(5);
  });
});

it('keeps the right key working (control)', async () => {
  await env.writeFeed(rows(2));
  expect((await env.sync(te)).outcome).toBe('ok');
  expect(TEST_SECRET_KEY).not.toBe('wrong-secret-key-000');
});
