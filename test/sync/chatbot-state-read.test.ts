// loadChatbotState (sync/settle/state.ts): a chatbot's sync state as its paging reads it. The
// namespaces every lane shares (a mark, the last good valid count, the display rules: one entry a
// lane, 500 in a fleet of 500 chatbots) are read by this chatbot's keys only, not whole once per
// chatbot (with Redis each whole read was an HGETALL of every lane's entry, 100 of them a job);
// what is read is the same as reading each namespace whole.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/state/memory-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { loadChatbotState } from '../../src/sync/settle/state.js';
import {
  fingerprintNamespace,
  GOOD_VALID_NAMESPACE,
  MARK_NAMESPACE,
  missingNamespace,
  RULES_NAMESPACE,
  SYNCED_NAMESPACE,
  soldWindowNamespace,
  type ChatbotFeed,
} from '../../src/sync/model/state-names.js';

const SHARED = [MARK_NAMESPACE, GOOD_VALID_NAMESPACE, RULES_NAMESPACE, SYNCED_NAMESPACE];

/** The store, with the namespaces read whole (getAll) counted. */
function counted(store: KvStore): KvStore & { whole: string[] } {
  const whole: string[] = [];
  return {
    ...store,
    whole,
    getAll: (ns) => {
      whole.push(ns);
      return store.getAll(ns);
    },
  };
}

/** What loadChatbotState read before: every namespace whole, then this chatbot's entries picked out. */
async function readWhole(store: KvStore, feeds: readonly ChatbotFeed[]) {
  const [marks, goods, rules, synced] = await Promise.all(SHARED.map((ns) => store.getAll(ns)));
  return new Map(
    await Promise.all(
      feeds.map(async (f) => {
        const good = Number(goods!.get(f.name));
        const fingerprints = await store.getAll(fingerprintNamespace(f.name));
        return [
          f.name,
          {
            name: f.name,
            keyBy: f.keyBy,
            committed: synced!.has(f.name) || goods!.has(f.name),
            fingerprints,
            missingSince: await store.getAll(missingNamespace(f.name)),
            recurring: new Set((await store.getAll(`recur:${f.name}`)).keys()),
            soldUntil: await store.getAll(soldWindowNamespace(f.name)),
            ...(marks!.has(f.name) && { mark: marks!.get(f.name) }),
            ...(Number.isSafeInteger(good) && good >= 0 && { lastGoodValid: good }),
            ...(rules!.has(f.name) && { rules: rules!.get(f.name) }),
          },
        ] as const;
      }),
    ),
  );
}

describe("a chatbot's state read", () => {
  it('reads its own entries of the shared namespaces by key (none whole), and finds what a whole read finds', async () => {
    const store = createMemoryStore();
    const lanes = Array.from({ length: 50 }, (_, i) => `mls${i % 5}>SN-${i}`);
    for (const [i, lane] of lanes.entries()) {
      await store.set(MARK_NAMESPACE, [[lane, `2026-12-0${(i % 9) + 1}T00:00:00Z`]]);
      if (i % 3) await store.set(GOOD_VALID_NAMESPACE, [[lane, String(100 + i)]]);
      if (i % 2) await store.set(RULES_NAMESPACE, [[lane, JSON.stringify({ hide: [`f${i}`] })]]);
      if (i % 7 === 0) await store.set(SYNCED_NAMESPACE, [[lane, '1']]);
      await store.set(fingerprintNamespace(lane), [
        [`L${i}-1`, `fp${i}`],
        [`L${i}-2`, `fq${i}`],
      ]);
      if (i % 4 === 0) await store.set(missingNamespace(lane), [[`L${i}-3`, '2026-12-01T00:00:00Z']]);
      if (i % 5 === 0) await store.set(`recur:${lane}`, [[`L${i}-1`, '1']]);
      if (i % 6 === 0) await store.set(soldWindowNamespace(lane), [[`L${i}-2`, '2026-12-31T00:00:00Z']]);
    }
    // a good valid count that is not a count, and a lane with nothing stored, are read as before too
    await store.set(GOOD_VALID_NAMESPACE, [['mls0>SN-12', 'many']]);
    const feeds: ChatbotFeed[] = ['mls0>SN-12', 'mls2>SN-7', 'mls3>SN-18', 'mls4>SN-none'].map((name) => ({
      name,
      keyBy: 'MLSNumber',
    }));
    const store2 = counted(store);
    const state = await loadChatbotState(store2, 'SN-12', feeds);
    expect(store2.whole.filter((ns) => SHARED.includes(ns))).toEqual([]);
    expect(state.feeds).toEqual(await readWhole(store, feeds));
    expect(state.feeds.get('mls2>SN-7')).toMatchObject({ mark: '2026-12-08T00:00:00Z', lastGoodValid: 107 });
    expect(state.feeds.get('mls0>SN-12')?.lastGoodValid).toBeUndefined();
    // fingerprints alone do not make a lane's state whole (a run stopped midway since the state was lost
    // recorded them): a run read whole says so (a synced entry, or a good valid count)
    expect(state.feeds.get('mls3>SN-18')).toMatchObject({
      committed: false,
      fingerprints: new Map([
        ['L18-1', 'fp18'],
        ['L18-2', 'fq18'],
      ]),
    });
    expect(state.feeds.get('mls2>SN-7')?.committed).toBe(true);
    expect(state.feeds.get('mls4>SN-none')).toEqual({
      name: 'mls4>SN-none',
      keyBy: 'MLSNumber',
      committed: false,
      fingerprints: new Map(),
      missingSince: new Map(),
      recurring: new Set(),
      soldUntil: new Map(),
    });
  });
});
