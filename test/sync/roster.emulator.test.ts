// The MLS roster beside Property (issue 40, points 2, 4, 6; source.related: [Member, Office]), over
// HTTP against test/helpers/vendor-server.ts, which enforces each vendor's documented rules for
// Member and Office (its header cites them): every listing carries its agent's and office's contact
// from the roster, or from its own fields where the roster has no record; an agent's phone changed
// in Member alone updates exactly that agent's listings at the next run; a no-change run asks one
// request per resource; MLS Grid's OriginatingSystemName term on every request and MlgCanView on
// Member (false: the agent goes from the store, its listings fall back to their own fields);
// routing by agent key goes on working.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import { requestsLine } from '../../src/sync/report/report-format.js';
import { rosterNamespace } from '../../src/feeds/reso/reso-roster.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startVendorServer, type VendorServer } from '../helpers/vendor-server.js';
import { refusingWritesOf } from '../helpers/refusing-proxy.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const TOKEN = 'roster-token-51c2';
const OAUTH = { clientId: 'trestle-client', clientSecret: 'trestle-secret-4411' };
const T0 = '2026-11-01T00:00:00.000Z';
const AGENTS = ['A1', 'A2', 'A3'];
const OFFICES = ['O1', 'O2'];

/** 9 listings: agent A1, A2, A3 in turn (the last names A9, whom the roster lacks), office O1, O2 in turn; their own contact fields stale. */
function listings(): Record<string, unknown>[] {
  return generateResoRecords(9, { seed: 40 }).map((r, i) => ({
    ...r,
    StandardStatus: 'Active',
    OriginatingSystemName: 'actris',
    MlgCanView: true,
    ListAgentKey: i === 8 ? 'A9' : AGENTS[i % 3],
    ListAgentFullName: 'Own Agent',
    ListAgentPreferredPhone: '555-0000',
    ListOfficeKey: OFFICES[i % 2],
    ListOfficeName: 'Own Office',
  }));
}

const members = () =>
  AGENTS.map((k, i) => ({
    MemberKey: k,
    MemberFullName: `Agent ${k}`,
    MemberPreferredPhone: `512-555-010${i}`,
    MemberEmail: `${k.toLowerCase()}@broker.test`,
    ModificationTimestamp: T0,
    OriginatingSystemName: 'actris',
    MlgCanView: true,
  }));
const offices = () =>
  OFFICES.map((k) => ({
    OfficeKey: k,
    OfficeName: `Office ${k}`,
    OfficePhone: '512-555-0900',
    ModificationTimestamp: T0,
    OriginatingSystemName: 'actris',
    MlgCanView: true,
  }));

/** each listing's agent and office entries, by ListingId */
async function contacts(sn = SN): Promise<Record<string, Record<string, string | undefined>>> {
  const out: Record<string, Record<string, string | undefined>> = {};
  for (const l of await te.listings(sn)) {
    const e = Object.fromEntries((l.ExtensionColumn ?? []).map((x) => [x.Key, x.value]));
    out[l.MLSNumber] = { name: e.ListAgentName, phone: e.ListAgentPhone, office: e.ListOfficeName };
  }
  return out;
}

/** requests the server received since `from`, by resource */
function byResource(s: VendorServer, from: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of s.requests.slice(from)) {
    const resource = new URL(r.url, s.origin).pathname.split('/').pop()!;
    out[resource] = (out[resource] ?? 0) + 1;
  }
  return out;
}

