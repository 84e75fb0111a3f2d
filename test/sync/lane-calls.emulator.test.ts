// Each lane's report counts the calls that lane made, over real HTTP: its writes, and the paging
// of its chatbot when it is the first lane of that chatbot in the
// run; the other lanes of a chatbot say which lane's report holds the shared paging. The lanes'
// reports add up to the run's calls (the emulator's count).
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { formatSyncReport, type SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { row, rows, useEmulatorSync, type SyncEnv } from './helpers/feed.js';
import { agentCsv, annBobFeed, MAPPING, runLanesOf } from './helpers/routed.js';

let te: TestEmulator;
let env: SyncEnv;
const { closeAfterTest } = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const run = (feeds: FeedConfig[]) => runLanesOf(te, env, feeds, { changes: true });

const byEndpoint = (r: SyncReport) => Object.fromEntries(Object.entries(r.calls.byEndpoint).filter(([, n]) => n > 0));

describe("a lane's report counts its own calls", () => {
  it('a feed routed to two chatbots: each lane its own paging and writes', async () => {
    const server = closeAfterTest(
      await startFeedServer({ status: 200, body: agentCsv(['ann', 'ann', 'ann', 'bob', 'bob']) }),
    );
    const feed = annBobFeed(server.url);
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
    const feeds = ['a', 'b'].map((n) =>
      FeedConfig.parse({
        name: `feed-${n}`,
        chatbot: 'SN-ONE',
        source: { kind: 'csv', path: `${n}.csv` },
        mapping: MAPPING,
      }),
    );
    const first = await run(feeds);
    expect(first.reports.map((r) => [r.feed, byEndpoint(r), r.remote.pagingCountedIn])).toEqual([
      ['feed-a', { list: 1, create: 3 }, undefined],
      ['feed-b', { create: 2 }, 'feed-a'],
    ]);
    expect(first.reports.reduce((n, r) => n + r.calls.total, 0)).toBe(first.calls);
    expect(formatSyncReport(first.reports[1]!)).toContain(
      "API calls: 2 (create 2), retries 0; the chatbot's paging (shared) is counted in feed-a's",
    );

    // one listing of feed-b changes: its update is feed-b's (the listing before it, for undo, is the paging's: no read-back)
    await env.writeFeed([row(101, { City: 'Dallas' }), row(102)], 'b.csv');
    const again = await run(feeds);
    expect(again.reports.map((r) => [r.feed, byEndpoint(r)])).toEqual([
      ['feed-a', { list: 1 }],
      ['feed-b', { update: 1 }],
    ]);
    expect(again.reports.reduce((n, r) => n + r.calls.total, 0)).toBe(again.calls);
  });
});
