// Issue 49, point 2: a lookup never answers a question it did not ask. Every by-key lookup of a RESO
// feed (a push's keys, an EntityEvent poll's, a full pull's absences confirmed, a reconcile's
// changed keys, an incremental run's listings whose open houses changed in the OpenHouse resource:
// src/feeds/reso/reso-confirm.ts) types the key by the server's `$metadata`. A
// `$metadata` that does not list the key field in the entity type, or types it `Edm.Int64` while the
// keys are text, made the lookup ask nothing and answer "gone": a push of three keys the source and
// the chatbot both hold deleted all three; a full pull that missed a record deleted it, outcome ok.
//
// Such a `$metadata` is the server's mistake, not the records': in CSDL an entity type's key is a
// `PropertyRef` whose Name "refers to the name of a Property defined in the declaring EntityType"
// (MC-CSDL 2.1.6 PropertyRef, https://learn.microsoft.com/en-us/openspecs/windows_protocols/mc-csdl/6d3ed37e-1d92-417e-bbed-96433d932526),
// and the feed's records carry the key we ask for. So the lookup asks anyway, the key quoted as text
// (an OData string literal); a server that refuses that query fails the step, and nothing is
// deleted. Over real HTTP: test/helpers/reso-server.ts (`metadataOf` rewrites the Property fields
// its `$metadata` announces; `types` makes its filter refuse a quoted literal on a numeric field, as
// ASP.NET OData does) into the emulator.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { TestEmulator } from '../helpers/emulator.js';
import type { Row } from '../helpers/odata-filter.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { pushedAsk, reconcileAsk } from '../../src/feeds/reso/reso-asks.js';
import { at, SAT, SAT_TEXT, SUN, SUN_TEXT } from './helpers/open-house-slots.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const records = (n: number) => keyedResoRecords(n, 49, { everyMs: 1000 });
const held = async () => new Map((await te.listings(SN)).map((l) => [String(l.MLSNumber), l]));

const feedOf = (url: string, source: Record<string, unknown> = {}) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url, retries: 0, timeoutMs: 10_000, maxPageSize: 5, photosTimestampField: null, ...source },
    mapping: {
      preset: 'reso',
      fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
    },
    deletes: { maxFraction: 1, maxCount: 100 },
  });

/** The two thin `$metadata`s of the issue. */
const THIN = [
  {
    thin: 'ListingKey missing from the entity type',
    metadataOf: (f: Map<string, string>) => new Map([...f].filter(([k]) => k !== 'ListingKey')),
  },
  {
    thin: 'ListingKey typed Edm.Int64 while the keys are text',
    metadataOf: (f: Map<string, string>) => new Map([...f, ['ListingKey', 'Edm.Int64']]),
  },
];

/** The by-key requests the server received (a filter naming the key with eq). */
const byKey = (server: ResoServer) => server.requests.filter((r) => r.filter?.includes('ListingKey eq'));

/** Hide `key` from every request but the by-key ones: a pull that misses a record the server still has. */
function missedByPulls(server: ResoServer, all: Row[], key: unknown): void {
  server.beforePage = (n, s) => {
    const asked = s.requests[n - 1]!;
    s.records = asked.filter?.includes('ListingKey eq') ? all : all.filter((r) => r.ListingKey !== key);
  };
}

