// A run pages a few chatbots at once (src/sync/remote/page-chatbot.ts PAGINGS_AT_ONCE; sync-run.ts):
// a routed feed's many small chatbots no longer wait for each other's round trips. Held to the
// plain rule, one chatbot after another (pagingsAtOnce 1), by a property test: a history of runs of
// one feed routed by office to chatbots of every size (none, part of a page, a full page, several
// pages), with the chatbots edited behind the sync's back between runs, run on two emulators, one
// paging a chatbot at a time, the other the default; both make the same writes, leave the same
// listings and state, report the same counts and make the same calls. And the default does page
// several chatbots at once (the list calls in flight, by chatbot), the plain rule never. Their state
// reads, a few chatbots at once in order (settle/state.ts STATE_READS_AT_ONCE), are held the same way
// to the plain rule of every chatbot's read begun at the run's start (stateReadsAtOnce Infinity).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallCounter } from '../../src/api/call-counter.js';
import type { ChatbotApi } from '../../src/api/types.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { mulberry32 } from '../../src/emulator/prng.js';
import { silentLogger } from '../../src/log.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { PAGINGS_AT_ONCE } from '../../src/sync/remote/page-chatbot.js';
import { lanesOf, runSync, type SyncReport } from '../../src/sync/index.js';
import type { SyncTestHooks } from '../../src/sync/run/context.js';
import { fingerprintNamespace } from '../../src/sync/model/state-names.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { COLUMNS, createSyncEnv, csv, row, writeCounts, type Row, type SyncEnv } from './helpers/feed.js';

const CHATBOTS = 12;
const PAGE = 5;
const chatbotOf = (c: number) => `SN-AT-ONCE-${c}`;
/** chatbot c's share of the feed: 0 for the first, then part of a page, a page, several pages */
const sizeOf = (c: number) => [0, 1, 3, PAGE, PAGE + 1, 2 * PAGE, 3 * PAGE + 2][c % 7]!;

interface Side {
  te: TestEmulator;
  env: SyncEnv;
  /** this history's state (a new store each), its namespaces as written */
  store: KvStore;
  namespaces: Set<string>;
  /** the most chatbots with a list call in flight at one moment */
  overlap: number;
  /** the most chatbots with their state read in flight at one moment (their fingerprints read whole) */
  reads: number;
}

let sides: Side[] = [];
beforeAll(async () => {
  sides = await Promise.all(
    [0, 1].map(async () => ({
      te: await startTestEmulator({ latencyMs: 3 }),
      env: await createSyncEnv(),
      store: createMemoryStore(),
      namespaces: new Set<string>(),
      overlap: 0,
      reads: 0,
    })),
  );
});
afterAll(async () => {
  for (const s of sides) await Promise.all([s.te.close(), s.env.cleanup()]);
});

/** The feed of one run: each chatbot's share (its office), some records changed, dropped or added by `rnd`. */
function feedOf(rnd: () => number, run: number): string {
  const data: Array<Row & { Office: string }> = [];
  let n = 1;
  for (let c = 0; c < CHATBOTS; c++) {
    for (let i = 0; i < sizeOf(c); i++, n++) {
      if (run > 0 && rnd() < 0.05) continue; // dropped this run
      const changed = run > 0 && rnd() < 0.1;
      data.push({ ...row(n, changed ? { SalePrice: 1000 * run + n } : {}), Office: `office-${c}` });
    }
    if (run > 0 && rnd() < 0.2) data.push({ ...row(1000 + run * 100 + c), Office: `office-${c}` });
  }
  return csv(data, [...COLUMNS, 'Office']);
}

const feed = FeedConfig.parse({
  name: 'offices',
  chatbots: Array.from({ length: CHATBOTS }, (_, c) => ({
    serialNumber: chatbotOf(c),
    where: { Office: [`office-${c}`] },
  })),
  source: { kind: 'csv', path: 'feed.csv' },
  mapping: { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) },
  deletes: { maxFraction: 1, batchSize: 4 },
});

/** The client, its list calls in flight counted by chatbot (side.overlap: the most chatbots at once). */
function watched(side: Side, api: ChatbotApi): ChatbotApi {
  const inFlight = new Map<string, number>();
  const around = async <T>(sn: string, call: () => Promise<T>): Promise<T> => {
    inFlight.set(sn, (inFlight.get(sn) ?? 0) + 1);
    side.overlap = Math.max(side.overlap, inFlight.size);
    try {
      return await call();
    } finally {
      const left = inFlight.get(sn)! - 1;
      if (left === 0) inFlight.delete(sn);
      else inFlight.set(sn, left);
    }
  };
  return {
    ...api,
    listListings: (req, call) => around(req.SerialNumber, () => api.listListings(req, call)),
    ...(api.listListingsAs && {
      listListingsAs: (req, decoder, call) => around(req.SerialNumber, () => api.listListingsAs!(req, decoder, call)),
    }),
  };
}

async function runOn(side: Side, hooks: SyncTestHooks): Promise<SyncReport[]> {
  const calls = createCallCounter();
  const apiConfig = ApiConfig.parse({
    baseUrl: side.te.url,
    secretKey: 'x',
    sessionKey: 'y',
    concurrency: 4,
    pageSize: PAGE,
    retries: 1,
  });
  return runSync(
    lanesOf(feed),
    {
      api: watched(side, side.te.client({ onCall: calls.onCall, retry: { retries: 1 } })),
      store: side.store,
      configFeeds: [feed],
      logger: silentLogger,
      baseDir: side.env.dir,
      apiConfig,
      calls,
    },
    {},
    hooks,
  );
}

