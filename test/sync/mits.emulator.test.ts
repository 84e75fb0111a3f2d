// A MITS feed served over HTTP synced into the emulator with the mits preset: one listing per
// available unit with rent, rooms, address and photos; a rerun writes nothing; a unit leased between
// runs leaves the chatbot; a rent change updates one listing; one listing per floorplan on request.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { isListed, mitsModel, renderMits, unitKey, type MitsProperty } from '../../fixtures/generate-mits.js';
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { SN, useEmulatorSync, type SyncEnv, writeCounts } from './helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
const sync = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const writes = () => writeCounts(te);

async function serve(model: MitsProperty[]): Promise<FeedServer> {
  return sync.closeAfterTest(
    await startFeedServer({ status: 200, body: [...renderMits(model)].join(''), contentType: 'application/xml' }),
  );
}

function feed(server: FeedServer, source: Record<string, unknown> = {}): FeedConfig {
  return FeedConfig.parse({
    name: 'rentals',
    chatbot: SN,
    source: { kind: 'mits', url: server.url, ...source },
    mapping: { preset: 'mits' },
    deletes: { maxFraction: 0.5 },
  });
}

const listed = (model: MitsProperty[]) =>
  model.flatMap((p) => p.units.filter(isListed).map((u) => unitKey(p, u))).sort();

describe('a MITS feed synced with the mits preset', () => {
  it('creates exactly one listing per available unit, each with rent, rooms, address and photos; a rerun writes nothing', async () => {
    const model = mitsModel({ properties: 3, unitsPerProperty: 24 });
    const server = await serve(model);
    const report = await env.sync(te, feed(server));
    expect(report.outcome).toBe('ok');
    const listings = await te.listings(SN);
    expect(listings.map((l) => l.MLSNumber).sort()).toEqual(listed(model));
    expect(new Set(listings.map((l) => l.MLSNumber)).size).toBe(listings.length);
    expect(report.counts).toMatchObject({ created: listings.length, rejected: 0, skipped: 72 - listings.length });
    for (const l of listings) {
      expect(l).toMatchObject({
        SaleType: 'for_rent',
        Status: 'Active',
        SpaceType: 'Entire place',
        AreaUnit: 'Square Feet',
      });
      expect(l.RentPrice).toBeGreaterThan(0);
      expect(l.Bedrooms).toBeTypeOf('number');
      expect(l.Bathrooms).toBeGreaterThan(0);
      expect(l.Address).toMatch(/\d+ \w+/);
      expect(l.City).toBeTruthy();
      expect(l.Images!.length).toBeGreaterThan(0);
      expect(l.ExtensionColumn!.map((e) => e.Key)).toEqual(
        expect.arrayContaining(['AvailableDate', 'Availability', 'Community', 'Unit']),
      );
    }
    // an on-notice unit is shown with its date
    const notice = listings.find((l) => l.MLSNumber === 'P100-U102')!;
    expect(notice.ExtensionColumn).toEqual(
      expect.arrayContaining([
        { Key: 'Availability', value: 'on_notice' },
        { Key: 'AvailableDate', value: '2027-03-15' },
      ]),
    );
    // a unit without its own rent shows its floorplan's lowest market rent
    const p = model[0]!;
    const noRent = p.units.find((u) => u.rent === undefined && isListed(u) && u.floorplanId !== undefined)!;
    const plan = p.floorplans.find((f) => f.id === noRent.floorplanId)!;
    expect(listings.find((l) => l.MLSNumber === unitKey(p, noRent))!.RentPrice).toBe(plan.rentMin);

    const before = await writes();
    const again = await env.sync(te, feed(server));
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writes()).toEqual(before);
  });

  it('a unit leased between two runs leaves the chatbot; a rent change updates that one listing', async () => {
    const model = mitsModel({ properties: 2, unitsPerProperty: 12 });
    const server = await serve(model);
    await env.sync(te, feed(server));
    const count = (await te.listings(SN)).length;
    const before = await writes();

    const p = model[1]!;
    const leasing = p.units.find((u) => u.leased === 'available')!;
    Object.assign(leasing, { leased: 'leased', occupancy: 'occupied' });
    const repriced = p.units.find((u) => u.leased === 'on_notice')!;
    repriced.rent = (repriced.rent ?? 0) + 75;
    server.answer = { status: 200, body: [...renderMits(model)].join(''), contentType: 'application/xml' };

    const report = await env.sync(te, feed(server));
    expect(report.outcome).toBe('ok');
    expect(report.counts).toMatchObject({ created: 0, updated: 1, deleted: 1 });
    const after = await te.listings(SN);
    expect(after).toHaveLength(count - 1);
    expect(after.map((l) => l.MLSNumber)).not.toContain(unitKey(p, leasing));
    expect(after.find((l) => l.MLSNumber === unitKey(p, repriced))!.RentPrice).toBe(repriced.rent);
    const w = await writes();
    expect({
      create: w.create - before.create,
      update: w.update - before.update,
      delete: w.delete - before.delete,
    }).toEqual({ create: 0, update: 1, delete: 1 });
  });

  it('a unit or a whole property missing from the next full feed is removed, as any absence is', async () => {
    const model = mitsModel({ properties: 3, unitsPerProperty: 12 });
    const server = await serve(model);
    await env.sync(te, feed(server));
    const gone = model[2]!;
    const dropped = model[0]!.units.find((u) => u.leased === 'available')!;
    const next = model.slice(0, 2).map((p, i) => (i === 0 ? { ...p, units: p.units.filter((u) => u !== dropped) } : p));
    server.answer = { status: 200, body: [...renderMits(next)].join(''), contentType: 'application/xml' };
    const report = await env.sync(te, feed(server));
    expect(report.outcome).toBe('ok');
    expect(report.counts).toMatchObject({ created: 0, updated: 0, deleted: listed([gone]).length + 1 });
    expect((await te.listings(SN)).map((l) => l.MLSNumber).sort()).toEqual(listed(next));
  });

  it('per floorplan: one listing per floorplan with an available unit, its count and rent range', async () => {
    const model = mitsModel({ properties: 2, unitsPerProperty: 12 });
    // every unit of P100's Studio leased: that floorplan is not listed
    for (const u of model[0]!.units.filter((u) => u.floorplanId === 'FP1' || u.floorplanName === 'Studio'))
      Object.assign(u, { leased: 'leased', occupancy: 'occupied' });
    const server = await serve(model);
    const report = await env.sync(te, feed(server, { recordPer: 'floorplan' }));
    expect(report.outcome).toBe('ok');
    const listings = await te.listings(SN);
    expect(listings.map((l) => l.MLSNumber).sort()).toEqual([
      'P100-FP2',
      'P100-FP3',
      'P100-FP4',
      'P101-FP1',
      'P101-FP2',
      'P101-FP3',
      'P101-FP4',
    ]);
    const fp2 = listings.find((l) => l.MLSNumber === 'P101-FP2')!;
    const plan = model[1]!.floorplans[1]!;
    expect(fp2).toMatchObject({ RentPrice: plan.rentMin, Bedrooms: plan.beds, BuildingArea: plan.sqftMin });
    expect(fp2.ExtensionColumn).toEqual(
      expect.arrayContaining([
        { Key: 'RentRange', value: `${plan.rentMin}.00-${plan.rentMax}.00` },
        { Key: 'Floorplan', value: plan.name },
      ]),
    );
    expect(fp2.ExtensionColumn!.find((e) => e.Key === 'UnitsAvailable')!.value).toMatch(/^[1-9]\d*$/);
  });
});
