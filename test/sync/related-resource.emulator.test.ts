// A related RESO resource added beside the built-in ones (issue 52 point 2): a test-only `Rooms`
// resource, served by test/helpers/vendor-server.ts under MLS Grid's rules, lands through
// src/feeds/reso/related-resources.ts alone — no edit in src/sync/run/, src/sync/run/context.ts or
// src/feeds/types.ts. It pulls its resource through the feed's page client (counted as `Rooms` in
// the source's tally), keeps each listing's rooms in its own state namespace (`rooms`, a copy per
// lane: FeedContext.state, handed back as OpenedFeed.state and committed by the sync with the
// lane's mark), and fills its own report section (`source.rooms`, typed by declaration merging into
// SourceSections, printed by the text report). Across runs it tells what changed since the lane's
// last run from the state the sync kept for it.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedConfig } from '../../src/config/schema.js';
import { overlayFeed, statsWithSections } from '../../src/feeds/feed-overlay.js';
import { addRelatedResource, type RelatedResource } from '../../src/feeds/reso/related-resources.js';
import { resoPageClient } from '../../src/feeds/reso/reso-pages.js';
import { pullQuery, queryUrl } from '../../src/feeds/reso/reso-query.js';
import { byLane, changesTo, laneNamespace, withInnerState } from '../../src/feeds/source-state.js';
import type { FeedItem, SourceSection } from '../../src/feeds/types.js';
import { vendorProfile } from '../../src/feeds/vendors/registry.js';
import { formatSyncReport } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startVendorServer } from '../helpers/vendor-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';

declare module '../../src/feeds/types.js' {
  interface SourceSections {
    /** the test-only Rooms resource: rooms read, listings with rooms, listings whose rooms changed since the lane's last run */
    rooms: { read: number; listings: number; changed: number };
  }
}

/** its state namespace: listing key → the listing's rooms (JSON), a copy per lane */
const ROOMS_STATE = 'rooms';

/** Each listing's rooms, pulled whole every run, kept in the source's state; the section says what changed. */
const rooms: RelatedResource = {
  name: 'Rooms',
  open(feedName, source, ctx, inner, tally) {
    if (!source.url || ctx.ask) return inner;
    const client = resoPageClient(source, ctx, { tally, scope: feedName, kind: 'Rooms' });
    const held = new Map<string, string>();
    let copies: ReadonlyArray<ReadonlyMap<string, string>> = [];
    let read = 0;
    let done = false;

    async function* items(): AsyncIterable<FeedItem> {
      copies = ctx.state ? await ctx.state.copies(ROOMS_STATE) : [];
      const roomsSource = { ...source, resource: 'Rooms', filter: undefined, select: undefined, keyField: 'RoomKey' };
      const query = pullQuery(roomsSource, vendorProfile(source.vendor), { full: true });
      let url: string | undefined = queryUrl(source.url!, 'Rooms', { ...query, expandMedia: false });
      const byListing = new Map<string, string[]>();
      for (let n = 1; url; n++) {
        const page = await client.get(url, `Rooms page ${n}`);
        for (const r of page.value as Array<Record<string, unknown>>) {
          read++;
          const key = String(r.ListingKey);
          byListing.set(key, [...(byListing.get(key) ?? []), `${String(r.RoomType)} ${String(r.RoomArea)}`]);
        }
        url = page['@odata.nextLink'];
      }
      for (const [key, list] of byListing) held.set(key, JSON.stringify(list.sort()));
      yield* inner.items;
      done = true;
    }

    const section = (): SourceSection => {
      const first = copies[0] ?? new Map<string, string>();
      const changed =
        [...held].filter(([key, text]) => first.get(key) !== text).length +
        [...first.keys()].filter((key) => !held.has(key)).length;
      return {
        name: 'rooms',
        fields: { read, listings: held.size, changed },
        lines: [`rooms: ${read} read, ${held.size} listings with rooms, ${changed} changed since the last run`],
      };
    };

    return overlayFeed(inner, {
      items: items(),
      get state() {
        const lanes = ctx.state?.lanes ?? [];
        return withInnerState(inner, done ? byLane(lanes, (i) => changesTo(ROOMS_STATE, copies[i], held)) : undefined);
      },
      get stats() {
        return statsWithSections(inner, () => (done ? [section()] : []));
      },
    });
  },
};
addRelatedResource(rooms);

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});

const TOKEN = 'rooms-token-7d20';
const T0 = '2026-11-01T00:00:00.000Z';

describe('a related resource added in a test (Rooms)', () => {
  it('keeps its own state across runs, committed with the mark, and shows its own report section', async () => {
    const records: Array<Record<string, unknown>> = generateResoRecords(4, { seed: 52 }).map((r) => ({
      ...r,
      StandardStatus: 'Active',
      OriginatingSystemName: 'actris',
      MlgCanView: true,
    }));
    const key = (i: number) => String(records[i]!.ListingKey);
    const room = (roomKey: string, listing: number, type: string) => ({
      RoomKey: roomKey,
      ListingKey: key(listing),
      RoomType: type,
      RoomArea: 12,
      ModificationTimestamp: T0,
      OriginatingSystemName: 'actris',
      MlgCanView: true,
    });
    const s = emulator.closeAfterTest(
      await startVendorServer({
        vendor: 'mlsgrid',
        records,
        token: TOKEN,
        originatingSystem: 'actris',
        perSecond: 50,
        related: { Rooms: [room('R1', 0, 'Kitchen'), room('R2', 0, 'Bedroom'), room('R3', 1, 'Office')] },
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
        related: ['Rooms'],
      },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    });
    const stored = (i: number) => env.store.get(laneNamespace(ROOMS_STATE, 'mls'), key(i));

    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(first.source.rooms).toEqual({ read: 3, listings: 2, changed: 2 });
    expect(first.source.requestsBy?.Rooms).toBe(1);
    expect(formatSyncReport(first)).toContain('  rooms: 3 read, 2 listings with rooms, 2 changed since the last run\n');
    expect(JSON.parse((await stored(0))!)).toEqual(['Bedroom 12', 'Kitchen 12']);
    expect(await stored(2)).toBeUndefined();

    // nothing changed: the state the first run committed is read back, and nothing is told changed
    const quiet = await env.sync(te, feed);
    expect(quiet.outcome, quiet.message).toBe('ok');
    expect(quiet.source.rooms).toEqual({ read: 3, listings: 2, changed: 0 });

    // a room changed, another added to a listing that had none: exactly those two listings changed
    s.touchRelated('Rooms', 'R3', { RoomType: 'Den' });
    s.addRelated('Rooms', room('R4', 2, 'Garage'));
    const changed = await env.sync(te, feed);
    expect(changed.outcome, changed.message).toBe('ok');
    expect(changed.source.rooms).toEqual({ read: 4, listings: 3, changed: 2 });
    expect(formatSyncReport(changed)).toContain('rooms: 4 read, 3 listings with rooms, 2 changed since the last run');
    expect(JSON.parse((await stored(1))!)).toEqual(['Den 12']);
    expect(JSON.parse((await stored(2))!)).toEqual(['Garage 12']);
  });
});