/** What a run left: its writes, each chatbot's listings, the state, the reports' outcomes, counts and calls. */
async function history(side: Side, seed: number, hooks: SyncTestHooks) {
  const { te, env } = side;
  await te.reset();
  const store = noted(createMemoryStore(), (side.namespaces = new Set()));
  side.store = readsCounted(side, store);
  side.overlap = 0;
  side.reads = 0;
  const rnd = mulberry32(seed);
  const out = [];
  for (let run = 0; run < 3; run++) {
    await env.writeFeed(feedOf(rnd, run));
    // the chatbots edited behind the sync's back: a price here, a listing gone there
    if (run > 0)
      for (let c = 0; c < CHATBOTS; c++) {
        // (by MLSNumber: the emulator's IDs follow the order the writes landed in, which may differ between the sides)
        const held = (await te.listings(chatbotOf(c))).sort((a, b) => a.MLSNumber!.localeCompare(b.MLSNumber!));
        const l = held[Math.floor(rnd() * held.length)];
        if (!l || rnd() < 0.5) continue;
        if (rnd() < 0.5) {
          const { ID: _id, ...fields } = l;
          await te.api.updateListing({ ...fields, SalePrice: 7, Key: l.MLSNumber!, KeyType: 'MLSNumber' });
        } else await te.api.deleteListings({ SerialNumber: chatbotOf(c), Keys: [String(l.ID)], KeyType: 'NewOaks' });
      }
    const before = await writeCounts(te);
    const reports = await runOn(side, hooks);
    const after = await writeCounts(te);
    const held = await Promise.all(
      Array.from({ length: CHATBOTS }, async (_, c) =>
        (await te.listings(chatbotOf(c))).map((l) => `${l.MLSNumber} ${l.SalePrice}`).sort(),
      ),
    );
    out.push({
      writes: {
        create: after.create - before.create,
        update: after.update - before.update,
        delete: after.delete - before.delete,
      },
      held,
      reports: reports.map((r) => ({
        chatbot: r.chatbot,
        outcome: r.outcome,
        counts: r.counts,
        calls: r.calls.total,
        pages: r.remote.pages,
      })),
    });
  }
  const state = await Promise.all(
    [...side.namespaces].sort().map(async (ns) => [ns, [...(await store.getAll(ns))].sort()]),
  );
  return { runs: out, state };
}

/** The store, each namespace it is asked to change noted in `into`. */
function noted(store: KvStore, into: Set<string>): KvStore {
  return {
    ...store,
    set: (ns, entries) => (into.add(ns), store.set(ns, entries)),
    delete: (ns, keys) => (into.add(ns), store.delete(ns, keys)),
    swap: (ns, key, expected, next) => (into.add(ns), store.swap(ns, key, expected, next)),
    apply: (changes) => {
      for (const c of changes) into.add(c.ns);
      return store.apply(changes);
    },
  };
}

/** The store, each fingerprints read answered a moment later and counted while in flight (side.reads: the most at once). */
function readsCounted(side: Side, store: KvStore): KvStore {
  let inFlight = 0;
  return {
    ...store,
    getAll: async (ns) => {
      if (!ns.startsWith(fingerprintNamespace(''))) return store.getAll(ns);
      side.reads = Math.max(side.reads, ++inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return await store.getAll(ns);
      } finally {
        inFlight--;
      }
    },
  };
}

describe('chatbots paged a few at once', () => {
  it.each([1, 2, 3])(
    'come to what paging one chatbot after another comes to (seed %i): writes, listings, state, counts and calls',
    async (seed) => {
      const [plain, atOnce] = sides as [Side, Side];
      const [one, few] = await Promise.all([history(plain, seed, { pagingsAtOnce: 1 }), history(atOnce, seed, {})]);
      expect(few.runs).toEqual(one.runs);
      expect(few.state).toEqual(one.state);
      // every chatbot ended ok, and the histories wrote and kept state (the case is not empty)
      expect(one.state.length).toBeGreaterThan(0);
      expect(one.runs.flatMap((r) => r.reports.map((x) => x.outcome)).every((o) => o === 'ok')).toBe(true);
      expect(one.runs[0]!.writes.create).toBeGreaterThan(0);
      // the plain rule pages one chatbot at a time; the default several
      expect(plain.overlap).toBe(1);
      expect(atOnce.overlap).toBeGreaterThan(1);
      expect(atOnce.overlap).toBeLessThanOrEqual(PAGINGS_AT_ONCE);
    },
  );
});

describe("chatbots' state read a few at once", () => {
  it.each([4, 5])(
    "comes to what reading every chatbot's state at the run's start comes to (seed %i): writes, listings, state, counts and calls",
    async (seed) => {
      const [plain, few] = sides as [Side, Side];
      const [all, some] = await Promise.all([
        history(plain, seed, { stateReadsAtOnce: Infinity }),
        history(few, seed, { stateReadsAtOnce: 2 }),
      ]);
      expect(some.runs).toEqual(all.runs);
      expect(some.state).toEqual(all.state);
      expect(all.runs.flatMap((r) => r.reports.map((x) => x.outcome)).every((o) => o === 'ok')).toBe(true);
      // the plain rule reads every chatbot's state at once; the other two at a time
      expect(plain.reads).toBe(CHATBOTS);
      expect(few.reads).toBe(2);
    },
  );
});
