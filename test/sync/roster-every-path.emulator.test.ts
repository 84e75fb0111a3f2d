// The roster on every path that maps a Property record (issue 54 point 2), over HTTP against
// test/helpers/vendor-server.ts (MLS Grid's rules for Property, Member, Office and OpenHouse) and, for
// the EntityEvent path, test/helpers/reso-server.ts (a RESO server with the EntityEvent log of RCP-027
// and the Member, Office and OpenHouse resources), the emulator as the chatbot: a listing whose open houses are cancelled in the OpenHouse resource
// alone is fetched again by key, and that record is mapped with the roster's agent and office
// (their contacts and the attribution "Listing courtesy of <the roster's office>"), as a full pull
// maps it; a record with no ListOfficeName of its own is not held back, so its cancelled open house
// leaves the chatbot.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import { openFeed } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { startVendorServer } from '../helpers/vendor-server.js';
import { SN, type SyncEnv, useEmulatorSync, writeCounts } from './helpers/feed.js';
import { at, SAT } from './helpers/open-house-slots.js';
import { pushedAsk, reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const TOKEN = 'roster-paths-token-7e21';
const T0 = '2026-11-01T00:00:00.000Z';

/** 4 listings of agent A1 at office O1, their own contact fields stale; the last has no ListOfficeName of its own */
function listings(): Record<string, unknown>[] {
  return generateResoRecords(4, { seed: 54 }).map((r, i) => {
    const own: Record<string, unknown> = {
      ...r,
      StandardStatus: 'Active',
      OriginatingSystemName: 'actris',
      MlgCanView: true,
      ListAgentKey: 'A1',
      ListAgentFullName: 'Own Agent',
      ListAgentPreferredPhone: '555-0000',
      ListOfficeKey: 'O1',
      ListOfficeName: 'Own Office',
    };
    if (i === 3) delete own.ListOfficeName;
    return own;
  });
}
const member = {
  MemberKey: 'A1',
  MemberFullName: 'Agent A1',
  MemberPreferredPhone: '512-555-0100',
  ModificationTimestamp: T0,
  OriginatingSystemName: 'actris',
  MlgCanView: true,
};
const office = {
  OfficeKey: 'O1',
  OfficeName: 'Office O1',
  OfficePhone: '512-555-0900',
  ModificationTimestamp: T0,
  OriginatingSystemName: 'actris',
  MlgCanView: true,
};
const openHouseOf = (key: string, r: Record<string, unknown>) => ({
  OpenHouseKey: key,
  ListingKey: r.ListingKey,
  ListingId: r.ListingId,
  OriginatingSystemName: 'actris',
  MlgCanView: true,
  ModificationTimestamp: T0,
  ...SAT,
});

/** each listing's agent, office, attribution and tours, by ListingId */
async function shown(): Promise<Record<string, Record<string, string | undefined>>> {
  const out: Record<string, Record<string, string | undefined>> = {};
  for (const l of await te.listings(SN)) {
    const e = Object.fromEntries((l.ExtensionColumn ?? []).map((x) => [x.Key, x.value]));
    out[l.MLSNumber] = {
      agent: e.ListAgentName,
      phone: e.ListAgentPhone,
      office: e.ListOfficeName,
      attribution: e.Attribution,
      tours: l.Tours,
    };
  }
  return out;
}

/** the roster (A1, O1) and an open house for the first and the last listing */
const relatedOf = (a: Record<string, unknown>, d: Record<string, unknown>) => ({
  Member: [member],
  Office: [office],
  OpenHouse: [openHouseOf('oh-a', a), openHouseOf('oh-d', d)],
});

/** the feed over a source, with `related: [Member, Office, OpenHouse]` */
const feedOver = (source: Record<string, unknown>): FeedConfig =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      incremental: true,
      related: ['Member', 'Office', 'OpenHouse'],
      timeZone: 'America/Chicago',
      ...source,
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 0.5 },
  });

