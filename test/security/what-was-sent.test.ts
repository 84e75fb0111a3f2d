// What is read is what was sent (issue 9.8): a key holding U+FFFD (invalid UTF-8, or a wrong declared
// encoding) is a rejected record, never a write; a CSV header naming one column twice is a clear error.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { validateListing } from '../../src/listing/validate.js';
import { silentLogger } from '../../src/log.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { collectUntilError } from '../feeds/helpers.js';
import { csv, rows, SN, type SyncEnv, useEmulatorSync } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

describe('what is read is what was sent', () => {
  it('a key with U+FFFD is refused by the rule (MLSNumber and Url), naming the encoding', () => {
    const r = validateListing({
      SerialNumber: 'SN',
      SaleType: 'for_sale',
      Status: 'Active',
      CurrencySymbol: '$',
      PropertyType: 'Condo',
      Bedrooms: 1,
      Bathrooms: 1,
      Url: 'https://x.test/\uFFFD',
      MLSNumber: 'M\uFFFD1',
      YearBuilt: 1990,
      DaysOnMarket: 1,
      LotArea: 1,
      BuildingArea: 1,
      AreaUnit: 'Square Feet',
      ParkingSpots: 0,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.field)).toEqual(['Url', 'MLSNumber']);
    expect(r.issues[1]!.rule).toMatch(/U\+FFFD.*source\.encoding/);
  });

  it('a row whose MLSNumber bytes are invalid UTF-8 is rejected and never written; the others are', async () => {
    const text = csv(rows(3));
    const bytes = Buffer.from(text.replace('MLS0002', 'MLS00@2'), 'utf8');
    bytes[bytes.indexOf('@')] = 0xff; // not UTF-8: decodes to U+FFFD
    await writeFile(join(env.dir, 'feed.csv'), bytes);
    const report = await env.sync(te);
    expect(report.counts).toMatchObject({ created: 2, rejected: 1 });
    const stored = (await te.listings(SN)).map((l) => l.MLSNumber).sort();
    expect(stored).toEqual(['MLS0001', 'MLS0003']);
    expect(stored.join('')).not.toContain('\uFFFD');
  });

  it('a CSV header naming a column twice is a FeedReadError naming both columns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-dup-'));
    try {
      await writeFile(join(dir, 'dup.csv'), 'MLSNumber,Price,MLSNumber\nA1,1,B1\n');
      const feed = openFeed('f', FeedSource.parse({ kind: 'csv', path: 'dup.csv' }), {
        baseDir: dir,
        logger: silentLogger,
      });
      const { items, error } = await collectUntilError(feed.items);
      expect(items).toEqual([]);
      expect(error).toBeInstanceOf(FeedReadError);
      expect(error!.message).toBe(
        'dup.csv:1: the header names column "MLSNumber" twice (columns 1 and 3); rename one so each column has its own name',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
