// MLS replication end to end over real HTTP: the test OData server (records changing between pages,
// both lookup spellings) → the RESO reader → the sync → the emulator. A full pull during which records
// change, then an incremental pull, leave the chatbot holding exactly the server's current on-market
// records, and no unchanged listing is deleted on the way. A RESO-named CSV export of the same
// records maps to the same listings.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import { openFeed } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping, mapFeed, type MappedItem } from '../../src/mapping/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { inSpelling, type Spelling } from '../helpers/reso-spelling.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { NOT_SHOWN } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
let server: ResoServer;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const mapping = { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } };
// (what an idx feed, a RESO feed's default, does not show)
const OFF_MARKET = NOT_SHOWN;

function resoFeed(url: string) {
  return FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url, incremental: true, maxPageSize: 5, retries: 1, timeoutMs: 10_000 },
    mapping,
    deletes: { maxFraction: 0.5 },
  });
}

/** 30 records with leases among them, a photos timestamp, Media with more than photos. */
function startRecords(): Record<string, unknown>[] {
  return generateResoRecords(30, { seed: 11 }).map((r, i) => ({
    ...r,
    PhotosChangeTimestamp: r.ModificationTimestamp,
    ...(i % 7 === 0 && { PropertyType: 'Residential Lease', ListPrice: 2400 + i, SecurityDeposit: 3000 }),
    ...(i % 5 === 0 && { StandardStatus: 'Active Under Contract' }),
    Media: [
      ...(r.Media as object[]),
      { MediaKey: `plan-${i}`, MediaURL: `https://media.test/plan-${i}.png`, MediaCategory: 'Floor Plan', Order: 0 },
    ],
  }));
}

const byKey = (records: Record<string, unknown>[]) =>
  [...records].sort((a, b) => String(a.ListingKey).localeCompare(String(b.ListingKey)));
const onMarketIds = (records: Record<string, unknown>[]) =>
  records
    .filter((r) => !OFF_MARKET.has(String(r.StandardStatus)) && r.MlgCanView !== false)
    .map((r) => String(r.ListingId))
    .sort();
/** ListPrice as the listing holds it: RentPrice for a lease, SalePrice for a sale */
const price = (l: { SalePrice?: number; RentPrice?: number } | undefined) => l?.SalePrice ?? l?.RentPrice;
const held = async () => new Map((await te.listings(SN)).map((l) => [l.MLSNumber, l]));

describe.each<Spelling>(['display', 'enum'])('RESO replication, lookups spelled as %s', (spelling) => {
  it("a full pull with records changing mid-pull, then an incremental pull: exactly the server's on-market records, nothing unchanged deleted", async () => {
    const records = startRecords();
    const ordered = byKey(records);
    const key = (i: number) => String(ordered[i]!.ListingKey);
    const id = (i: number) => String(ordered[i]!.ListingId);
    server = emulator.closeAfterTest(await startResoServer({ records, spelling }));
    const feed = resoFeed(server.url);

    // first sync: no mark yet, a full pull
    const first = await env.sync(te, feed);
    expect(first.outcome).toBe('ok');
    expect([...(await held()).keys()].sort()).toEqual(onMarketIds(records));
    const leases = [...(await held()).values()].filter((l) => l.SaleType === 'for_rent');
    expect(leases.length).toBeGreaterThan(0);
    expect(leases.every((l) => typeof l.RentPrice === 'number' && l.SalePrice === undefined)).toBe(true);
    expect(leases.some((l) => l.DepositFee === 3000)).toBe(true);

    // the weekly full pull (schedule.full): between its pages, records change, go and come
    const s = server;
    const start = s.requests.length;
    let changedMidPull = false;
    // request start+1 is page 1 (five records), +2 page 2: no request of its own for the mark
    s.beforePage = (n, srv) => {
      if (n !== start + 2) return;
      changedMidPull = true;
      srv.touch(key(0), { ListPrice: 999_000 }); // already read: the next incremental pull brings it
      srv.touch(key(1), { StandardStatus: 'Withdrawn' }); // already read: off the market, for the incremental pull
      srv.touch(key(25), { ListPrice: 555_000 }); // not read yet: read with its change
      srv.remove(key(27)); // not read yet: hard-deleted, this full pull removes it
      srv.records = [
        ...srv.records,
        { ...ordered[29], ListingKey: 'Z-NEW', ListingId: 'NEW-1', ModificationTimestamp: new Date().toISOString() },
      ];
    };
    const unchanged = ordered
      .filter((r, i) => ![0, 1, 25, 27].includes(i) && !OFF_MARKET.has(String(r.StandardStatus)))
      .map((r) => String(r.ListingId));
    const full = await env.sync(te, feed, { full: true });
    s.beforePage = undefined;
    expect(changedMidPull).toBe(true);
    expect(full.outcome).toBe('ok');
    expect(full.source).toMatchObject({ mode: 'full', complete: true });
    const afterFull = await held();
    for (const mls of unchanged) expect(afterFull.has(mls), `unchanged ${mls} kept`).toBe(true);
    expect(afterFull.has(id(27))).toBe(false);
    expect(afterFull.has('NEW-1')).toBe(true);
    expect(price(afterFull.get(id(25)))).toBe(555000);
    expect(full.counts.deleted).toBe(1);

    // later: a photo added without a new ModificationTimestamp, then the incremental pull
    const photo = 'https://media.test/new-photo.jpg';
    const k3 = s.records.find((r) => r.ListingKey === key(3))!;
    s.records = s.records.map((r) =>
      r === k3
        ? {
            ...r,
            PhotosChangeTimestamp: new Date().toISOString(),
            Media: [...(r.Media as object[]), { MediaKey: 'new', MediaURL: photo, MediaCategory: 'Photo', Order: 0 }],
          }
        : r,
    );
    const incremental = await env.sync(te, feed);
    expect(incremental.outcome).toBe('ok');
    expect(incremental.source.mode).toBe('incremental');
    const now = await held();
    expect([...now.keys()].sort()).toEqual(onMarketIds(s.records));
    expect(price(now.get(id(0)))).toBe(999000);
    const images = now.get(String(k3.ListingId))!.Images ?? [];
    expect(images[0]).toBe(photo);
    expect(images.some((u) => u.includes('plan-'))).toBe(false);
    for (const mls of unchanged) expect(now.has(mls), `unchanged ${mls} kept`).toBe(true);
  });
});

