// The chatbot as the unit (issue 26), over real HTTP: one feed routed to several chatbots by
// `where` is pulled once (a feed server counts the requests) and each chatbot holds exactly what
// its where selects; an agent change moves a listing; a chatbot that cannot be synced fails alone;
// three feeds of one chatbot run together page its list once (the emulator counts list calls).
import { afterEach, describe, expect, it } from 'vitest';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { fingerprintNamespace } from '../../src/sync/state.js';
import { lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js';
import { COLUMNS, csv, requests, row, rows, total, useEmulatorSync, type Row, type SyncEnv } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const servers: FeedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The test columns and an agent and office per row (sources the routing reads, not mapped). */
function agentCsv(data: Array<Row & { Agent: string; Office: string }>): string {
  const head = csv([]).trimEnd();
  const lines = csv(data).trimEnd().split('\n').slice(1);
  return [`${head},Agent,Office`, ...lines.map((l, i) => `${l},${data[i]!.Agent},${data[i]!.Office}`)].join('\n') + '\n';
}

const mapping = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

function routedFeed(url: string, chatbots: unknown[]): FeedConfig {
  return FeedConfig.parse({ name: 'brokerage', chatbots, source: { kind: 'csv', url }, mapping, deletes: { maxFraction: 1, batchSize: 10 } });
}

async function run(target: TestEmulator, feeds: FeedConfig[], patch: Partial<ApiConfig> = {}): Promise<SyncReport[]> {
  const calls = createCallCounter();
  const apiConfig = ApiConfig.parse({ baseUrl: target.url, secretKey: 'x', sessionKey: 'y', concurrency: 4, pageSize: 20, retries: 1, ...patch });
  return runSync(feeds.flatMap(lanesOf), {
    api: target.client({ onCall: calls.onCall, retry: { retries: 1 } }),
    store: env.store,
    configFeeds: feeds,
    logger: silentLogger,
    baseDir: env.dir,
    apiConfig,
    calls,
  });
}

const held = async (t: TestEmulator, sn: string) => (await t.listings(sn)).map((l) => l.MLSNumber).sort();
const mls = (...ns: number[]) => ns.map((n) => `MLS${String(n).padStart(4, '0')}`).sort();

describe('one feed routed to several chatbots', () => {
  it('is pulled once; each chatbot holds what its where selects (either spelling); a record no where takes is counted; an agent change moves the listing', async () => {
    const data = [
      { ...row(1), Agent: 'AGENT_ANN', Office: 'Main' },
      { ...row(2), Agent: 'agent bob', Office: 'Main' },
      { ...row(3), Agent: 'Agent Ann', Office: 'Main' },
      { ...row(4), Agent: 'AgentBob', Office: 'North' },
      { ...row(5), Agent: 'Carl', Office: 'North' },
      { ...row(6), Agent: 'Carl', Office: 'Elsewhere' },
    ];
    const server = await startFeedServer({ status: 200, body: agentCsv(data) });
    servers.push(server);
    const feed = routedFeed(server.url, [
      { serialNumber: 'SN-ANN', where: { Agent: ['agent ann'] } },
      { serialNumber: 'SN-BOB', where: { Agent: ['Agent_Bob'] } },
      // two fields must both match; a record may go to several chatbots
      { serialNumber: 'SN-OFFICE', where: { Office: ['main', 'NORTH'], Agent: ['agent ann', 'agent bob', 'carl'] } },
    ]);
    const reports = await run(te, [feed]);
    expect(server.requests).toBe(1);
    expect(reports.map((r) => [r.chatbot, r.outcome])).toEqual([
      ['SN-ANN', 'ok'],
      ['SN-BOB', 'ok'],
      ['SN-OFFICE', 'ok'],
    ]);
    expect(await held(te, 'SN-ANN')).toEqual(mls(1, 3));
    expect(await held(te, 'SN-BOB')).toEqual(mls(2, 4));
    expect(await held(te, 'SN-OFFICE')).toEqual(mls(1, 2, 3, 4, 5));
    // record 6 (office Elsewhere) went nowhere: counted, not rejected
    expect(reports[0]!.counts).toMatchObject({ routedNowhere: 1, rejected: 0, feedRecords: 2, created: 2 });
    expect(reports[2]!.counts).toMatchObject({ feedRecords: 5, created: 5 });
    // each chatbot's listings carry its own serial number
    expect((await te.listings('SN-BOB')).every((l) => l.SerialNumber === 'SN-BOB')).toBe(true);

    // the agent change: record 1 goes from Ann to Bob
    server.answer = { status: 200, body: agentCsv(data.map((d, i) => (i === 0 ? { ...d, Agent: 'Agent Bob' } : d))) };
    const again = await run(te, [feed]);
    expect(server.requests).toBe(2);
    expect(await held(te, 'SN-ANN')).toEqual(mls(3));
    expect(await held(te, 'SN-BOB')).toEqual(mls(1, 2, 4));
    expect(await held(te, 'SN-OFFICE')).toEqual(mls(1, 2, 3, 4, 5));
    expect(again.map((r) => r.counts.deleted)).toEqual([1, 0, 0]);
    expect(again.map((r) => r.counts.created)).toEqual([0, 1, 0]);
    expect(again[2]!.counts).toMatchObject({ created: 0, updated: 0, unchanged: 5 });
  });

  it('a chatbot that cannot be synced fails alone: the others are written and committed, its state is untouched', async () => {
    // this emulator knows two of the three chatbots: the third's list answers an error
    const only = await startTestEmulator({ chatbots: ['SN-ANN', 'SN-OFFICE'] });
    try {
      const server = await startFeedServer({ status: 200, body: agentCsv(rows(4).map((r, i) => ({ ...r, Agent: i % 2 ? 'Bob' : 'Ann', Office: 'Main' }))) });
      servers.push(server);
      const feed = routedFeed(server.url, [
        { serialNumber: 'SN-ANN', where: { Agent: ['ann'] } },
        { serialNumber: 'SN-GONE', where: { Agent: ['bob'] } },
        { serialNumber: 'SN-OFFICE' },
      ]);
      const reports = await run(only, [feed]);
      expect(server.requests).toBe(1);
      expect(reports.map((r) => [r.chatbot, r.outcome])).toEqual([
        ['SN-ANN', 'ok'],
        ['SN-GONE', 'failed'],
        ['SN-OFFICE', 'ok'],
      ]);
      expect(reports[1]!.message).toContain('could not be paged');
      expect(await held(only, 'SN-ANN')).toEqual(mls(1, 3));
      expect(await held(only, 'SN-OFFICE')).toEqual(mls(1, 2, 3, 4));
      // committed for the healthy lanes, nothing for the failed one
      expect((await env.store.getAll(fingerprintNamespace('brokerage>SN-ANN'))).size).toBe(2);
      expect((await env.store.getAll(fingerprintNamespace('brokerage>SN-OFFICE'))).size).toBe(4);
      expect((await env.store.getAll(fingerprintNamespace('brokerage>SN-GONE'))).size).toBe(0);
    } finally {
      await only.close();
    }
  });
});

describe('several feeds of one chatbot run together', () => {
  it('page its list once: a no-change rerun of three feeds makes one paging of list calls, and each feed deletes only its own', async () => {
    const sn = 'SN-THREE';
    const feeds = [0, 1, 2].map((f) => {
      const name = `part-${f}.csv`;
      return {
        name,
        feed: FeedConfig.parse({ name: `part-${f}`, chatbot: sn, source: { kind: 'csv', path: name }, mapping, deletes: { maxFraction: 1, batchSize: 10 } }),
        data: rows(30, 1 + f * 30),
      };
    });
    for (const f of feeds) await env.writeFeed(f.data, f.name);
    const first = await run(
      te,
      feeds.map((f) => f.feed),
    );
    expect(first.map((r) => r.counts.created)).toEqual([30, 30, 30]);

    const listed = async () => total(await requests(te, 'RealEstateList'));
    const before = await listed();
    const rerun = await run(
      te,
      feeds.map((f) => f.feed),
    );
    // 90 listings at 20 a page: pages 1-5, the fifth short; once for the three feeds, not three times
    expect((await listed()) - before).toBe(5);
    expect(rerun.map((r) => [r.outcome, r.counts.unchanged, r.counts.created + r.counts.updated + r.counts.deleted])).toEqual([
      ['ok', 30, 0],
      ['ok', 30, 0],
      ['ok', 30, 0],
    ]);

    // the middle feed drops a record: only it deletes, and only its own listing
    await env.writeFeed(feeds[1]!.data.slice(1), feeds[1]!.name);
    const dropped = await run(
      te,
      feeds.map((f) => f.feed),
    );
    expect(dropped.map((r) => r.counts.deleted)).toEqual([0, 1, 0]);
    // the listings of the other two feeds, left alone by each
    expect(dropped.map((r) => r.counts.otherFeeds)).toEqual([60, 60, 60]);
    expect((await te.listings(sn)).length).toBe(89);
  });
});
