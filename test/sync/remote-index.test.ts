// The compact remote side (RemoteIndex) against the plain rules it stands in for: grouping the list
// items by key in ID order (a Map of arrays), the stored fingerprints (a Map), and the changes it
// names (comparedChanges) against diffCanonical of the canonical forms.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalFromListing, canonicalFromListItem, diffCanonical } from '../../src/listing/canonical.js';
import {
  comparedOf,
  comparedOfListItem,
  comparedChanges,
  KEPT_CHARS,
  fingerprintListing,
  fingerprintV1,
  keptOfListing,
  listingHashes,
} from '../../src/listing/fingerprint.js';
import { RemoteIndex } from '../../src/sync/remote/remote-index.js';
import { describeChange } from '../../src/sync/model/changes.js';
import { toRemote } from '../../src/sync/remote/remote.js';
import { stampOf } from '../../src/sync/plan/record-stamp.js';
import { listing, listItem } from './helpers/listings.js';

const keys = fc.constantFrom('A', 'B', 'C', ' D ', '', 'E');
const item = fc.record({
  id: fc.integer({ min: 1, max: 3_000_000_000 }),
  key: keys,
  price: fc.integer({ min: 0, max: 5 }),
  round: fc.integer({ min: 1, max: 2 }),
});

/**
 * While paging: what pagedCopy says of `key` against the rows added so far (the plain rule): in the
 * first pass, its one row (ID and hash), 'not yet' with none, 'not one' with several; once a row of
 * a later pass came (or for the empty key), 'not one' (a row read again under another key may also
 * make its old key 'not one': never a copy that is not the key's). `rows`: the last reading of each
 * ID; `read`: every reading so far, in order (a later pass's reading stays one when a first-pass
 * reading of its ID comes after it, and a listing that left the key and came back has left it).
 */
function seenSoFar(
  index: RemoteIndex,
  rows: ReadonlyArray<{ row: ReturnType<typeof toRemote>; round: number }>,
  read: ReadonlyArray<{ id: number; key: string; round: number }>,
  key: string,
): void {
  const got = index.pagedCopy(key);
  if (key === '' || read.some((r) => r.round !== 1)) return expect(got).toBe('not one');
  const copies = rows.filter((r) => r.row.key === key);
  // (several copies: 'not one'; one, after a listing read under the key was read under another: 'not
  // one' too, the plain path judges it)
  const readHere = new Set(read.filter((r) => r.key === key).map((r) => r.id));
  const leftIt = read.some((r) => readHere.has(r.id) && r.key !== key);
  if (got === 'not one') return expect(copies.length !== 1 || leftIt).toBe(true);
  if (copies.length === 0) return expect(got).toBe('not yet');
  expect(copies).toHaveLength(1);
  expect(got).not.toBe('not yet');
  if (typeof got !== 'string')
    expect(Buffer.from(got.hash).toString('hex')).toBe(Buffer.from(copies[0]!.row.hash).toString('hex'));
}

