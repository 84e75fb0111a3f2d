// settle/lane-commit.ts: a commit leaves out the written fingerprints and unlisted fields that the
// acknowledged writes' records (settle/acked.ts) put in the store already (ackedInStore). Held to the
// plain rule, the commit that sets them all again, on generated lanes: the same writes told to the
// recorder as write/execute.ts tells them (each pair pushed, then told), applies of it failing at
// random, records found in step, deletes, keys written twice, and a store holding older values;
// every namespace of the lane ends the same.
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import type { KvStore, StateChange } from '../../src/state/kv-store.js';
import { Entries } from '../../src/sync/model/entries.js';
import {
  fingerprintNamespace,
  missingNamespace,
  stampNamespace,
  unlistedNamespace,
} from '../../src/sync/model/state-names.js';
import { recordAcked } from '../../src/sync/settle/acked.js';
import { ackedInStore, commitLanes, type LaneCommitInput } from '../../src/sync/settle/lane-commit.js';

const LANE = 'feed>SN-1';
const NAMESPACES = [fingerprintNamespace, unlistedNamespace, stampNamespace, missingNamespace].map((ns) => ns(LANE));

const key = fc.constantFrom<string>('A', 'B', 'C', 'D', 'E', 'F');
const pair = fc.tuple(key, fc.stringMatching(/^[a-z0-9]{1,6}$/));
const lane = fc.record({
  before: fc.array(pair, { maxLength: 6 }),
  writes: fc.array(fc.record({ key, fingerprint: pair.map(([, v]) => `2.${v}`), unlisted: pair.map(([, v]) => v) }), {
    maxLength: 12,
  }),
  /** which applies of the recorder fail (by their order) */
  failing: fc.array(fc.boolean(), { maxLength: 12 }),
  found: fc.array(pair, { maxLength: 3 }),
  deleted: fc.uniqueArray(key, { maxLength: 3 }),
  stamps: fc.array(pair, { maxLength: 4 }),
});
type Lane = typeof lane extends fc.Arbitrary<infer T> ? T : never;

/** the lane run against `store`: its writes told as execute.ts tells them, drained, then committed; with `plain`, ackedStored withheld (the rule) */
async function run(store: KvStore, l: Lane, plain: boolean): Promise<{ fast: boolean }> {
  if (l.before.length)
    await store.apply([
      { ns: fingerprintNamespace(LANE), set: l.before },
      { ns: unlistedNamespace(LANE), set: l.before },
    ]);
  let applies = 0;
  const failing: KvStore = Object.create(store) as KvStore;
  failing.applyInBackground = (changes: readonly StateChange[]) =>
    l.failing[applies++] ? Promise.reject(new Error('disk full')) : store.applyInBackground(changes);
  const acked = recordAcked(failing, LANE, () => {});
  const written = new Entries({ digests: true });
  const unlisted = new Entries();
  const told: Array<Promise<void>> = [];
  for (const w of l.writes) {
    written.push(w.key, w.fingerprint);
    unlisted.push(w.key, w.unlisted);
    // (an update's acknowledgement is waited for: an apply of its own, so that failures fall on some)
    told.push(acked.add(w.key, w.fingerprint, w.unlisted, told.length % 3 === 0));
  }
  await Promise.all(told);
  const stored = await acked.drain();
  const recordFingerprints = new Entries({ digests: true });
  const recordUnlisted = new Entries();
  for (const [k, v] of l.found) {
    recordFingerprints.push(k, `2.${v}`);
    recordUnlisted.push(k, v);
  }
  const stamped = new Entries({ digests: true });
  for (const [k, v] of l.stamps) stamped.push(k, v);
  const input: LaneCommitInput = {
    id: LANE,
    tally: { recordFingerprints, recordUnlisted, recordStamps: new Entries({ digests: true }) },
    exec: { written, unlisted, stamped, deletedKeys: l.deleted },
    guard: { marks: { set: [], clear: [] } },
    missingSince: new Map(),
    ...(!plain && { ackedStored: stored }),
  };
  await commitLanes(store, [input]);
  return { fast: ackedInStore(input) };
}

async function lanes(store: KvStore): Promise<Array<Array<[string, string]>>> {
  return Promise.all(NAMESPACES.map(async (ns) => [...(await store.getAll(ns))].sort()));
}

describe('a commit leaves out what the acknowledged writes stored', () => {
  it('ends as the plain commit does, on generated lanes (memory)', async () => {
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(lane, async (l) => {
        const [a, b] = [createMemoryStore(), createMemoryStore()];
        if ((await run(a, l, false)).fast) fast++;
        await run(b, l, true);
        expect(await lanes(a)).toEqual(await lanes(b));
      }),
      { numRuns: 400 },
    );
    // (not vacuous: the fast path was taken, and left aside)
    expect(fast).toBeGreaterThan(40);
    expect(fast).toBeLessThan(360);
  });

  it('the same on the state file, and a first sync commits only its stamps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'commit-acked-'));
    try {
      const [a, b] = [await createFileStore(join(dir, 'a.lmdb')), await createFileStore(join(dir, 'b.lmdb'))];
      const first: Lane = {
        before: [],
        writes: ['A', 'B', 'C'].map((k) => ({ key: k, fingerprint: `2.${k}`, unlisted: `{"k":"${k}"}` })),
        failing: [],
        found: [],
        deleted: [],
        stamps: [['A', 's']],
      };
      const applied: StateChange[][] = [];
      const seen: KvStore = Object.create(a) as KvStore;
      seen.apply = (changes) => (applied.push([...changes]), a.apply(changes));
      expect(await run(seen, first, false)).toEqual({ fast: true });
      await run(b, first, true);
      expect(await lanes(a)).toEqual(await lanes(b));
      expect(applied.at(-1)!.map((c) => c.ns)).toEqual([stampNamespace(LANE)]);
      await fc.assert(
        fc.asyncProperty(lane, async (l) => {
          await run(a, l, false);
          await run(b, l, true);
          expect(await lanes(a)).toEqual(await lanes(b));
        }),
        { numRuns: 60 },
      );
      await a.close();
      await b.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
