// Issue 38, point 6: listings that could never leave. The confirmation that asks a RESO server for a
// full pull's absent keys (docs/reso-paging.md) must ask in a way the server answers:
// - a server whose key is numeric (`Edm.Int64` in its $metadata) answers `ListingKey eq '12'` with a
//   400 (ASP.NET OData: "A binary operator with incompatible types was detected"), so every delete of
//   that feed stayed unconfirmed: keys go as $metadata types them (`ListingKey eq 12`);
// - MLS Grid cannot filter on ListingKey (docs/vendors.md): a feed keyed by it could not be confirmed
//   at all; it is confirmed through the field the profile names (ListingId), found by a keys-only read.
// Over real HTTP: test/helpers/reso-server.ts (`types`, its $metadata) and test/helpers/vendor-server.ts.
import { describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { openReso } from '../../src/feeds/reso/reso-reader.js';
import type { FeedItem } from '../../src/feeds/types.js';
import { silentLogger } from '../../src/log.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { startVendorServer } from '../helpers/vendor-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const TOKEN = 'grid-token-38';

/** `n` on-market records, ListingKey 1001… as numbers (an Int64 key), ListingId L-1… */
function records(n: number): Record<string, unknown>[] {
  return keyedResoRecords(n, 38).map((r, i) => ({
    ...r,
    ListingKey: 1001 + i,
    ListingId: `L-${i + 1}`,
    OriginatingSystemName: 'actris',
    MlgCanView: true,
  }));
}

/** The feed of the numeric-key tests: keyed by ListingKey, pages of 5, no delete limit that matters. */
const keyedFeed = (url: string) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: { kind: 'reso', url, maxPageSize: 5, retries: 0, timeoutMs: 5000, photosTimestampField: null },
    mapping: {
      preset: 'reso',
      fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
    },
    deletes: { maxFraction: 1, maxCount: 100 },
  });

const held = async () => (await te.listings(SN)).map((l) => String(l.MLSNumber)).sort();

describe('a numeric key (Edm.Int64 in $metadata)', () => {
  it('absent keys are asked for bare, as $metadata types them: the hard-deleted listings go, the others stay', async () => {
    const data = records(12);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 5, types: { ListingKey: 'Edm.Int64' } }),
    );
    const feed = keyedFeed(server.url);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect(await held()).toHaveLength(12);

    server.remove(1003 as unknown as string);
    server.remove(1007 as unknown as string);
    const next = await env.sync(te, feed);
    expect(next.outcome, next.message).toBe('ok');
    expect(next.counts.deleted).toBe(2);
    expect(await held()).toEqual(
      data
        .map((r) => String(r.ListingKey))
        .filter((k) => k !== '1003' && k !== '1007')
        .sort(),
    );
    // the confirmation asked by number, and the server refused nothing
    const asked = server.requests.filter((r) => r.filter?.includes('ListingKey eq'));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((r) => /ListingKey eq 1003\b/.test(r.filter!) && !r.filter!.includes("'1003'"))).toBe(true);
    expect(server.requests.filter((r) => r.status >= 400)).toEqual([]);
    expect(server.metadataRequests).toBe(1);
  });

  it('a server without $metadata: the keys go quoted, as before, and the run says why', async () => {
    const data = records(6).map((r) => ({ ...r, ListingKey: `K${String(r.ListingKey)}` }));
    const server = emulator.closeAfterTest(await startResoServer({ records: data, maxPageSize: 5, metadata: false }));
    const feed = keyedFeed(server.url);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.remove('K1002');
    const next = await env.sync(te, feed);
    expect(next.outcome, next.message).toBe('ok');
    expect(next.counts.deleted).toBe(1);
    expect(next.source.warnings?.join('\n')).toMatch(/\$metadata could not be read/);
  });
});

describe('MLS Grid: a feed keyed by ListingKey (not searchable there)', () => {
  const source = (url: string): ResoSource =>
    FeedConfig.parse({
      name: 'grid',
      chatbot: SN,
      source: {
        kind: 'reso',
        vendor: 'mlsgrid',
        url,
        bearerToken: TOKEN,
        originatingSystem: 'actris',
        retries: 0,
        timeoutMs: 5000,
      },
      mapping: { preset: 'reso' },
    }).source as ResoSource;
  const gridRecords = (n: number) => records(n).map((r) => ({ ...r, ListingKey: `ACT${String(r.ListingKey)}` }));

  it('a hard-deleted listing goes: the keys are found by a keys-only read and the rest asked for by ListingId; nothing refused', async () => {
    const data = gridRecords(9);
    const server = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records: data,
        token: TOKEN,
        originatingSystem: 'actris',
        perSecond: 100,
      }),
    );
    const feed = FeedConfig.parse({
      name: 'grid',
      chatbot: SN,
      source: {
        kind: 'reso',
        vendor: 'mlsgrid',
        url: server.url,
        bearerToken: TOKEN,
        originatingSystem: 'actris',
        retries: 0,
        timeoutMs: 5000,
        maxPageSize: 4,
      },
      mapping: {
        preset: 'reso',
        fields: { MLSNumber: { from: 'ListingKey' }, Url: { template: 'https://broker.test/l/{ListingKey}' } },
      },
      deletes: { maxFraction: 1, maxCount: 100 },
    });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect(await held()).toHaveLength(9);
    server.remove('ACT1004');
    const next = await env.sync(te, feed);
    expect(next.outcome, next.message).toBe('ok');
    expect(next.counts.deleted).toBe(1);
    expect(await held()).toEqual(
      data
        .map((r) => String(r.ListingKey))
        .filter((k) => k !== 'ACT1004')
        .sort(),
    );
    expect(server.refused.map((r) => `${r.status} ${r.refusal}`)).toEqual([]);
    // the keys-only read: no $expand, the key fields only
    expect(
      server.requests.some(
        (r) =>
          decodeURIComponent(r.url).includes('$select=ListingKey,ListingId,ModificationTimestamp') &&
          !r.url.includes('$expand'),
      ),
    ).toBe(true);
  });

  it('the lookup: a key still on the server comes back whole (asked by its ListingId); one with no ListingId comes back as kept, not read', async () => {
    const data = gridRecords(5).map((r) => (r.ListingKey === 'ACT1005' ? { ...r, ListingId: null } : r));
    const server = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records: data,
        token: TOKEN,
        originatingSystem: 'actris',
        perSecond: 100,
      }),
    );
    const opened = openReso('grid', source(server.url), { baseDir: '.', logger: silentLogger });
    const found: FeedItem[] = [];
    for await (const items of opened.lookup!.find([{ field: 'ListingKey', values: ['ACT1002', 'ACT1005', 'ACT9999'] }]))
      found.push(...items);
    const byKey = new Map(found.map((i) => [String(i.kind === 'error' ? i.data?.ListingKey : i.data.ListingKey), i]));
    expect([...byKey.keys()].sort()).toEqual(['ACT1002', 'ACT1005']);
    expect(byKey.get('ACT1002')!.kind).toBe('record');
    expect(byKey.get('ACT1005')!.kind).toBe('error');
    expect(server.refused).toEqual([]);
    expect(server.requests.some((r) => decodeURIComponent(r.url).includes("ListingId eq 'L-2'"))).toBe(true);
  });
});
