// The seal's parts (src/sync/settle/seal.ts, src/feeds/source/file-identity.ts): the list's digest
// takes each key's copies and nothing else (not the order the list came in), a stored seal of
// another shape seals nothing, and a file's identity is its bytes, told apart from a file written
// since it was hashed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileIdentity, unchangedSince } from '../../src/feeds/source/file-identity.js';
import { RemoteIndex } from '../../src/sync/remote/remote-index.js';
import { createFileStore } from '../../src/state/file-store.js';
import { listDigest, readSeal, sealBefore, sealDiffers, sealText } from '../../src/sync/settle/seal.js';
import { stateDigest, stateDigestSliced } from '../../src/sync/settle/seal.js';

const h = (n: number) => new Uint8Array(20).fill(n);

/** listDigest of a map of each key's copies, its keys sorted as the callers sort them */
const digestOf = (byKey: ReadonlyMap<string, Uint8Array[]>, unkeyed: number) =>
  listDigest([...byKey.keys()].sort(), (key) => byKey.get(key) ?? [], unkeyed);

describe('listDigest', () => {
  const base = new Map([
    ['A', [h(1)]],
    ['B', [h(2)]],
    ['C', [h(3)]],
  ]);
  const digest = digestOf(base, 0);

  it("is the same for the same keys and copies, whatever the list's order", () => {
    const reordered = new Map([...base].reverse());
    expect(digestOf(reordered, 0)).toBe(digest);
    const twoCopies = (order: number[]) => digestOf(new Map([['A', order.map(h)]]), 0);
    expect(twoCopies([1, 2])).toBe(twoCopies([2, 1]));
  });

  it('differs for a copy edited, added or removed, a key renamed, or a listing with no key', () => {
    const variants = [
      new Map([...base, ['B', [h(9)]]]),
      new Map([...base, ['B', [h(2), h(2)]]]),
      new Map([...base, ['D', [h(4)]]]),
      new Map([...base].filter(([k]) => k !== 'C')),
      new Map([...base].map(([k, v]) => [k === 'C' ? 'c' : k, v])),
    ];
    const digests = new Set([digest, ...variants.map((v) => digestOf(v, 0)), digestOf(base, 1)]);
    expect(digests.size).toBe(variants.length + 2);
  });

  it('tells keys apart however they are cut: ["AB", "C"] is not ["A", "BC"]', () => {
    const one = new Map([
      ['AB', [h(1)]],
      ['C', [h(1)]],
    ]);
    const two = new Map([
      ['A', [h(1)]],
      ['BC', [h(1)]],
    ]);
    expect(digestOf(one, 0)).not.toBe(digestOf(two, 0));
  });
});

describe("the index's copies, as a seal digests them", () => {
  /** an index of these rows (id, key, hash byte), finished as paging finishes it (one pass) */
  const indexOf = (rows: Array<[number, string, number]>) => {
    const index = new RemoteIndex();
    for (const [id, key, n] of rows) index.add({ id, key, hash: h(n) }, 1);
    return index.finish(1);
  };

  it('gives each key its copies in ID order, and counts the listings with no key, a key held once or twice', () => {
    const once = indexOf([
      [1, 'A', 1],
      [2, '', 9],
      [3, 'B', 2],
    ]);
    expect(once.hashesOf('A')).toEqual([h(1)]);
    expect(once.hashesOf('Z')).toEqual([]);
    expect(once.unkeyed).toBe(1);
    const twice = indexOf([
      [1, 'A', 1],
      [2, '', 9],
      [3, 'A', 3],
      [4, '', 8],
    ]);
    expect(twice.hashesOf('A')).toEqual([h(1), h(3)]);
    expect(twice.unkeyed).toBe(2);
  });
});

