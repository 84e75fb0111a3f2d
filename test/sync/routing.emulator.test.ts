// The chatbot as the unit (issue 26), over real HTTP: one feed routed to several chatbots by
// `where` is pulled once (a feed server counts the requests) and each chatbot holds exactly what
// its where selects; an agent change moves a listing; a chatbot that cannot be synced fails alone,
// and of an incremental RESO feed, a chatbot whose writes fail keeps its mark and gets what it
// missed next run;
// three feeds of one chatbot run together page its list once (the emulator counts list calls).
import { afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { fingerprintNamespace, MARK_NAMESPACE } from '../../src/sync/model/state-names.js';
import { lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js';
import { startResoServer } from '../helpers/reso-server.js';
import { refusingWritesOf } from '../helpers/refusing-proxy.js';
import { COLUMNS, csv, requests, row, rows, total, useEmulatorSync, type Row, type SyncEnv } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
const servers: FeedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The test columns and an agent and office per row (sources the routing reads, not mapped). */
function agentCsv(data: Array<Row & { Agent: string; Office: string }>): string {
  return csv(data, [...COLUMNS, 'Agent', 'Office']);
}

const mapping = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

function routedFeed(url: string, chatbots: unknown[]): FeedConfig {
  return FeedConfig.parse({
    name: 'brokerage',
    chatbots,
    source: { kind: 'csv', url },
    mapping,
    deletes: { maxFraction: 1, batchSize: 10 },
  });
}

async function run(target: TestEmulator, feeds: FeedConfig[], patch: Partial<ApiConfig> = {}): Promise<SyncReport[]> {
  const calls = createCallCounter();
  const apiConfig = ApiConfig.parse({
    baseUrl: target.url,
    secretKey: 'x',
    sessionKey: 'y',
    concurrency: 4,
    pageSize: 20,
    retries: 1,
    ...patch,
  });
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
      const server = await startFeedServer({
        status: 200,
        body: agentCsv(rows(4).map((r, i) => ({ ...r, Agent: i % 2 ? 'Bob' : 'Ann', Office: 'Main' }))),
      });
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
      // (the fix named: the serial number as the config gives it, where it is written)
      expect(reports[1]!.message).toContain('check that SN-GONE (feeds[].chatbots[].serialNumber) is a chatbot');
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

describe('an incremental RESO feed routed to several chatbots, one of whose writes fail', () => {
  it("keeps that chatbot's mark where it was while the others' advance, and the next run gives it what it missed", async () => {
    const reso = emulator.closeAfterTest(
      await startResoServer({ records: generateResoRecords(12, { seed: 26 }), maxPageSize: 5 }),
    );
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbots: [{ serialNumber: 'SN-A' }, { serialNumber: 'SN-FAIL' }, { serialNumber: 'SN-B' }],
      source: { kind: 'reso', url: reso.url, incremental: true, retries: 1, timeoutMs: 10_000 },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    });
    const marks = async () => {
      const all = await env.store.getAll(MARK_NAMESPACE);
      return Object.fromEntries(['SN-A', 'SN-FAIL', 'SN-B'].map((sn) => [sn, all.get(`mls>${sn}`)]));
    };
    const prices = async (sn: string) =>
      Object.fromEntries((await te.listings(sn)).map((l) => [l.MLSNumber, l.SalePrice ?? l.RentPrice]));

    // a full pull into the three: one mark each, the same
    const first = await run(te, [feed]);
    expect(first.map((r) => [r.chatbot, r.outcome, r.source.mode])).toEqual([
      ['SN-A', 'ok', 'full'],
      ['SN-FAIL', 'ok', 'full'],
      ['SN-B', 'ok', 'full'],
    ]);
    const m1 = await marks();
    expect(m1['SN-A']).toBeDefined();
    expect(new Set(Object.values(m1)).size).toBe(1);
    const before = await prices('SN-FAIL');
    expect(Object.keys(before).length).toBeGreaterThan(0);

    // two listings change, a month apart (so the healthy chatbots' next mark is past the first change);
    // the run goes through a proxy that refuses SN-FAIL's writes
    const changed = Object.keys(before).slice(0, 2);
    for (const [i, id] of changed.entries()) {
      const rec = reso.records.find((r) => String(r.ListingId) === id)!;
      reso.touch(String(rec.ListingKey), {
        ListPrice: 1_000_000 + i,
        ModificationTimestamp: `2025-0${6 + i}-01T00:00:00.000Z`,
      });
    }
    const proxy = emulator.closeAfterTest(await refusingWritesOf(te.url, 'SN-FAIL'));
    const second = await run({ ...te, url: proxy.url, client: (o) => te.client({ ...o, baseUrl: proxy.url }) }, [feed]);
    expect(second.map((r) => [r.chatbot, r.source.mode])).toEqual([
      ['SN-A', 'incremental'],
      ['SN-FAIL', 'incremental'],
      ['SN-B', 'incremental'],
    ]);
    expect(second.map((r) => r.outcome === 'ok')).toEqual([true, false, true]);
    expect(proxy.refused).toBeGreaterThan(0);
    expect([second[0]!.counts.updated, second[2]!.counts.updated]).toEqual([2, 2]);
    // the healthy chatbots' marks advanced past the first change; the failed one's is intact, and it holds the old prices
    const m2 = await marks();
    expect(m2['SN-FAIL']).toBe(m1['SN-FAIL']);
    // (events: 'none': source.changes auto found no EntityEvent log in $metadata at the full pull)
    expect(m2['SN-A']).toBe(JSON.stringify({ ts: '2025-07-01T00:00:00.000Z', events: 'none' }));
    expect(m2['SN-B']).toBe(m2['SN-A']);
    expect(await prices('SN-FAIL')).toEqual(before);
    for (const id of changed) expect((await prices('SN-A'))[id]).toBeGreaterThanOrEqual(1_000_000);

    // the next run reads from the oldest mark (SN-FAIL's): it gets both changes; the others have them already
    const third = await run(te, [feed]);
    expect(third.map((r) => [r.chatbot, r.outcome, r.source.mode, r.counts.updated])).toEqual([
      ['SN-A', 'ok', 'incremental', 0],
      ['SN-FAIL', 'ok', 'incremental', 2],
      ['SN-B', 'ok', 'incremental', 0],
    ]);
    expect(await prices('SN-FAIL')).toEqual(await prices('SN-A'));
    const m3 = await marks();
    expect(new Set(Object.values(m3))).toEqual(new Set([m2['SN-A']]));
  });
});

describe('several feeds of one chatbot run together', () => {
  it('page its list once: a no-change rerun of three feeds makes one paging of list calls, and each feed deletes only its own', async () => {
    const sn = 'SN-THREE';
    const feeds = [0, 1, 2].map((f) => {
      const name = `part-${f}.csv`;
      return {
        name,
        feed: FeedConfig.parse({
          name: `part-${f}`,
          chatbot: sn,
          source: { kind: 'csv', path: name },
          mapping,
          deletes: { maxFraction: 1, batchSize: 10 },
        }),
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
    expect(
      rerun.map((r) => [r.outcome, r.counts.unchanged, r.counts.created + r.counts.updated + r.counts.deleted]),
    ).toEqual([
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

  it('one feed whose source fails does not stop the others, and its listings are left alone', async () => {
    const sn = 'SN-ONE-FAILS';
    const server = await startFeedServer({ status: 200, body: csv(rows(10, 101)) });
    servers.push(server);
    await env.writeFeed(rows(10, 1), 'first.csv');
    await env.writeFeed(rows(10, 201), 'third.csv');
    const feeds = [
      FeedConfig.parse({ name: 'first', chatbot: sn, source: { kind: 'csv', path: 'first.csv' }, mapping }),
      FeedConfig.parse({ name: 'served', chatbot: sn, source: { kind: 'csv', url: server.url, retries: 0 }, mapping }),
      FeedConfig.parse({ name: 'third', chatbot: sn, source: { kind: 'csv', path: 'third.csv' }, mapping }),
    ];
    expect((await run(te, feeds)).map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok']);

    // the served feed's source breaks; the two others change
    server.answer = { status: 500, body: 'down' };
    await env.writeFeed(rows(11, 1), 'first.csv');
    await env.writeFeed(rows(11, 201), 'third.csv');
    const reports = await run(te, feeds);
    expect(reports.map((r) => [r.feed, r.outcome === 'ok', r.counts.created, r.counts.deleted])).toEqual([
      ['first', true, 1, 0],
      ['served', false, 0, 0],
      ['third', true, 1, 0],
    ]);
    expect((await te.listings(sn)).length).toBe(32);
  });
});
