// Each sample feed through its demo mapping (presets zillow, listhub, reso; field rules for the CSV):
// the planted bad records of fixtures/README.md come out as they should, and a snapshot of mapped
// listings shows what each preset makes of its format.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openFeed } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping, mapFeed, type MappedItem } from '../../src/mapping/index.js';
import { RESO_STATUS_MAP } from '../../src/mapping/presets/reso.js';

const demo = fileURLToPath(new URL('../../fixtures/demo.yaml', import.meta.url));
const now = () => new Date('2025-06-01T00:00:00Z');

async function mapDemoFeed(name: string): Promise<MappedItem[]> {
  const { config, dir } = await loadConfig(demo, {});
  const feed = config.feeds.find((f) => f.name === name)!;
  const opened = openFeed(feed.name, feed.source, { baseDir: dir, logger: silentLogger });
  const out: MappedItem[] = [];
  for await (const i of mapFeed(opened.items, compileMapping(feed.mapping, { now }), {
    serialNumber: feed.chatbot!,
    keyBy: feed.keyBy,
  }))
    out.push(i);
  return out;
}

function summary(items: MappedItem[]) {
  const counts: Record<string, number> = {};
  for (const i of items) counts[i.kind] = (counts[i.kind] ?? 0) + 1;
  const others = items
    .filter((i) => i.kind !== 'listing')
    .map((i) => ({
      kind: i.kind,
      // fixtures/README.md names CSV rows by line, XML and RESO records by number
      at: i.position.file.endsWith('.csv') ? i.position.line : i.position.index,
      key: 'key' in i ? i.key : undefined,
      why:
        i.kind === 'rejected'
          ? i.issues.map((x) => `${x.field}: ${x.rule}`)
          : i.kind === 'skipped'
            ? i.reason
            : i.kind === 'error'
              ? i.error.message
              : undefined,
    }));
  const listings = items
    .filter((i) => i.kind === 'listing')
    .slice(0, 2)
    .map((i) => i.kind === 'listing' && i.listing);
  return { counts, others, listings };
}

describe('presets and the sample feeds', () => {
  it('austin.csv (field rules): 293 listings, its planted rows rejected, skipped or errors at their lines', async () => {
    const s = summary(await mapDemoFeed('austin-csv'));
    expect(s.counts).toEqual({ listing: 293, error: 2, rejected: 4, skipped: 1 });
    expect(s.others.map((o) => [o.kind, o.at])).toEqual([
      ['error', 20],
      ['rejected', 45],
      ['rejected', 76],
      ['rejected', 102],
      ['skipped', 153],
      ['rejected', 204],
      ['error', 253],
    ]);
    expect(s).toMatchSnapshot();
  });

  it('zillow.xml (zillow preset)', async () => {
    const s = summary(await mapDemoFeed('zillow-xml'));
    expect(s.counts).toEqual({ listing: 245, error: 1, rejected: 3, skipped: 1 });
    expect(s.others.map((o) => [o.kind, o.at])).toEqual([
      ['error', 10],
      ['skipped', 30],
      ['rejected', 55],
      ['rejected', 80],
      ['rejected', 120],
    ]);
    expect(s).toMatchSnapshot();
  });

  it('zillow.xml: &amp; decoded, &nbsp; kept as written', async () => {
    const items = await mapDemoFeed('zillow-xml');
    const l = items.find((i) => i.kind === 'listing' && i.listing.MLSNumber === 'ZW1000160');
    expect(l?.kind === 'listing' && l.listing.Description).toMatch(/^Smith & Sons build, &nbsp;\d bed/);
  });

  it('listhub.xml (listhub preset, ISO-8859-1)', async () => {
    const items = await mapDemoFeed('listhub-xml');
    const s = summary(items);
    expect(s.counts).toEqual({ listing: 245, error: 1, rejected: 3, skipped: 1 });
    expect(s.others.map((o) => [o.kind, o.at])).toEqual([
      ['skipped', 7],
      ['rejected', 21],
      ['error', 64],
      ['rejected', 90],
      ['rejected', 140],
    ]);
    const accented = items.find((i) => i.kind === 'listing' && i.listing.MLSNumber === 'LH1000003');
    expect(accented?.kind === 'listing' && accented.listing.Description).toMatch(
      /^Café-style façade, piñata-ready yard\. /,
    );
    expect(s).toMatchSnapshot();
  });

  it('reso-pages.json (reso preset): off-market skipped, MlgCanView false removed', async () => {
    const s = summary(await mapDemoFeed('reso-replay'));
    expect(s.counts).toEqual({ listing: 232, rejected: 2, skipped: 4, removed: 2 });
    expect(s.others.filter((o) => o.kind === 'skipped').map((o) => o.why)).toEqual([
      'StandardStatus is "Expired": off the market',
      'StandardStatus is "Withdrawn": off the market',
      'StandardStatus is "Incomplete": off the market',
      'StandardStatus is "Canceled": off the market',
    ]);
    expect(s.others.filter((o) => o.kind === 'removed').map((o) => o.key)).toEqual(['RES1000025', 'RES1000099']);
    // Media came reversed in the pages: the images are in Order
    expect(s.listings[0] && s.listings[0].Images).toEqual(
      [...(s.listings[0] ? (s.listings[0].Images ?? []) : [])].sort(),
    );
    expect(s).toMatchSnapshot();
  });

  it('the RESO StandardStatus table', () => {
    expect(RESO_STATUS_MAP).toEqual({
      Active: 'Active',
      'Active Under Contract': 'Active',
      Pending: 'Active',
      'Coming Soon': 'PreOnMarket',
      Closed: 'Sold',
    });
  });
});