/** the vendor server with the 4 listings, A1, O1 and an open house for the first and the last; the feed over it */
async function serve() {
  const records = listings();
  const [a, , , d] = records;
  const s = emulator.closeAfterTest(
    await startVendorServer({
      vendor: 'mlsgrid',
      records,
      token: TOKEN,
      originatingSystem: 'actris',
      related: relatedOf(a!, d!),
    }),
  );
  const feed = feedOver({
    vendor: 'mlsgrid',
    url: s.url,
    bearerToken: TOKEN,
    originatingSystem: 'actris',
    changes: 'timestamps',
  });
  return { s, feed, A: String(a!.ListingId), D: String(d!.ListingId), keyOfA: String(a!.ListingKey) };
}
const roster = { agent: 'Agent A1', phone: '512-555-0100', office: 'Office O1' };
const attribution = 'Listing courtesy of Office O1';

/** a first (full) sync shows a and d with the roster's contacts and their open houses; then both open houses are cancelled in the OpenHouse resource alone */
async function firstSyncThenCancel(
  s: { touchRelated(resource: 'OpenHouse', key: string, fields?: Record<string, unknown>): unknown },
  feed: FeedConfig,
  listing: { A: string; D: string },
): Promise<void> {
  const first = await env.sync(te, feed, at('2026-11-27T12:00:00Z'));
  expect(first.outcome, first.message).toBe('ok');
  const held = await shown();
  expect(Object.keys(held)).toHaveLength(4);
  expect(held[listing.A]).toMatchObject({ ...roster, attribution, tours: 'OpenHouse' });
  expect(held[listing.D]).toMatchObject({ ...roster, attribution, tours: 'OpenHouse' });
  s.touchRelated('OpenHouse', 'oh-a', { OpenHouseStatus: 'Cancelled' });
  s.touchRelated('OpenHouse', 'oh-d', { OpenHouseStatus: 'Cancelled' });
}

describe('the roster on an open-house re-fetch (MLS Grid rules)', () => {
  it("a listing whose open houses are cancelled keeps the roster's contacts and attribution; one with no ListOfficeName of its own loses its open house", async () => {
    const { s, feed, A, D } = await serve();
    // both open houses cancelled in the OpenHouse resource alone: a and d are fetched again by key
    await firstSyncThenCancel(s, feed, { A, D });
    const before = await writeCounts(te);
    const second = await env.sync(te, feed, at('2026-11-27T13:00:00Z'));
    expect(second.outcome, second.message).toBe('ok');
    expect(second.display?.held ?? 0).toBe(0);
    const after = await writeCounts(te);
    expect(after.update - before.update).toBe(2);
    const now = await shown();
    expect(now[A]).toEqual({ ...roster, attribution, tours: undefined });
    expect(now[D]).toEqual({ ...roster, attribution, tours: undefined });
    expect([s.refused, s.tooMany]).toEqual([[], []]);
  }, 60_000);
});

describe('the roster on a reconcile', () => {
  it("a record a reconcile fetches by key keeps the roster's contacts, attribution and its open house", async () => {
    const { s, feed, A, keyOfA } = await serve();
    const first = await env.sync(te, feed, at('2026-11-27T12:00:00Z'));
    expect(first.outcome, first.message).toBe('ok');

    // a changes at the source (its own stale contact fields unchanged): the reconcile fetches it by key
    s.touch(keyOfA, { ListPrice: 123_456 });
    const before = await writeCounts(te);
    const reconcile = await env.sync(te, feed, { ask: reconcileAsk, ...at('2026-11-27T13:00:00Z') });
    expect(reconcile.outcome, reconcile.message).toBe('ok');
    expect(reconcile.source.reconcile?.fetched).toBe(1);
    expect((await writeCounts(te)).update - before.update).toBe(1);
    expect((await shown())[A]).toEqual({ ...roster, attribution, tours: 'OpenHouse' });
    expect([s.refused, s.tooMany]).toEqual([[], []]);
  }, 60_000);
});

