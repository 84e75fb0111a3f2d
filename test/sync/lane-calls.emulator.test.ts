// Each lane's report counts the calls that lane made, over real HTTP: its writes and the read-backs
// before them (undo), and the paging of its chatbot when it is the first lane of that chatbot in the
// run; the other lanes of a chatbot say which lane's report holds the shared paging. The lanes'
// reports add up to the run's calls (the emulator's count).
import { describe, expect, it } from 'vitest';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { formatSyncReport, lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { COLUMNS, csv, row, rows, useEmulatorSync, type SyncEnv } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const { closeAfterTest } = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const mapping = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

async function run(feeds: FeedConfig[]): Promise<{ reports: SyncReport[]; calls: number }> {
  const calls = createCallCounter();
  const before = (await te.stats()).total;
  const reports = await runSync(feeds.flatMap(lanesOf), {
    api: te.client({ onCall: calls.onCall, retry: { retries: 1 } }),
    store: env.store,
    configFeeds: feeds,
    logger: silentLogger,
    baseDir: env.dir,
    apiConfig: ApiConfig.parse({ baseUrl: te.url, secretKey: 'x', sessionKey: 'y', concurrency: 4, pageSize: 20, retries: 1 }),
    calls,
    changes: () => () => {},
  });
  return { reports, calls: (await te.stats()).total - before };
}

const byEndpoint = (r: SyncReport) => Object.fromEntries(Object.entries(r.calls.byEndpoint).filter(([, n]) => n > 0));

describe("a lane's report counts its own calls", () => {
  it('a feed routed to two chatbots: each lane its own paging and writes', async () => {
    const lines = csv(rows(5)).trimEnd().split('\n');
    const body = [`${lines[0]},Agent`, ...lines.slice(1).map((l, i) => `${l},${i < 3 ? 'ann' : 'bob'}`)].join('\n') + '\n';
    const server = closeAfterTest(await startFeedServer({ status: 200, body }));
    const feed = FeedConfig.parse({
      name: 'brokerage',
      chatbots: [
        { serialNumber: 'SN-ANN', where: { Agent: ['ann'] } },
        { serialNumber: 'SN-BOB', where: { Agent: ['bob'] } },
      ],
      source: { kind: 'csv', url: server.url },
      mapping,
    });
    const { reports, calls } = await run([feed]);
    expect(reports.map((r) => [r.chatbot, r.outcome, byEndpoint(r), r.calls.total])).toEqual([
      ['SN-ANN', 'ok', { list: 1, create: 3 }, 4],
      ['SN-BOB', 'ok', { list: 1, create: 2 }, 3],
    ]);
    expect(reports.reduce((n, r) => n + r.calls.total, 0)).toBe(calls);
  });

  it("two feeds of one chatbot: the shared paging in the first lane's report, each lane's writes and read-backs in its own", async () => {
    await env.writeFeed(rows(3), 'a.csv');
    await env.writeFeed(rows(2, 101), 'b.csv');
    const feeds = ['a', 'b'].map((n) => FeedConfig.parse({ name: `feed-${n}`, chatbot: 'SN-ONE', source: { kind: 'csv', path: `${n}.csv` }, mapping }));
    const first = await run(feeds);
    expect(first.reports.map((r) => [r.feed, byEndpoint(r), r.remote.pagingCountedIn])).toEqual([
      ['feed-a', { list: 1, create: 3 }, undefined],
      ['feed-b', { create: 2 }, 'feed-a'],
    ]);
    expect(first.reports.reduce((n, r) => n + r.calls.total, 0)).toBe(first.calls);
    expect(formatSyncReport(first.reports[1]!)).toContain("API calls: 2 (create 2), retries 0; the chatbot's paging (shared) is counted in feed-a's");

    // one listing of feed-b changes: its update and the read-back before it (undo) are feed-b's
    await env.writeFeed([row(101, { City: 'Dallas' }), row(102)], 'b.csv');
    const again = await run(feeds);
    expect(again.reports.map((r) => [r.feed, byEndpoint(r)])).toEqual([
      ['feed-a', { list: 1 }],
      ['feed-b', { update: 1, list: 1 }],
    ]);
    expect(again.reports.reduce((n, r) => n + r.calls.total, 0)).toBe(again.calls);
  });
});