describe("the index's keys in order (keysInOrder), what a sealed run digests", () => {
  // keys of every kind a sort may order differently: case, no key, non-ASCII, a surrogate pair
  // (and any short string: many distinct keys, so the order's cycles are long)
  const key = fc.oneof(
    fc.constantFrom('A', 'a', 'B', 'AB', '', 'é', 'z', '\u{1F600}', '\uFFFF', 'A ', '10', '9'),
    fc.string({ maxLength: 3, unit: 'binary' }),
  );
  const rows = fc.array(fc.tuple(fc.integer({ min: 1, max: 200 }), key, fc.integer({ min: 0, max: 255 })), {
    maxLength: 120,
  });

  it('are the keys sorted as Array.prototype.sort sorts them, each with its copies, and digest as the plain rule does', () => {
    fc.assert(
      fc.property(rows, fc.boolean(), (given, onePass) => {
        const index = new RemoteIndex();
        for (const [id, k, n] of given) index.add({ id, key: k, hash: h(n) }, 1);
        // (one pass as a paging finishes it, or the union of the passes: the other way the copies are linked)
        index.finish(onePass ? 1 : undefined);
        const { keys, rows: firsts } = index.keysInOrder();
        const plain = [...index.keys()].sort();
        expect(keys).toEqual(plain);
        keys.forEach((k, i) => expect(index.hashesFrom(firsts[i]!)).toEqual(index.hashesOf(k)));
        expect(listDigest(keys, (_k, i) => index.hashesFrom(firsts[i]!), index.unkeyed)).toBe(
          listDigest(plain, (k) => index.hashesOf(k), index.unkeyed),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('a stored seal', () => {
  const seal = {
    ...sealBefore({ code: 'c', feed: 'f', seed: 's', file: { size: 10, sha256: 'x' } }),
    list: 'l',
    listings: 3,
    state: 'd',
  };

  it('reads back as written; another shape, or no JSON, seals nothing', () => {
    expect(readSeal(sealText(seal))).toEqual(seal);
    expect(readSeal(undefined)).toBeUndefined();
    expect(readSeal('{')).toBeUndefined();
    expect(readSeal(JSON.stringify({ ...seal, v: 1 }))).toBeUndefined();
    // (a seal of before the stored state's digest: it vouches for no state)
    const { state: _s, ...older } = seal;
    expect(readSeal(JSON.stringify({ ...older, v: 1 }))).toBeUndefined();
    expect(readSeal(JSON.stringify({ ...seal, listings: -1 }))).toBeUndefined();
  });

  it('names the part that differs, the list only once it is known', () => {
    const { list: _l, listings: _n, state: _d, ...before } = seal;
    expect(sealDiffers(seal, before)).toBeUndefined();
    expect(sealDiffers(seal, { ...before, file: { size: 10, sha256: 'y' } })).toBe('file');
    expect(sealDiffers(seal, { ...before, seed: 't' })).toBe('mapping');
    expect(sealDiffers(seal, { ...before, list: 'm', listings: 3 })).toBe("chatbot's listings");
    expect(sealDiffers(seal, { ...before, list: 'l', listings: 4 })).toBe('listing count');
    expect(sealDiffers(seal, { ...before, list: 'l', listings: 3, state: 'e' })).toBe('stored state');
  });

  it('digests the stored state: each entry of the fingerprints and of the stamps, in whatever order a store gives them', () => {
    const fps = new Map([
      ['A', 'fa'],
      ['B', 'fb'],
    ]);
    const stamps = new Map([
      ['A', 'sa'],
      ['B', 'sb'],
    ]);
    const d = stateDigest(fps, stamps);
    expect(stateDigest(new Map([...fps].reverse()), new Map([...stamps].reverse()))).toBe(d);
    const others = [
      // a value changed, two keys' values swapped, the namespaces swapped
      stateDigest(new Map([...fps, ['B', 'fc']]), stamps),
      stateDigest(
        new Map([
          ['A', 'fb'],
          ['B', 'fa'],
        ]),
        stamps,
      ),
      stateDigest(stamps, fps),
      // an entry gone, one more, a key renamed
      stateDigest(new Map([['A', 'fa']]), stamps),
      stateDigest(new Map([...fps, ['C', 'fc']]), stamps),
      stateDigest(
        new Map([
          ['A', 'fa'],
          ['C', 'fb'],
        ]),
        stamps,
      ),
      // where the key ends and the value begins
      stateDigest(
        new Map([
          ['Af', 'a'],
          ['B', 'fb'],
        ]),
        stamps,
      ),
    ];
    expect(new Set([d, ...others]).size).toBe(others.length + 1);
  });
});

describe('stateDigestSliced (the digest taken while the chatbot is paged)', () => {
  const go = () => new Promise<boolean>((resume) => setImmediate(() => resume(true)));
  const entries = fc.uniqueArray(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 40 })), {
    selector: ([k]) => k,
    maxLength: 50,
  });

  it('is stateDigest, for any entries', async () => {
    await fc.assert(
      fc.asyncProperty(entries, entries, async (f, s) => {
        const [fps, stamps] = [new Map(f), new Map(s)];
        expect(await stateDigestSliced(fps, stamps, go)).toBe(stateDigest(fps, stamps));
      }),
    );
  });

  it('is stateDigest across its slices, over the state file a run reads (its walk held open between them)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-sliced-'));
    try {
      const store = await createFileStore(join(dir, 'state.lmdb'));
      const n = 4_501; // two whole slices and some
      await store.set(
        'fp',
        Array.from({ length: n }, (_, i) => [`K${i}`, `f${i}`] as const),
      );
      await store.set(
        'st',
        Array.from({ length: n }, (_, i) => [`K${i}`, `s${i}`] as const),
      );
      const [fps, stamps] = [await store.getAll('fp'), await store.getAll('st')];
      let pauses = 0;
      const sliced = await stateDigestSliced(fps, stamps, () => (pauses++, go()));
      expect(pauses).toBe(4); // 2,000 entries a slice, each namespace walked on its own
      expect(sliced).toBe(stateDigest(fps, stamps));
      expect(sliced).toBe(stateDigest(new Map(fps), new Map(stamps)));
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops at the slice where it is no longer wanted', async () => {
    const big = new Map(Array.from({ length: 5_000 }, (_, i) => [`K${i}`, 'v'] as const));
    let pauses = 0;
    const stop = () => Promise.resolve(++pauses < 2);
    expect(await stateDigestSliced(big, big, stop)).toBeUndefined();
    expect(pauses).toBe(2);
  });
});

describe('fileIdentity', () => {
  let dir = '';
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'feedsync-identity-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is the sha256 of the bytes: the same bytes written again are the same file, other bytes of the same size are not', async () => {
    const path = join(dir, 'feed.csv');
    await writeFile(path, 'a,b\n1,2\n');
    const first = await fileIdentity(path);
    await writeFile(path, 'a,b\n1,2\n');
    const again = await fileIdentity(path);
    await writeFile(path, 'a,b\n1,3\n');
    const other = await fileIdentity(path);
    if (!('identity' in first) || !('identity' in again) || !('identity' in other)) throw new Error('not hashed');
    expect(again.identity).toEqual(first.identity);
    expect(other.identity.size).toBe(first.identity.size);
    expect(other.identity.sha256).not.toBe(first.identity.sha256);
  });

  it('a file written since it was hashed is not the one hashed; a missing file has no identity', async () => {
    const path = join(dir, 'moving.csv');
    await writeFile(path, 'a,b\n1,2\n');
    const hashed = await fileIdentity(path);
    if (!('look' in hashed)) throw new Error('not hashed');
    expect(await unchangedSince(path, hashed.look)).toBe(true);
    await writeFile(path, 'a,b\n1,2\n');
    expect(await unchangedSince(path, hashed.look)).toBe(false);
    expect(await fileIdentity(join(dir, 'none.csv'))).toMatchObject({ problem: expect.stringContaining('none.csv') });
  });
});