describe('the roster on a read with no store (feed preview)', () => {
  it("feed preview's read (openFeed with no state, as src/cli/feed-preview.ts opens it) gives every record its roster contact", async () => {
    const { s, feed } = await serve();
    const opened = openFeed(feed.name, feed.source, { baseDir: '.', logger: silentLogger, full: true });
    const offices: unknown[] = [];
    for await (const item of opened.items) if (item.kind === 'record') offices.push(item.data.ListOfficeName);
    expect(offices).toEqual(['Office O1', 'Office O1', 'Office O1', 'Office O1']);
    expect(opened.stats?.tally?.by).toMatchObject({ Member: 1, Office: 1 });
    expect([s.refused, s.tooMany]).toEqual([[], []]);
  }, 60_000);
});

describe('the roster on pushed events', () => {
  it("a record a pushed event names keeps the roster's contacts, attribution and its open house, with no roster pulled", async () => {
    const { s, feed, A, keyOfA } = await serve();
    const first = await env.sync(te, feed, at('2026-11-27T12:00:00Z'));
    expect(first.outcome, first.message).toBe('ok');

    s.touch(keyOfA, { ListPrice: 123_456 });
    const from = s.requests.length;
    const pushed = await env.sync(te, feed, {
      ask: pushedAsk({ keys: [keyOfA], media: [], events: 1 }),
      ...at('2026-11-27T13:00:00Z'),
    });
    expect(pushed.outcome, pushed.message).toBe('ok');
    expect(pushed.counts.updated).toBe(1);
    expect((await shown())[A]).toEqual({ ...roster, attribution, tours: 'OpenHouse' });
    const asked = s.requests.slice(from).map((r) => new URL(r.url, s.origin).pathname.split('/').pop());
    expect(asked).not.toContain('Member');
    expect(asked).not.toContain('Office');
    expect([s.refused, s.tooMany]).toEqual([[], []]);
  }, 60_000);
});

describe('the roster on an EntityEvent run (a RESO server with the EntityEvent log, Member, Office and OpenHouse)', () => {
  it("a listing whose open houses are cancelled, and one the log names, keep the roster's contacts and attribution; one with no ListOfficeName of its own loses its open house", async () => {
    const records = listings();
    const [a, b, , d] = records;
    const s = emulator.closeAfterTest(
      await startResoServer({
        records,
        entityEvents: true,
        related: relatedOf(a!, d!),
      }),
    );
    const feed = feedOver({ url: s.url, changes: 'entityEvent', photosTimestampField: null });
    const [A, B, D] = [a!, b!, d!].map((r) => String(r.ListingId)) as [string, string, string];
    // a's and d's open houses cancelled in the OpenHouse resource alone (the log names OpenHouse
    // records, not theirs); b changes at the source (the log names it), its own stale contacts unchanged
    await firstSyncThenCancel(s, feed, { A, D });
    s.touch(String(b!.ListingKey), { ListPrice: 123_456 });
    const from = s.requests.length;
    const before = await writeCounts(te);
    const second = await env.sync(te, feed, at('2026-11-27T13:00:00Z'));
    expect(second.outcome, second.message).toBe('ok');
    expect(second.source.mode).toBe('incremental');
    // the EntityEvent log was read from the mark, and no Property pull ran
    const asked = s.requests.slice(from);
    expect(asked.filter((q) => /\/EntityEvent\?/.test(q.url))).toHaveLength(1);
    expect(asked.filter((q) => /\/Property\?/.test(q.url) && q.filter?.includes('ModificationTimestamp'))).toEqual([]);
    expect(second.display?.held ?? 0).toBe(0);
    expect((await writeCounts(te)).update - before.update).toBe(3);
    const now = await shown();
    expect(now[A]).toEqual({ ...roster, attribution, tours: undefined });
    expect(now[D]).toEqual({ ...roster, attribution, tours: undefined });
    expect(now[B]).toEqual({ ...roster, attribution, tours: undefined });
  }, 60_000);
});