describe('source.related: Member and Office (MLS Grid rules)', () => {
  it("every listing carries its roster contact; a phone changed in Member alone updates exactly that agent's listings; a no-change run is one request per resource; MlgCanView false drops the agent", async () => {
    const records = listings();
    const s = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records,
        token: TOKEN,
        originatingSystem: 'actris',
        related: { Member: members(), Office: offices() },
      }),
    );
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        vendor: 'mlsgrid',
        url: s.url,
        bearerToken: TOKEN,
        originatingSystem: 'actris',
        incremental: true,
        changes: 'timestamps',
        related: ['Member', 'Office'],
      },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 0.5 },
    });
    const id = (i: number) => String(records[i]!.ListingId);

    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    const held = await contacts();
    expect(Object.keys(held)).toHaveLength(9);
    for (let i = 0; i < 8; i++) {
      const a = AGENTS[i % 3]!;
      expect(held[id(i)]).toEqual({
        name: `Agent ${a}`,
        phone: `512-555-010${i % 3}`,
        office: `Office ${OFFICES[i % 2]}`,
      });
    }
    // A9 is not in the roster: the listing's own fields
    expect(held[id(8)]).toEqual({ name: 'Own Agent', phone: '555-0000', office: 'Office O1' });
    // the first pull pages each resource once; every request carried the MLS, none refused, no 429
    expect(byResource(s, 0)).toMatchObject({ Member: 1, Office: 1 });
    expect(first.source.requestsBy).toMatchObject({ Member: 1, Office: 1 });
    expect(s.requests.every((r) => decodeURIComponent(r.url).includes("OriginatingSystemName eq 'actris'"))).toBe(true);
    expect(
      s.requests
        .filter((r) => r.url.includes('/Member') && !r.url.includes('ModificationTimestamp'))
        .every((r) => decodeURIComponent(r.url).includes('MlgCanView eq true')),
    ).toBe(true);
    expect([s.refused, s.tooMany]).toEqual([[], []]);

    // A1's phone changes in Member only: A1's three listings are updated, nothing else
    s.touchRelated('Member', 'A1', { MemberPreferredPhone: '512-555-7777' });
    const before = await writeCounts(te);
    const mark = s.requests.length;
    const second = await env.sync(te, feed);
    expect(second.outcome, second.message).toBe('ok');
    const after = await writeCounts(te);
    expect([after.update - before.update, after.create - before.create, after.delete - before.delete]).toEqual([
      3, 0, 0,
    ]);
    const now = await contacts();
    for (const i of [0, 3, 6]) expect(now[id(i)]!.phone).toBe('512-555-7777');
    for (const i of [1, 2, 4, 5, 7, 8]) expect(now[id(i)]).toEqual(held[id(i)]);
    // MLS Grid cannot filter Property on ListAgentKey: $metadata (the key's type), one keys-only read, then the listings by ListingId (5 a request)
    expect(byResource(s, mark)).toEqual({ Member: 1, Office: 1, Property: 3, $metadata: 1 });
    expect([s.refused, s.tooMany]).toEqual([[], []]);

    // nothing changed: one request per resource
    const idle = s.requests.length;
    const third = await env.sync(te, feed);
    expect(third.outcome, third.message).toBe('ok');
    expect(byResource(s, idle)).toEqual({ Property: 1, Member: 1, Office: 1 });
    expect(third.source.requests).toBe(3);
    expect(third.source.requestsBy).toEqual({ pages: 1, Member: 1, Office: 1 });
    expect(requestsLine(third.source)).toBe('3 requests (1 pages, 1 Member, 1 Office)');
    expect((await writeCounts(te)).update).toBe(after.update);

    // A2 may no longer be shown (MlgCanView false): gone from the store, A2's listings fall back to their own fields
    expect(await env.store.get(rosterNamespace('mls', 'Member'), 'A2')).toBeDefined();
    s.touchRelated('Member', 'A2', { MlgCanView: false });
    const fourth = await env.sync(te, feed);
    expect(fourth.outcome, fourth.message).toBe('ok');
    expect(await env.store.get(rosterNamespace('mls', 'Member'), 'A2')).toBeUndefined();
    const fallen = await contacts();
    for (const i of [1, 4, 7])
      expect(fallen[id(i)]).toEqual({ name: 'Own Agent', phone: '555-0000', office: `Office ${OFFICES[i % 2]}` });
    expect(fallen[id(0)]!.name).toBe('Agent A1');
    expect([s.refused, s.tooMany]).toEqual([[], []]);
  }, 60_000);
});

