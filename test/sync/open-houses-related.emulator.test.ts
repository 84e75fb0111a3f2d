// Open houses on incremental and EntityEvent runs (issue 40, points 3, 4, 6), over HTTP, on a fixed
// clock:
// - `source.related: [OpenHouse]` against a server that enforces MLS Grid's rules for the OpenHouse
//   resource (test/helpers/vendor-server.ts cites docs.mlsgrid.com and the RESO Data Dictionary: one
//   OriginatingSystemName term, only searchable fields, MlgCanView, 2 requests a second): an open
//   house added, cancelled by status and by MlgCanView, and ended by the clock, each with no Property
//   change, updates exactly its listings; a no-change run asks OpenHouse once and writes nothing.
// - routed to two chatbots, one of whose writes fail on the run an open house is cancelled: that
//   chatbot's lane keeps its own copy of the open houses (and its mark), so the next run updates it.
// - `expandOpenHouse` (Trestle-like, test/helpers/reso-server.ts) on incremental and EntityEvent
//   runs: the last open house ended, the record unchanged and not pulled again: the listing is
//   updated at the next run, then left alone.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { refusingWritesOf } from '../helpers/refusing-proxy.js';
import { startResoServer } from '../helpers/reso-server.js';
import { startVendorServer } from '../helpers/vendor-server.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';
import { at, SAT, SAT_TEXT, SUN, SUN_TEXT } from './helpers/open-house-slots.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const TOKEN = 'mlsgrid-token-0c1d';

const tours = async () => {
  const held = await te.listings(SN);
  return Object.fromEntries(
    held
      .filter((l) => l.Tours !== undefined)
      .map((l) => [l.MLSNumber, [l.Tours, l.ExtensionColumn?.find((e) => e.Key === 'OpenHouses')?.value]]),
  );
};
const mapping = { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } };
/** an MLS Grid feed with the OpenHouse resource replicated, incrementally, in Chicago's time */
const mlsGridFeed = (url: string) => ({
  source: {
    kind: 'reso',
    vendor: 'mlsgrid',
    url,
    bearerToken: TOKEN,
    originatingSystem: 'actris',
    incremental: true,
    related: ['OpenHouse'],
    timeZone: 'America/Chicago',
  },
  mapping,
  deletes: { maxFraction: 0.5 },
});
/** an OpenHouse record of MLS Grid's for the listing `r` */
const openHouseOf = (key: string, r: Record<string, unknown>, times: object) => ({
  OpenHouseKey: key,
  ListingKey: r.ListingKey,
  ListingId: r.ListingId,
  OriginatingSystemName: 'actris',
  MlgCanView: true,
  ModificationTimestamp: '2026-11-01T00:00:00Z',
  ...times,
});

/** a run and the writes it made */
async function run(
  feed: FeedConfig,
  iso: string,
): Promise<{ report: SyncReport; writes: { create: number; update: number; delete: number } }> {
  const before = await writeCounts(te);
  const report = await env.sync(te, feed, at(iso));
  expect(report.outcome, report.message).toBe('ok');
  const after = await writeCounts(te);
  return {
    report,
    writes: {
      create: after.create - before.create,
      update: after.update - before.update,
      delete: after.delete - before.delete,
    },
  };
}

