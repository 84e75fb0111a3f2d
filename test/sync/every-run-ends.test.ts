// Invariant 3 over real HTTP: every run ends, in bounded memory, whatever the service says. A list
// server that lies about VirtualCount, never ends or ignores PageNumber; a run past its deadline.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { fetchRemote } from '../../src/sync/remote/remote.js';
import { ApiConfig } from '../../src/config/schema.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startListServer, type ListServer } from '../helpers/list-server.js';
import { createSyncEnv, rows, type SyncEnv } from './helpers/feed.js';

const servers: ListServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function liar(opts: Parameters<typeof startListServer>[0]) {
  const s = await startListServer({ serialNumber: 'SN-LIE', ...opts });
  servers.push(s);
  const api = createApiClient({
    baseUrl: s.url,
    secretKey: 'k',
    sessionKey: 's',
    timeoutMs: 5000,
    retry: { retries: 0 },
  });
  return { server: s, api };
}
const opts = { serialNumber: 'SN-LIE', keyBy: 'MLSNumber' as const, pageSize: 10, concurrency: 4, maxPages: 50 };

describe('the remote side pages until a short page, never sized from VirtualCount', () => {
  for (const virtualCount of [1e9, 2 ** 53 - 1]) {
    it(`VirtualCount ${virtualCount} over 25 listings: the pass ends at the short page, the side is incomplete`, async () => {
      const { server, api } = await liar({ count: 25, virtualCount });
      const remote = await fetchRemote(api, opts);
      expect(remote.byKey.size).toBe(25);
      expect(remote.complete).toBe(false);
      expect(remote.problem).toContain(`VirtualCount is ${virtualCount}`);
      // three passes at most, each of 3 pages plus at most `concurrency` asked ahead
      expect(server.listCalls).toBeLessThanOrEqual(3 * (3 + opts.concurrency));
    });
  }

  it('full pages without end (and a VirtualCount of 1e9): a PagingError naming api.maxPages', async () => {
    const { server, api } = await liar({ count: 0, virtualCount: 1e9, endless: true });
    await expect(fetchRemote(api, opts)).rejects.toThrow(/api\.maxPages \(50\)/);
    expect(server.listCalls).toBeLessThanOrEqual(50 + opts.concurrency);
  });

  it('a server that ignores PageNumber: the repeated page is an error', async () => {
    const { server, api } = await liar({ count: 100, ignorePageNumber: true });
    await expect(fetchRemote(api, opts)).rejects.toThrow(/repeats listings already seen/);
    expect(server.listCalls).toBeLessThanOrEqual(1 + opts.concurrency);
  });

  it('a VirtualCount smaller than the truth: paging goes on past it until the short page', async () => {
    const { api } = await liar({ count: 45, virtualCount: 5 });
    const remote = await fetchRemote(api, opts);
    expect(remote.byKey.size).toBe(45);
    expect(remote.complete).toBe(false);
  });
});

describe('a sync against an endless list', () => {
  let env: SyncEnv;
  beforeEach(async () => {
    env = await createSyncEnv();
  });
  afterEach(() => env.cleanup());

  it('ends as failed with a message, writes nothing, and reports', async () => {
    const s = await startListServer({ serialNumber: 'SN-SYNC', count: 0, virtualCount: 1e9, endless: true });
    servers.push(s);
    await env.writeFeed(rows(3));
    const report = await env.sync(
      {
        url: s.url,
        client: (o = {}) =>
          createApiClient({
            baseUrl: s.url,
            secretKey: 'k',
            sessionKey: 's',
            timeoutMs: 5000,
            ...o,
            retry: { retries: 0 },
          }),
      } as unknown as TestEmulator,
      env.feed(),
      {
        api: { maxPages: 20, pageSize: 10 },
      },
    );
    expect(report.outcome).toBe('failed');
    expect(report.retryable).toBe(false);
    expect(report.message).toMatch(/api\.maxPages \(20\)/);
    expect(report.counts).toMatchObject({ created: 0, deleted: 0 });
  });
});

describe('a list answer that is not JSON', () => {
  let env: SyncEnv;
  beforeEach(async () => {
    env = await createSyncEnv();
  });
  afterEach(() => env.cleanup());

  it('ends the feed with a report (no exception), naming the endpoint and how the body starts', async () => {
    const s = await startListServer({ serialNumber: 'SN-SYNC', count: 0, html: true });
    servers.push(s);
    await env.writeFeed(rows(2));
    const client = (o = {}) =>
      createApiClient({
        baseUrl: s.url,
        secretKey: 'k',
        sessionKey: 's',
        timeoutMs: 5000,
        ...o,
        retry: { retries: 0 },
      });
    const report = await env.sync({ url: s.url, client } as unknown as TestEmulator, env.feed());
    expect(report.outcome).toBe('failed');
    expect(report.message).toContain('RealEstateList');
    expect(report.message).toContain('Gateway login');
  });
});

describe('the run deadline', () => {
  let te: TestEmulator;
  let env: SyncEnv;
  beforeAll(async () => {
    te = await startTestEmulator({ latencyMs: 40 });
  });
  afterAll(() => te.close());
  beforeEach(async () => {
    env = await createSyncEnv();
  });
  afterEach(() => env.cleanup());

  it('stops a run past feeds[].deadlineMinutes as aborted and retryable, and a rerun goes on', async () => {
    await env.writeFeed(rows(60));
    const feed = env.feed({ deadlineMinutes: 0.005 }); // 300 ms
    const report = await env.sync(te, feed, { api: { concurrency: 2 } });
    expect(report.outcome).toBe('aborted');
    expect(report.retryable).toBe(true);
    expect(report.message).toContain('deadlineMinutes 0.005');
    expect(report.counts.created).toBeLessThan(60);
    const rest = await env.sync(te, env.feed(), { api: { concurrency: 8 } });
    expect(rest.outcome).toBe('ok');
    expect((await te.listings('SN-SYNC')).length).toBe(60);
  });
});

describe('the paging bound fits real chatbots', () => {
  it('the defaults page a chatbot of a million listings (10,000 full pages and the short one after)', () => {
    const api = ApiConfig.parse({
      baseUrl: 'http://127.0.0.1:1',
      secretKey: 'sk-test-0123456789',
      sessionKey: 'ss-test-0123456789',
    });
    expect(api.maxPages).toBeGreaterThanOrEqual(Math.floor(1_000_000 / api.pageSize) + 1);
  });
});