describe('RemoteIndex', () => {
  it('holds the same copies, in ID order, as grouping the items by key', () => {
    // (lists the generator makes rarely, on which seenSoFar once judged by the last readings alone:
    // an ID read in a later pass and then again in the first; a listing read under A, then B, then A)
    const once = (id: number, key: string, round: number) => ({ id, key, price: 0, round });
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 40 }),
        fc.boolean(),
        fc.constantFrom<'MLSNumber' | 'URL'>('MLSNumber', 'URL'),
        fc.option(fc.constantFrom(1, 2), { nil: undefined }),
        // bytes of compared JSON that stay in memory (the rest goes to a file: compared-store.ts)
        fc.integer({ min: 0, max: 9000 }),
        // in ID order (as a list is paged: the index then needs no map of IDs until one comes out of order)
        fc.boolean(),
        (unordered, keep, keyBy, round, inMemory, inIdOrder) => {
          const items = inIdOrder ? [...unordered].sort((a, b) => a.id - b.id || a.round - b.round) : unordered;
          const index = new RemoteIndex({ keepCompared: keep, keepOtherKey: true, comparedMemoryBytes: inMemory });
          // the plain rule: the last reading of an ID wins; kept are the rows of `round` (or all)
          const latest = new Map<number, { row: ReturnType<typeof toRemote>; round: number }>();
          const read: Array<{ id: number; key: string; round: number }> = [];
          let bytes = 0;
          let spilled = 0;
          for (const it of items) {
            const l = listing(it.key.trim() || 'X', {
              MLSNumber: it.key,
              Url: `https://x/${it.key.trim()}`,
              SalePrice: it.price,
            });
            const row = toRemote(
              listItem(it.id, l, { MLSNumber: it.key, Url: it.key.trim() ? `https://x/${it.key.trim()}` : '' }),
              {
                keyBy,
                keepCompared: keep,
                keepOtherKey: true,
              },
            );
            index.add(row, it.round);
            if (row.compared !== undefined && (bytes += Buffer.byteLength(row.compared)) > inMemory) spilled++;
            latest.set(it.id, { row, round: it.round });
            read.push({ id: it.id, key: row.key, round: it.round });
            seenSoFar(index, [...latest.values()], read, it.key);
          }
          index.finish(round);
          const kept = [...latest.values()]
            .filter((x) => round === undefined || x.round === round)
            .sort((a, b) => a.row.id - b.row.id);
          const plain = new Map<string, Array<ReturnType<typeof toRemote>>>();
          for (const { row } of kept) if (row.key !== '') plain.set(row.key, [...(plain.get(row.key) ?? []), row]);
          expect(index.count).toBe(kept.length);
          expect([...index.keys()].sort()).toEqual([...plain.keys()].sort());
          for (const [key, rows] of plain) {
            const got = index.get(key)!;
            expect(got.map((r) => [r.id, r.key, r.otherKey, Buffer.from(r.hash).toString('hex'), r.compared])).toEqual(
              rows.map((r) => [r.id, r.key, r.otherKey, Buffer.from(r.hash).toString('hex'), r.compared]),
            );
          }
          expect(index.spilledPages).toBe(spilled);
          expect([...index.severalCopies()].sort()).toEqual(
            [...plain]
              .filter(([, rows]) => rows.length > 1)
              .map(([key]) => key)
              .sort(),
          );
          expect(index.pagedCopy(items[0]?.key ?? 'A')).toBe('not one');
          index.close();
        },
      ),
      {
        examples: [
          [[once(5, 'A', 2), once(5, 'A', 1)], false, 'MLSNumber', undefined, 0, false],
          [[once(5, 'A', 1), once(5, 'B', 1), once(5, 'A', 1)], false, 'MLSNumber', undefined, 0, false],
        ],
      },
    );
  });

  it("says 'not one' of a key once a later pass began, though the ID's last reading was of the first pass", () => {
    const index = new RemoteIndex();
    const row = toRemote(listItem(5, listing('A')), { keyBy: 'MLSNumber' });
    index.add(row, 2);
    index.add(row, 1);
    // (paging reads the passes in turn: the first pass's map was let go at the later pass's row)
    expect(index.pagedCopy('A')).toBe('not one');
    index.finish(1);
    expect(index.count).toBe(1);
    expect(index.get('A')!.map((c) => c.id)).toEqual([5]);
  });

  it("says 'not one' of a key a listing left and came back to in the first pass, and holds it once", () => {
    const index = new RemoteIndex();
    const add = (key: string) => index.add(toRemote(listItem(5, listing(key)), { keyBy: 'MLSNumber' }), 1);
    add('A');
    add('B');
    add('A');
    // (once it left A, what the pass said of A no longer held: the finished index judges A)
    expect(index.pagedCopy('A')).toBe('not one');
    expect(index.pagedCopy('B')).toBe('not one');
    index.finish(1);
    expect([...index.keys()]).toEqual(['A']);
    expect(index.get('A')!.map((c) => c.id)).toEqual([5]);
    expect(index.severalCopies()).toEqual([]);
  });

  it("a list paged in one pass with one copy a key is finished from the pass's own map, as the plain linking finishes it", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 1e9 }), { maxLength: 60 }),
        fc.boolean(),
        (ids, withEmpty) => {
          const rows = ids.map((id, i) => toRemote(listItem(id, listing(`K${i}`)), { keyBy: 'MLSNumber' }));
          if (withEmpty && ids.length)
            rows.push(toRemote(listItem(ids[0]! + 1e9, listing('E'), { MLSNumber: '' }), { keyBy: 'MLSNumber' }));
          const fast = new RemoteIndex();
          const plain = new RemoteIndex();
          for (const r of rows) fast.add(r, 1);
          // (a later pass's row makes the plain index link its rows itself)
          for (const r of rows) plain.add(r, 2);
          fast.finish(1);
          plain.finish(2);
          expect(fast.count).toBe(plain.count);
          expect([...fast.keys()].sort()).toEqual([...plain.keys()].sort());
          for (const key of plain.keys())
            expect(fast.get(key)!.map((c) => [c.id, Buffer.from(c.hash).toString('hex')])).toEqual(
              plain.get(key)!.map((c) => [c.id, Buffer.from(c.hash).toString('hex')]),
            );
          expect(fast.severalCopies()).toEqual([]);
        },
      ),
    );
  });

  it('names, once paged, the copy a record was taken against while paging, and the keys held twice', () => {
    const index = new RemoteIndex();
    const add = (id: number, key: string) => index.add(toRemote(listItem(id, listing(key)), { keyBy: 'MLSNumber' }), 1);
    add(1, 'A');
    add(2, 'B');
    const a = index.pagedCopy('A');
    expect(index.pagedCopy('C')).toBe('not yet');
    if (typeof a === 'string') throw new Error(`A's copy: ${a}`);
    index.takeEarly(a.row);
    // a later page brings a second copy of A: no copy to take against any more
    add(3, 'A');
    expect(index.pagedCopy('A')).toBe('not one');
    index.finish(1);
    expect(index.severalCopies()).toEqual(['A']);
    expect(index.takenCopy('A')).toBe(1);
    expect(index.takenCopy('B')).toBeUndefined();
    expect(index.pagedCopy('B')).toBe('not one');
  });

  it('gives back every stored fingerprint of a key it holds, of any version', () => {
    const index = new RemoteIndex();
    for (const [id, key] of [
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
      [4, 'D'],
    ] as const)
      index.add(toRemote(listItem(id, listing(key)), { keyBy: 'MLSNumber' }), 1);
    index.finish(1);
    const stored = new Map([
      ['A', fingerprintListing(listing('A'))],
      ['B', fingerprintV1(listing('B'))],
      ['C', '2.not-a-sha1'],
      ['GONE', fingerprintListing(listing('GONE'))],
    ]);
    index.attachFingerprints(stored);
    for (const key of ['A', 'B', 'C']) expect(index.fingerprints.get(key)).toBe(stored.get(key));
    expect(index.fingerprints.get('D')).toBeUndefined();
    expect(index.fingerprints.get('GONE')).toBeUndefined(); // never asked: the chatbot does not hold it
    index.dropFingerprints();
    expect(index.fingerprints.get('A')).toBeUndefined();
  });

  it('gives a stamp check what get and fingerprints.get give: the same stamp, for a key with one copy and a fingerprint only', () => {
    const index = new RemoteIndex();
    for (const [id, key] of [
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
      [4, 'D'],
      [5, 'DUP'],
      [6, 'DUP'],
      [7, 'E'],
    ] as const)
      index.add(toRemote(listItem(id, listing(key)), { keyBy: 'MLSNumber' }), 1);
    index.finish(1);
    const v2 = fingerprintListing(listing('A'));
    const stored = new Map([
      ['A', v2],
      ['B', fingerprintV1(listing('B'))],
      ['C', '2.not-a-sha1'],
      // a version-2 form that is not the canonical encoding of its bytes (a last character with spare bits set)
      ['E', v2.slice(0, -1) + (v2.endsWith('A') ? 'B' : 'A')],
      ['DUP', v2],
    ]);
    index.attachFingerprints(stored);
    const [seed, text] = ['s'.repeat(27), 'c-a record as read'];
    for (const key of ['A', 'B', 'C', 'E']) {
      const inputs = index.stampInputs(key)!;
      const copy = index.get(key)![0]!;
      expect(Buffer.from(inputs.hash)).toEqual(Buffer.from(copy.hash));
      expect(stampOf(seed, text, inputs.hash, inputs.fingerprint)).toBe(
        stampOf(seed, text, copy.hash, index.fingerprints.get(key)!),
      );
    }
    // fingerprints of other keys give other stamps
    const a = index.stampInputs('A')!;
    expect(new Set(['A', 'B', 'C', 'E'].map((k) => stampOf(seed, text, a.hash, index.fingerprints.get(k)!))).size).toBe(
      4,
    );
    expect(index.stampInputs('D')).toBeUndefined(); // no fingerprint
    expect(index.stampInputs('DUP')).toBeUndefined(); // two copies
    expect(index.stampInputs('GONE')).toBeUndefined();
  });
});