describe('open houses from the OpenHouse resource (MLS Grid rules)', () => {
  it('added, cancelled (status, MlgCanView) and ended with no Property change: exactly those listings updated; a no-change run asks OpenHouse once', async () => {
    const records: Record<string, unknown>[] = generateResoRecords(6, { seed: 8 }).map((r) => ({
      ...r,
      StandardStatus: 'Active',
      OriginatingSystemName: 'actris',
      MlgCanView: true,
    }));
    const [a, b, c] = records;
    const oh = openHouseOf;
    const s = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records,
        token: TOKEN,
        originatingSystem: 'actris',
        related: { OpenHouse: [oh('oh-a1', a!, SAT), oh('oh-a2', a!, SUN), oh('oh-c1', c!, SAT)] },
      }),
    );
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      ...mlsGridFeed(s.url),
    });
    const A = String(a!.ListingId);
    const B = String(b!.ListingId);
    const C = String(c!.ListingId);

    const first = await run(feed, '2026-11-27T12:00:00Z');
    expect(first.writes.create).toBe(records.length);
    expect(await tours()).toEqual({ [A]: ['OpenHouse', `${SAT_TEXT}; ${SUN_TEXT}`], [C]: ['OpenHouse', SAT_TEXT] });
    expect(first.report.source.requestsBy?.OpenHouse).toBe(1);

    // nothing changed, nothing ended: one OpenHouse request, no fetch by key, no write
    const quiet = await run(feed, '2026-11-27T13:00:00Z');
    expect(quiet.report.source.requestsBy?.OpenHouse).toBe(1);
    expect(quiet.report.source.requestsBy?.byKey).toBeUndefined();
    expect(quiet.writes).toEqual({ create: 0, update: 0, delete: 0 });

    // in the OpenHouse resource only: one added to b, a's Saturday cancelled, c's gone by MlgCanView
    const property = JSON.stringify(s.records);
    s.addRelated('OpenHouse', oh('oh-b1', b!, SUN));
    s.touchRelated('OpenHouse', 'oh-a1', { OpenHouseStatus: 'Cancelled' });
    s.touchRelated('OpenHouse', 'oh-c1', { MlgCanView: false });
    const changed = await run(feed, '2026-11-27T14:00:00Z');
    expect(JSON.stringify(s.records)).toBe(property);
    expect(changed.writes).toEqual({ create: 0, update: 3, delete: 0 });
    expect(await tours()).toEqual({ [A]: ['OpenHouse', SUN_TEXT], [B]: ['OpenHouse', SUN_TEXT] });
    expect(changed.report.source.requestsBy?.OpenHouse).toBe(1);
    expect(changed.report.source.requestsBy?.byKey).toBe(1);

    // Sunday's has ended: nothing changed at the source, a and b lose it at the next run
    const ended = await run(feed, '2026-11-29T20:00:00Z');
    expect(ended.writes).toEqual({ create: 0, update: 2, delete: 0 });
    expect(await tours()).toEqual({});
    expect(ended.report.source.requestsBy?.OpenHouse).toBe(1);

    // and after that, nothing to do
    const after = await run(feed, '2026-11-29T21:00:00Z');
    expect(after.writes).toEqual({ create: 0, update: 0, delete: 0 });
    expect(after.report.source.requestsBy?.OpenHouse).toBe(1);
    expect(after.report.source.requestsBy?.byKey).toBeUndefined();
    expect(s.refused).toEqual([]);
    expect(s.tooMany).toEqual([]);
    expect((await te.listings(SN)).length).toBe(records.length);
  });
});

describe('expanded open houses that end on incremental and EntityEvent runs', () => {
  it.each([['timestamps'], ['entityEvent']] as const)(
    'changes by %s: the ended one leaves its listing at the next run, the record unchanged',
    async (changes) => {
      const records: Record<string, unknown>[] = generateResoRecords(6, { seed: 9 }).map((r) => ({
        ...r,
        StandardStatus: 'Active',
        OpenHouse: [],
      }));
      const [a, b] = records;
      a!.OpenHouse = [{ OpenHouseKey: 'oh-1', ...SAT }];
      b!.OpenHouse = [
        { OpenHouseKey: 'oh-2', ...SAT },
        { OpenHouseKey: 'oh-3', ...SUN },
      ];
      const server = emulator.closeAfterTest(
        await startResoServer({ records, maxPageSize: 10, entityEvents: changes === 'entityEvent' }),
      );
      const feed = FeedConfig.parse({
        name: 'mls',
        chatbot: SN,
        source: {
          kind: 'reso',
          url: server.url,
          incremental: true,
          changes,
          expandOpenHouse: true,
          timeZone: 'America/Chicago',
          retries: 1,
          timeoutMs: 10_000,
        },
        mapping,
        deletes: { maxFraction: 0.5 },
      });
      const first = await run(feed, '2026-11-27T12:00:00Z');
      expect(first.writes.create).toBe(records.length);
      expect(await tours()).toEqual({
        [String(a!.ListingId)]: ['OpenHouse', SAT_TEXT],
        [String(b!.ListingId)]: ['OpenHouse', `${SAT_TEXT}; ${SUN_TEXT}`],
      });
      const quiet = await run(feed, '2026-11-27T13:00:00Z');
      expect(quiet.writes).toEqual({ create: 0, update: 0, delete: 0 });
      expect(quiet.report.source.requestsBy?.byKey).toBeUndefined();

      // Saturday's ended: a loses Tours, b keeps Sunday's; no record changed at the server
      const ended = await run(feed, '2026-11-28T22:00:00Z');
      expect(ended.writes).toEqual({ create: 0, update: 2, delete: 0 });
      expect(await tours()).toEqual({ [String(b!.ListingId)]: ['OpenHouse', SUN_TEXT] });
      expect(ended.report.source.requestsBy?.byKey).toBe(1);
      const later = await run(feed, '2026-11-28T23:00:00Z');
      expect(later.writes).toEqual({ create: 0, update: 0, delete: 0 });
      const last = await run(feed, '2026-11-29T20:00:00Z');
      expect(last.writes).toEqual({ create: 0, update: 1, delete: 0 });
      expect(await tours()).toEqual({});
    },
  );
});