describe.each(THIN)('$metadata with $thin: the lookup asks anyway, quoted', ({ metadataOf }) => {
  it('push: three pushed keys the source still holds are fetched and kept (one changed is updated), none deleted', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(10), maxPageSize: 5, entityEvents: true }),
    );
    const feed = feedOf(server.url, { incremental: true, changes: 'entityEvent' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.metadataOf = metadataOf;
    server.touch('K-02', { ListPrice: 222_222 });
    const pushed = await env.sync(te, feed, {
      ask: pushedAsk({ keys: ['K-01', 'K-02', 'K-03'], media: [], events: 3 }),
    });
    expect(pushed.outcome, pushed.message).toBe('ok');
    expect(pushed.counts.deleted).toBe(0);
    expect(pushed.counts.updated).toBe(1);
    expect(pushed.source.events).toMatchObject({ keys: 3, fetched: 3, gone: 0 });
    const now = await held();
    expect(now.size).toBe(10);
    expect(now.get('K-02')!.SalePrice).toBe(222_222);
    expect(byKey(server).some((r) => r.filter!.includes("ListingKey eq 'K-01'"))).toBe(true);
  });

  it('EntityEvent: events of records still there delete nothing; a record really gone still goes', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: records(10), maxPageSize: 5, entityEvents: true }),
    );
    const feed = feedOf(server.url, { incremental: true, changes: 'entityEvent' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.metadataOf = metadataOf;
    for (const k of ['K-01', 'K-02', 'K-03']) server.event(k);
    server.remove('K-04');
    const poll = await env.sync(te, feed);
    expect(poll.outcome, poll.message).toBe('ok');
    expect(poll.source.events).toMatchObject({ keys: 4, fetched: 3, gone: 1 });
    expect(poll.counts.deleted).toBe(1);
    const now = await held();
    expect([...now.keys()].sort()).toEqual(
      records(10)
        .map((r) => String(r.ListingKey))
        .filter((k) => k !== 'K-04'),
    );
  });

  it('confirmation: a record the full pull missed is asked for and kept; one really gone is deleted', async () => {
    const all = records(12);
    const server = emulator.closeAfterTest(await startResoServer({ records: all, maxPageSize: 5 }));
    const feed = feedOf(server.url);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.metadataOf = metadataOf;
    const rest = all.filter((r) => r.ListingKey !== 'K-06');
    server.records = rest;
    missedByPulls(server, rest, 'K-05');
    const next = await env.sync(te, feed);
    expect(next.counts.deleted, next.message).toBe(1);
    const now = await held();
    expect(now.has('K-05')).toBe(true);
    expect(now.has('K-06')).toBe(false);
    expect(next.message ?? '').toMatch(/paging missed 1 record.*K-05/);
  });

  it('reconcile: a changed key is fetched and updated, not taken for gone; a record really gone is deleted', async () => {
    const server = emulator.closeAfterTest(await startResoServer({ records: records(10), maxPageSize: 5 }));
    const feed = feedOf(server.url, { incremental: true });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.metadataOf = metadataOf;
    server.touch('K-03', { ListPrice: 333_333, ModificationTimestamp: new Date(Date.now() - 60_000).toISOString() });
    server.remove('K-07');
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.counts.deleted).toBe(1);
    expect(reconcile.counts.updated).toBe(1);
    const now = await held();
    expect(now.get('K-03')!.SalePrice).toBe(333_333);
    expect(now.has('K-07')).toBe(false);
  });

  it('open houses (OpenHouse resource): listings whose open houses changed with no Property change are fetched and updated, none dropped or deleted', async () => {
    const all = records(6);
    const oh = (key: string, r: Row, times: object) => ({
      OpenHouseKey: key,
      ListingKey: r.ListingKey,
      ListingId: r.ListingId,
      ModificationTimestamp: '2026-11-01T00:00:00Z',
      ...times,
    });
    const server = emulator.closeAfterTest(
      await startResoServer({
        records: all,
        maxPageSize: 5,
        related: { OpenHouse: [oh('oh-1', all[0]!, SAT), oh('oh-3', all[2]!, SUN)] },
      }),
    );
    server.metadataOf = metadataOf;
    const feed = feedOf(server.url, { incremental: true, related: ['OpenHouse'], timeZone: 'America/Chicago' });
    const tours = async () =>
      Object.fromEntries(
        [...(await held())].filter(([, l]) => l.Tours !== undefined).map(([k, l]) => [k, l.ExtensionColumn]),
      );
    const toursText = async () =>
      Object.fromEntries(
        Object.entries(await tours()).map(([k, ext]) => [
          k,
          (ext as Array<{ Key: string; value: unknown }> | undefined)?.find((e) => e.Key === 'OpenHouses')?.value,
        ]),
      );
    const first = await env.sync(te, feed, at('2026-11-27T12:00:00Z'));
    expect(first.outcome, first.message).toBe('ok');
    expect(await toursText()).toEqual({ 'K-01': SAT_TEXT, 'K-03': SUN_TEXT });

    // in the OpenHouse resource only: one added to K-02, K-01's cancelled
    const property = JSON.stringify(server.records);
    server.related.OpenHouse!.push(oh('oh-2', all[1]!, { ...SUN, ModificationTimestamp: new Date().toISOString() }));
    server.touchRelated('OpenHouse', 'oh-1', { OpenHouseStatus: 'Cancelled' });
    const next = await env.sync(te, feed, at('2026-11-27T13:00:00Z'));
    expect(JSON.stringify(server.records)).toBe(property);
    expect(next.outcome, next.message).toBe('ok');
    expect(next.counts).toMatchObject({ updated: 2, deleted: 0 });
    expect(await toursText()).toEqual({ 'K-02': SUN_TEXT, 'K-03': SUN_TEXT });
    expect((await held()).size).toBe(6);
    expect(byKey(server).some((r) => r.filter!.includes("ListingKey eq 'K-02'"))).toBe(true);
  });
});

// (a push or poll that could fetch nothing read nothing of the feed: `failed`, as any read that could
// use nothing (sync/report/lane-report.ts laneOutcome); a pull whose absences could not be asked: `partial`)
describe('a server that refuses the quoted key fails the step: nothing deleted, the run saying why', () => {
  /** numeric keys (the server compares ListingKey as Edm.Int64: a quoted literal is a 400), and a $metadata without ListingKey */
  const numeric = (n: number) => records(n).map((r, i) => ({ ...r, ListingKey: 1001 + i }));
  const start = async (data: Row[]) => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 5, entityEvents: true, types: { ListingKey: 'Edm.Int64' } }),
    );
    server.metadataOf = THIN[0]!.metadataOf;
    return server;
  };

  it('push', async () => {
    const server = await start(numeric(6));
    const feed = feedOf(server.url, { incremental: true, changes: 'entityEvent' });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    const pushed = await env.sync(te, feed, { ask: pushedAsk({ keys: ['1001', '1002'], media: [], events: 2 }) });
    expect(pushed.outcome, pushed.message).toBe('failed');
    expect(pushed.counts.deleted).toBe(0);
    expect(pushed.message).toMatch(
      /does not list ListingKey in the entity type, so its keys were asked for as text \(quoted\), and the server refused that \(the server answered HTTP 400/,
    );
    expect((await held()).size).toBe(6);
  });

  it('confirmation', async () => {
    const all = numeric(12);
    const server = await start(all);
    const feed = feedOf(server.url);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    missedByPulls(server, all, 1005);
    const next = await env.sync(te, feed);
    expect(next.outcome).toBe('partial');
    expect(next.counts.deleted).toBe(0);
    expect(next.message).toMatch(
      /delete\(s\) withheld.*could not be confirmed.*does not list ListingKey in the entity type, so its keys were asked for as text \(quoted\), and the server refused that/,
    );
    expect((await held()).size).toBe(12);
  });
});