describe('source.related routed by agent key (Trestle rules)', () => {
  it('where: ListAgentKey keeps routing; a renamed office reaches its listings in both chatbots, asked by ListOfficeKey; a chatbot whose writes failed gets it next run', async () => {
    const records = listings();
    const s = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'trestle',
        records,
        oauth: OAUTH,
        related: { Member: members(), Office: offices() },
      }),
    );
    const feed = FeedConfig.parse({
      name: 'routed',
      chatbots: [
        { serialNumber: 'SN-A1', where: { ListAgentKey: ['A1'] } },
        { serialNumber: 'SN-REST', where: { ListAgentKey: ['A2', 'A3', 'A9'] } },
      ],
      source: {
        kind: 'reso',
        vendor: 'trestle',
        url: s.url,
        auth: { tokenUrl: s.tokenUrl, ...OAUTH },
        incremental: true,
        changes: 'timestamps',
        related: ['Member', 'Office'],
      },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 0.5 },
    });
    const run = async (target: TestEmulator = te): Promise<SyncReport[]> => {
      const calls = createCallCounter();
      const apiConfig = ApiConfig.parse({
        baseUrl: target.url,
        secretKey: 'x',
        sessionKey: 'y',
        concurrency: 4,
        pageSize: 20,
        retries: 1,
      });
      return runSync(lanesOf(feed), {
        api: target.client({ onCall: calls.onCall, retry: { retries: 1 } }),
        store: env.store,
        configFeeds: [feed],
        logger: silentLogger,
        baseDir: env.dir,
        apiConfig,
        calls,
      });
    };
    const a1 = records.filter((r) => r.ListAgentKey === 'A1').map((r) => String(r.ListingId));
    const o2 = new Set(records.filter((r) => r.ListOfficeKey === 'O2').map((r) => String(r.ListingId)));
    const officesOf = async (sn: string) =>
      Object.fromEntries(Object.entries(await contacts(sn)).map(([mls, c]) => [mls, c.office]));
    const expected = (held: Record<string, unknown>, name: string) =>
      Object.fromEntries(Object.keys(held).map((mls) => [mls, o2.has(mls) ? name : 'Office O1']));

    expect((await run()).map((r) => r.outcome)).toEqual(['ok', 'ok']);
    expect(Object.keys(await contacts('SN-A1')).sort()).toEqual(a1.sort());
    expect(Object.keys(await contacts('SN-REST'))).toHaveLength(9 - a1.length);
    expect(Object.values(await contacts('SN-A1')).every((c) => c.name === 'Agent A1')).toBe(true);

    // O2 renamed in Office only; SN-REST's writes are refused this run
    s.touchRelated('Office', 'O2', { OfficeName: 'Office O2 Renamed' });
    const mark = s.requests.length;
    const proxy = emulator.closeAfterTest(await refusingWritesOf(te.url, 'SN-REST'));
    const second = await run({ ...te, url: proxy.url, client: (o) => te.client({ ...o, baseUrl: proxy.url }) });
    expect(second.map((r) => r.outcome === 'ok')).toEqual([true, false]);
    const a1Held = await officesOf('SN-A1');
    expect(a1Held).toEqual(expected(a1Held, 'Office O2 Renamed'));
    const restBefore = await officesOf('SN-REST');
    expect(restBefore).toEqual(expected(restBefore, 'Office O2'));
    // Trestle filters Property on ListOfficeKey: the listings are asked for directly
    const asked = s.requests
      .slice(mark)
      .filter((r) => r.url.includes('/Property') && decodeURIComponent(r.url).includes("ListOfficeKey eq 'O2'"));
    expect(asked).toHaveLength(1);

    // the next run reads the roster again from SN-REST's marks: its O2 listings get the new name, SN-A1's nothing more
    const third = await run();
    expect(third.map((r) => [r.chatbot, r.outcome, r.counts.updated])).toEqual([
      ['SN-A1', 'ok', 0],
      ['SN-REST', 'ok', [...o2].filter((mls) => !a1.includes(mls)).length],
    ]);
    const rest = await officesOf('SN-REST');
    expect(rest).toEqual(expected(rest, 'Office O2 Renamed'));
    expect(s.refused).toEqual([]);
  }, 60_000);
});
