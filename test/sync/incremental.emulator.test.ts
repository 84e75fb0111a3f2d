// An incremental RESO feed: its first pull (no stored high-water mark) is a full one and mirror
// deletes apply; later pulls only carry changes, so absent keys must never be deleted.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { createSyncEnv, SN, type SyncEnv } from './helpers/feed.js';

const capture = join(dirname(fileURLToPath(import.meta.url)), '../../fixtures/feeds/reso-pages.json');

let te: TestEmulator;
let env: SyncEnv;
beforeAll(async () => {
  te = await startTestEmulator();
});
afterAll(() => te.close());
beforeEach(async () => {
  await te.reset();
  env = await createSyncEnv();
});
afterEach(() => env.cleanup());

const resoFeed = () =>
  FeedConfig.parse({
    name: 'reso-incremental',
    chatbot: SN,
    source: { kind: 'reso', path: capture, incremental: true },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 1 },
  });

async function createStray(te: TestEmulator, i: number): Promise<void> {
  await te.api.createListing({
    SerialNumber: SN,
    MLSNumber: `STRAY${i}`,
    Url: `https://stray.test/${i}`,
    SaleType: 'for_sale',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'Single Family',
    Bedrooms: 3,
    Bathrooms: 2,
    YearBuilt: 1990,
    DaysOnMarket: 4,
    LotArea: 5000,
    BuildingArea: 1500,
    AreaUnit: 'Square Feet',
    ParkingSpots: 1,
  });
}

describe('incremental RESO feed', () => {
  it('deletes absent listings on the first (full) pull, never on later incremental pulls', async () => {
    await createStray(te, 1);
    const first = await env.sync(te, resoFeed());
    expect(first.source.mode).toBe('full');
    expect(first.counts.deleted).toBe(1);
    const afterFirst = await te.listings(SN);
    expect(afterFirst.some((l) => l.MLSNumber === 'STRAY1')).toBe(false);
    expect(afterFirst.length).toBe(first.counts.valid);

    await createStray(te, 2);
    const second = await env.sync(te, resoFeed());
    expect(second.source.mode).toBe('incremental');
    expect(second.counts.deleted).toBe(0);
    expect((await te.listings(SN)).some((l) => l.MLSNumber === 'STRAY2')).toBe(true);
  });
});