describe('open houses of a routed feed, one chatbot failing', () => {
  it('a chatbot whose writes failed when an open house was cancelled gets the update next run; the other is not written again', async () => {
    const records: Record<string, unknown>[] = generateResoRecords(4, { seed: 11 }).map((r) => ({
      ...r,
      StandardStatus: 'Active',
      OriginatingSystemName: 'actris',
      MlgCanView: true,
    }));
    const keys = records.map((r) => String(r.ListingKey));
    const ohOf = (i: number) => openHouseOf(`oh-${i}`, records[i]!, SAT);
    const s = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records,
        token: TOKEN,
        originatingSystem: 'actris',
        related: { OpenHouse: [ohOf(0), ohOf(2)] },
      }),
    );
    const feed = FeedConfig.parse({
      name: 'routed',
      chatbots: [
        { serialNumber: 'SN-ONE', where: { ListingKey: keys.slice(0, 2) } },
        { serialNumber: 'SN-TWO', where: { ListingKey: keys.slice(2) } },
      ],
      ...mlsGridFeed(s.url),
    });
    const sync = async (target: TestEmulator, iso: string): Promise<SyncReport[]> => {
      const calls = createCallCounter();
      const apiConfig = ApiConfig.parse({
        baseUrl: target.url,
        secretKey: 'x',
        sessionKey: 'y',
        concurrency: 4,
        pageSize: 20,
        retries: 1,
      });
      const api = target.client({ onCall: calls.onCall, retry: { retries: 1 } });
      return runSync(
        lanesOf(feed),
        { api, store: env.store, configFeeds: [feed], logger: silentLogger, baseDir: env.dir, apiConfig, calls },
        {},
        { now: () => new Date(iso) },
      );
    };
    const toursIn = async (sn: string) =>
      (await te.listings(sn)).filter((l) => l.Tours !== undefined).map((l) => l.MLSNumber);
    expect((await sync(te, '2026-11-27T12:00:00Z')).map((r) => r.outcome)).toEqual(['ok', 'ok']);
    expect([await toursIn('SN-ONE'), await toursIn('SN-TWO')]).toEqual([
      [String(records[0]!.ListingId)],
      [String(records[2]!.ListingId)],
    ]);

    // both cancelled in the OpenHouse resource; SN-TWO's writes are refused this run
    s.touchRelated('OpenHouse', 'oh-0', { OpenHouseStatus: 'Cancelled' });
    s.touchRelated('OpenHouse', 'oh-2', { OpenHouseStatus: 'Cancelled' });
    const proxy = emulator.closeAfterTest(await refusingWritesOf(te.url, 'SN-TWO'));
    const second = await sync(
      { ...te, url: proxy.url, client: (o) => te.client({ ...o, baseUrl: proxy.url }) },
      '2026-11-27T13:00:00Z',
    );
    expect(second.map((r) => r.outcome === 'ok')).toEqual([true, false]);
    expect([await toursIn('SN-ONE'), await toursIn('SN-TWO')]).toEqual([[], [String(records[2]!.ListingId)]]);

    // the next run: SN-TWO's copy still holds oh-2, so its listing is fetched and updated; SN-ONE is not written
    const third = await sync(te, '2026-11-27T14:00:00Z');
    expect(third.map((r) => [r.chatbot, r.outcome, r.counts.updated])).toEqual([
      ['SN-ONE', 'ok', 0],
      ['SN-TWO', 'ok', 1],
    ]);
    expect([await toursIn('SN-ONE'), await toursIn('SN-TWO')]).toEqual([[], []]);
    expect(s.refused).toEqual([]);
  }, 60_000);
});