describe('RESO feed credentials in a sync', () => {
  it('a 401 that a fresh OAuth2 token does not cure ends the run failed, naming the credential; no secret in the report', async () => {
    const oauth = { clientId: 'mls-client-7', clientSecret: 'client-secret-value-9f3', scope: 'api' };
    server = emulator.closeAfterTest(
      await startResoServer({
        records: startRecords(),
        oauth: { ...oauth, ttlSeconds: 3600 },
        beforePage: (_n, srv) => srv.revokeTokens(),
      }),
    );
    const feed = FeedConfig.parse({
      name: 'mls',
      chatbot: SN,
      source: {
        kind: 'reso',
        url: server.url,
        incremental: true,
        retries: 1,
        auth: { kind: 'oauth2', tokenUrl: server.tokenUrl, ...oauth },
      },
      mapping,
    });
    const report = await env.sync(te, feed);
    expect(report.outcome).toBe('failed');
    expect(report.message).toMatch(/check feeds\[mls\]\.source\.auth \(clientId, clientSecret, scope\)/);
    expect(report.message).toContain('OAuth2 client "mls-client-7"');
    expect(server.requests).toHaveLength(2); // the first page, and once more with a fresh token
    const text = JSON.stringify(report);
    for (const secret of [oauth.clientSecret, ...server.issued]) expect(text).not.toContain(secret);
    expect(await te.listings(SN)).toEqual([]);
  });
});

describe('a RESO-named CSV export with OData lookup spellings', () => {
  it('maps to the same listings as the OData pages, rejecting only the genuinely bad records, leases for_rent with RentPrice', async () => {
    const records = startRecords().map((r, i) =>
      i === 4 ? { ...r, BedroomsTotal: 'three' } : i === 9 ? { ...r, StandardStatus: 'Contingent' } : r,
    );
    server = emulator.closeAfterTest(await startResoServer({ records, spelling: 'enum' }));
    const flat = (r: Record<string, unknown>) => {
      const { Media: _media, ...rest } = inSpelling(r, 'enum');
      return rest;
    };
    const columns = [...new Set(records.flatMap((r) => Object.keys(flat(r))))];
    const cell = (v: unknown) =>
      v === undefined || v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v);
    await env.writeFeed(
      [columns.join(','), ...records.map((r) => columns.map((c) => cell(flat(r)[c])).join(','))].join('\n') + '\n',
      'export.csv',
    );

    const mapAll = async (source: Record<string, unknown>) => {
      const feed = FeedConfig.parse({ name: 'x', chatbot: SN, source, mapping });
      const opened = openFeed(feed.name, feed.source, { baseDir: env.dir, logger: silentLogger, full: true });
      const out: MappedItem[] = [];
      for await (const item of mapFeed(opened.items, compileMapping(feed.mapping), {
        serialNumber: SN,
        keyBy: 'MLSNumber',
      }))
        out.push(item);
      return out;
    };
    const fromCsv = await mapAll({ kind: 'csv', path: 'export.csv' });
    const fromPages = await mapAll({ kind: 'reso', url: server.url, expandMedia: false });

    const rejected = (items: MappedItem[]) =>
      items
        .filter((i) => i.kind === 'rejected')
        .map((i) => ('key' in i ? i.key : undefined))
        .sort();
    expect(rejected(fromCsv)).toEqual([String(records[4]!.ListingId), String(records[9]!.ListingId)].sort());
    expect(rejected(fromPages)).toEqual(rejected(fromCsv));
    const listings = (items: MappedItem[]) =>
      new Map(items.flatMap((i) => (i.kind === 'listing' ? [[i.key, i.listing] as const] : [])));
    const csvListings = listings(fromCsv);
    expect(csvListings.size).toBe(28);
    expect(listings(fromPages)).toEqual(csvListings);
    const leases = [...csvListings.values()].filter((l) => l.SaleType === 'for_rent');
    expect(leases.length).toBe(
      records.filter((r, i) => r.PropertyType === 'Residential Lease' && i !== 4 && i !== 9).length,
    );
    expect(leases.every((l) => typeof l.RentPrice === 'number' && l.SalePrice === undefined)).toBe(true);
    expect(leases.some((l) => l.DepositFee === 3000)).toBe(true);
  });
});