describe('comparedChanges', () => {
  const patch = fc.record(
    {
      SalePrice: fc.integer({ min: 0, max: 2_000_000 }),
      Bedrooms: fc.integer({ min: 0, max: 9 }),
      City: fc.constantFrom('Austin', 'Round Rock', ' Austin ', 'San  Marcos'),
      Description: fc.constantFrom('a', 'b  c', '', 'long '.repeat(60), 'longer '.repeat(60)),
      Images: fc.constantFrom(0, 1, 2).map((n) => Array.from({ length: n }, (_, i) => `https://i/${i}`)),
      Latitude: fc.constantFrom(30.25, 30.5, 0),
      YearBuilt: fc.integer({ min: 1990, max: 1992 }),
    },
    { requiredKeys: [] },
  );
  it('names the fields diffCanonical names (a long old value as not kept), and none exactly when the hashes agree', () => {
    fc.assert(
      fc.property(patch, patch, (a, b) => {
        const now = listing('K', a);
        const item = listItem(7, listing('K', b));
        const feed = listingHashes(now);
        const remote = comparedOfListItem(item, new Set(), true);
        const named = comparedChanges(feed.compared, remote.kept!);
        const slow = diffCanonical(canonicalFromListing(now), canonicalFromListItem(item));
        const long = (v: unknown) => JSON.stringify(v ?? '').length > KEPT_CHARS;
        expect(named.map((c) => [c.field, c.old, c.new, c.oldNotKept ?? false])).toEqual(
          slow.map((c) => (long(c.old) ? [c.field, undefined, c.new, true] : [c.field, c.old, c.new, false])),
        );
        expect(named.length === 0).toBe(feed.hash.equals(remote.hash));
      }),
    );
  });
});

