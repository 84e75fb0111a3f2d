// Fingerprints carry their version: state written by the previous version (unversioned sha1 of the
// sorted fields) is re-recorded in the current one on the next run without a single write when the
// listing is the same, and still updates the listing whose unlisted field changed. Over HTTP
// against the emulator.
import { describe, expect, it } from 'vitest';
import { openFeed } from '../../src/feeds/index.js';
import { comparedOf, FINGERPRINT_PREFIX, fingerprintV1, listingHashes } from '../../src/listing/fingerprint.js';
import { canonicalFromListing } from '../../src/listing/canonical.js';
import type { ListingCreate } from '../../src/listing/schema.js';
import { silentLogger } from '../../src/log.js';
import { mapFeed } from '../../src/mapping/index.js';
import { fingerprintNamespace } from '../../src/sync/index.js';
import { requests, row, rows, total, useEmulatorSync } from './helpers/feed.js';

const sync = useEmulatorSync();

const writes = async () => {
  const te = sync.te();
  return [
    total(await requests(te, 'RealEstateCreate')),
    total(await requests(te, 'RealEstateUpdate')),
    total(await requests(te, 'RealEstateDelete')),
  ];
};

/** The feed's listings as the sync maps them. */
async function listings(): Promise<ListingCreate[]> {
  const env = sync.env();
  const feed = env.feed();
  const out: ListingCreate[] = [];
  const opened = openFeed(feed.name, feed.source, { baseDir: env.dir, logger: silentLogger });
  for await (const i of mapFeed(opened.items, feed.mapping, { serialNumber: feed.chatbot!, keyBy: feed.keyBy }))
    if (i.kind === 'listing') out.push(i.listing);
  return out;
}

describe('fingerprint versions', () => {
  it('re-records fingerprints of the previous version without a write, and still sees a changed unlisted field', async () => {
    const [te, env] = [sync.te(), sync.env()];
    await env.writeFeed(rows(30));
    expect((await env.sync(te)).counts).toMatchObject({ created: 30 });
    const ns = fingerprintNamespace('test-feed');
    expect([...(await env.store.getAll(ns)).values()].every((fp) => fp.startsWith(FINGERPRINT_PREFIX))).toBe(true);

    // state as the previous version left it; listing 7's Location (not returned by the list) changed since
    const old = await listings();
    await env.store.set(
      ns,
      old.map((l) => [l.MLSNumber, fingerprintV1(l)] as const),
    );
    await env.writeFeed(rows(30).map((r, i) => (i === 6 ? row(7, { Location: 'North' }) : r)));
    const before = await writes();

    const report = await env.sync(te);
    expect(report.outcome).toBe('ok');
    expect(report.counts).toMatchObject({ created: 0, updated: 1, deleted: 0, unchanged: 29 });
    const after = await writes();
    expect(after.map((n, i) => n - before[i]!)).toEqual([0, 1, 0]);
    const stored = await env.store.getAll(ns);
    expect(stored.size).toBe(30);
    expect([...stored.values()].every((fp) => fp.startsWith(FINGERPRINT_PREFIX))).toBe(true);

    // and the run after writes nothing at all
    const third = await env.sync(te);
    expect(third.counts).toMatchObject({ created: 0, updated: 0, unchanged: 30 });
  });

  it('builds the comparison hash of a feed listing as comparedOf its canonical form (one rule for both sides)', async () => {
    const env = sync.env();
    await env.writeFeed([...rows(5), row(6, { Bathrooms: 2.25, Location: ' a  b ' })]);
    for (const l of await listings()) {
      for (const ignore of [new Set<string>(), new Set(['DaysOnMarket', 'Location'])]) {
        expect(listingHashes(l, ignore).hash).toEqual(comparedOf(canonicalFromListing(l), ignore).hash);
      }
    }
  });
});