describe('listingHashes with keep (a create: its hashes and its kept form from one pass)', () => {
  const patch = fc.record(
    {
      SalePrice: fc.integer({ min: 0, max: 2_000_000 }),
      City: fc.constantFrom('Austin', ' Austin ', 'San  Marcos', ''),
      Description: fc.constantFrom('a', 'b  c', '', 'long '.repeat(60)),
      Images: fc.constantFrom(0, 1, 2, 30).map((n) => Array.from({ length: n }, (_, i) => `https://i/${i}`)),
      Latitude: fc.constantFrom(30.25, 30.1234567, 0),
      Bathrooms: fc.constantFrom(2, 2.5, 2.25),
      Location: fc.constantFrom('North', ' a  b '),
    },
    { requiredKeys: [] },
  );
  const ignores = fc.constantFrom(
    new Set<string>(),
    new Set(['City', 'Description', 'Location']),
    new Set(['SalePrice', 'Images']),
  );
  it('keeps what keptOfListing keeps (ignored fields too), and hashes as without keep', () => {
    fc.assert(
      fc.property(patch, ignores, (p, ignore) => {
        const l = listing('K', p);
        const fast = listingHashes(l, ignore, true);
        const plain = listingHashes(l, ignore);
        expect(fast.kept).toBe(keptOfListing(l));
        expect({ ...fast, kept: undefined }).toEqual({ ...plain, kept: undefined });
      }),
    );
  });
});

describe('comparedOfListItem', () => {
  const text = fc.constantFrom(
    '',
    ' ',
    '350000',
    '350,000',
    '2.50',
    'abc',
    ' a  b ',
    '["https://i/1"," https://i/2 "]',
    'https://i/1,https://i/2',
    '[{"Key":"k","value":"v"}]',
    'k:v;x:y',
  );
  const patch = fc.record(
    {
      SaleType: fc.constantFrom('for_sale', 'for_rent', 'other', ''),
      Price: text,
      SalePrice: text,
      RentPrice: text,
      City: text,
      Images: text,
      ExtensionColumn: text,
      Bedrooms: text,
      LATITUDE: fc.constantFrom(0, 30.1234567, -97.5),
    },
    { requiredKeys: [] },
  );
  it('hashes a list item as comparedOf its canonical form does (one rule for list items)', () => {
    fc.assert(
      fc.property(patch, fc.constantFrom(new Set<string>(), new Set(['City', 'SalePrice'])), (p, ignore) => {
        const item = listItem(3, listing('K'), p);
        const fast = comparedOfListItem(item, ignore);
        const slow = comparedOf(canonicalFromListItem(item), ignore);
        expect(fast.compared).toBe(slow.compared);
        expect(fast.hash.equals(slow.hash)).toBe(true);
      }),
    );
  });
});

describe('a long old value in the change log', () => {
  it('is named as not kept, not as unset', () => {
    const now = listing('K', { Description: 'new '.repeat(80) });
    const item = listItem(7, listing('K', { Description: 'old '.repeat(80) }));
    const changes = comparedChanges(listingHashes(now).compared, comparedOfListItem(item, new Set(), true).kept!);
    expect(changes).toEqual([{ field: 'Description', old: undefined, new: now.Description!.trim(), oldNotKept: true }]);
    expect(describeChange({ op: 'update', key: 'K', reason: 'fields', changes })).toMatch(
      /^~ K update: Description \(long value, not kept\) → "new new/,
    );
  });
});
