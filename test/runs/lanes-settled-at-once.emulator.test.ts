// A routed feed's lanes are settled together (sync/run/feed-run.ts, runs/run-lanes.ts): their
// commits a batch of lanes in one apply (settle/lane-commit.ts commitLanes), their change log
// records in one write (change-log/recorder.ts finishRuns) and their alert states read and swapped at
// once (alerts/index.ts alertAfterRuns). Held to the plain rule, each lane's commit, record and alert
// rules in turn (lanesSettledAtOnce 1), by a property test: histories of jobs of one feed routed by
// office to chatbots of several sizes, some of them unknown to the service for a run (their lane
// fails), some losing most of their listings (their guard holds), the listings edited behind the
// sync's back, run on two emulators and two Redis prefixes, one settling a lane at a time, the other
// the default. Both leave the same state (every namespace, times aside), the same alert states, the
// same change log (the lists of runs in the same order, each feed's changes: those of a run in the
// order its writes were answered) and
// report the same outcomes and counts. And a batch whose apply fails is applied lane by lane: the
// lanes before the failing one are committed, as one apply a lane leaves them.
import '../setup/needs-redis.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { parseConfig } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { mulberry32 } from '../../src/emulator/prng.js';
import { silentLogger } from '../../src/log.js';
import { keysOf } from '../../src/redis/keys.js';
import { runLanes, type FeedRunReport } from '../../src/runs/run-lanes.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { lanesOf } from '../../src/sync/index.js';
import { Entries } from '../../src/sync/model/entries.js';
import { commitLanes, type LaneCommitInput } from '../../src/sync/settle/lane-commit.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { apiYaml, COLUMNS, csv, row, type Row } from '../sync/helpers/feed.js';

const CHATBOTS = 9;
const chatbotOf = (c: number) => `SN-SETTLE-${c}`;
/** chatbot c's share of the feed */
const sizeOf = (c: number) => [0, 1, 3, 5, 8][c % 5]!;

const redis = testRedis();

interface Side {
  te: TestEmulator;
  dir: string;
  prefix: string;
  store: KvStore;
  loaded: LoadedConfig;
}

let sides: Side[] = [];
beforeAll(async () => {
  sides = await Promise.all(
    [0, 1].map(async () => {
      const te = await startTestEmulator({ latencyMs: 1 });
      const dir = await mkdtemp(join(tmpdir(), 'feedsync-settle-'));
      const yaml = [
        ...apiYaml(te.url),
        '  retries: 0',
        '  pageSize: 4',
        'alerts:',
        '  rules: { openAfterRuns: 1, closeAfterMinutes: 0 }',
        'feeds:',
        '  - name: offices',
        '    chatbots:',
        ...Array.from(
          { length: CHATBOTS },
          (_, c) => `      - { serialNumber: ${chatbotOf(c)}, where: { Office: [office-${c}] } }`,
        ),
        '    source: { kind: csv, path: feed.csv }',
        `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
        '    deletes: { maxFraction: 0.5, batchSize: 3 }',
      ].join('\n');
      const loaded = { config: parseConfig(yaml, 'test.yaml', {}), file: join(dir, 'test.yaml'), dir };
      return { te, dir, prefix: '', store: createMemoryStore(), loaded };
    }),
  );
});
afterAll(async () => {
  for (const s of sides) {
    await s.te.close();
    await rm(s.dir, { recursive: true, force: true });
    if (s.prefix) await dropPrefix(redis, s.prefix);
  }
  await redis.quit();
});

/** The feed of one run: each chatbot's share (its office), some records changed or dropped, a chatbot's most of them gone. */
function feedOf(rnd: () => number, run: number): string {
  const data: Array<Row & { Office: string }> = [];
  let n = 1;
  for (let c = 0; c < CHATBOTS; c++) {
    // (its guard holds: most of its listings gone at once)
    const gone = run > 0 && rnd() < 0.15;
    for (let i = 0; i < sizeOf(c); i++, n++) {
      if ((gone && i > 0) || (run > 0 && rnd() < 0.05)) continue;
      const changed = run > 0 && rnd() < 0.15;
      data.push({ ...row(n, changed ? { SalePrice: 1000 * run + n } : {}), Office: `office-${c}` });
    }
    if (run > 0 && rnd() < 0.2) data.push({ ...row(1000 + run * 100 + c), Office: `office-${c}` });
  }
  return csv(data, [...COLUMNS, 'Office']);
}

/** Times (which differ between the sides) as one word. */
const timeless = (text: string) => text.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T');

/** What a history left: each run's reports, then the state (every hash of the prefix), the change log's streams and lists of runs. */
async function history(side: Side, seed: number, atOnce: number | undefined) {
  const { te } = side;
  await te.reset();
  if (side.prefix) await dropPrefix(redis, side.prefix);
  side.prefix = uniquePrefix();
  side.store = createRedisStore(redis, side.prefix);
  const changeLog = createRedisChangeLog(redis, side.prefix);
  const rnd = mulberry32(seed);
  const runs: unknown[] = [];
  for (let run = 0; run < 4; run++) {
    await writeFile(join(side.dir, 'feed.csv'), feedOf(rnd, run));
    te.emulator.configure({ chatbots: Array.from({ length: CHATBOTS }, (_, c) => chatbotOf(c)) });
    if (run > 0)
      for (let c = 0; c < CHATBOTS; c++) {
        // (by MLSNumber: the emulator's IDs follow the order the writes landed in)
        const held = (await te.listings(chatbotOf(c))).sort((a, b) => a.MLSNumber!.localeCompare(b.MLSNumber!));
        const l = held[Math.floor(rnd() * held.length)];
        if (!l || rnd() < 0.5) continue;
        const { ID: _id, ...fields } = l;
        await te.api.updateListing({ ...fields, SalePrice: 7, Key: l.MLSNumber!, KeyType: 'MLSNumber' });
      }
    // a chatbot or two unknown to the service this run: its lane fails
    te.emulator.configure({
      chatbots: Array.from({ length: CHATBOTS }, (_, c) => chatbotOf(c)).filter(() => rnd() >= 0.15),
    });
    const reports: FeedRunReport[] = await runLanes(
      lanesOf(side.loaded.config.feeds[0]!),
      {
        api: te.api,
        store: side.store,
        configFeeds: side.loaded.config.feeds,
        logger: silentLogger,
        baseDir: side.dir,
        apiConfig: side.loaded.config.api,
      },
      {},
      { config: side.loaded, changeLog, job: { jobId: `j${run}`, attempt: 1 } },
      { now: () => new Date(Date.UTC(2026, 11, 1 + run)), ...(atOnce !== undefined && { lanesSettledAtOnce: atOnce }) },
    );
    runs.push(
      reports.map((r) => ({
        chatbot: r.chatbot,
        outcome: r.outcome,
        counts: r.counts,
        runId: r.runId,
        message: r.message,
      })),
    );
  }
  const keys = keysOf(side.prefix);
  const state: Array<[string, Array<[string, string]>]> = [];
  for (const key of (await redis.keys(keys.statePattern)).sort())
    state.push([
      key.slice(side.prefix.length),
      Object.entries(await redis.hgetall(key))
        .map(([k, v]): [string, string] => [k, timeless(v)])
        .sort(),
    ]);
  // (the changes of a run as its writes landed: in the order of their answers, which the pool's concurrent calls leave to chance)
  const stream = (await redis.xrange(keys.changesOfFeed('offices'), '-', '+'))
    .map(([, [, json]]) => {
      const e = JSON.parse(json!) as { runId: string; chatbot: string; change: { op: string; key: string } };
      return `${e.runId} ${e.chatbot} ${e.change.op} ${e.change.key}`;
    })
    .sort();
  const listed = async (feed?: string) =>
    (await changeLog.runs(feed, 1000)).map(
      (r) => `${r.runId} ${r.chatbot} ${r.outcome} ${JSON.stringify(r.counts)} ${r.recorded}`,
    );
  return { runs, state, stream, runsOfFeed: await listed('offices'), allRuns: await listed() };
}

describe("a routed feed's lanes settled together", () => {
  it.each([1, 2, 3])(
    'come to what settling each lane in turn comes to (seed %i): state, alert states, change log and reports',
    async (seed) => {
      const [plain, together] = sides as [Side, Side];
      const [one, all] = await Promise.all([history(plain, seed, 1), history(together, seed, undefined)]);
      expect(all).toEqual(one);
      // the case is not empty: lanes failed, lanes held, alerts and changes recorded
      const reports = one.runs.flat() as Array<{ outcome: string; counts: { deleted: number }; message?: string }>;
      const outcomes = new Set(reports.map((r) => r.outcome));
      // every lane settled and reported (none left out by the run), some of them deleting in their settle step
      expect(reports.filter((r) => /before this lane was reported/.test(r.message ?? ''))).toEqual([]);
      expect(reports.some((r) => r.counts.deleted > 0)).toBe(true);
      expect(outcomes).toContain('ok');
      expect([...outcomes].some((o) => o !== 'ok')).toBe(true);
      expect(one.state.some(([key]) => key.endsWith(':state:alerts'))).toBe(true);
      expect(one.stream.length).toBeGreaterThan(0);
      expect(one.allRuns).toHaveLength(4 * CHATBOTS);
    },
    60_000,
  );
});

describe('a batch of lanes whose commit fails', () => {
  /** a lane's commit: a fingerprint for each key (a key past the store's limit makes its commit fail) */
  const input = (id: string, keys: string[]): LaneCommitInput => ({
    id,
    tally: {
      recordFingerprints: Entries.of(keys.map((k) => [k, `fp-${k}`])),
      recordUnlisted: new Entries(),
      recordStamps: new Entries(),
    },
    exec: { written: new Entries(), stamped: new Entries(), deletedKeys: [], unlisted: new Entries() },
    guard: { marks: { set: [], clear: [] } },
    missingSince: new Map(),
    mark: `mark-${id}`,
  });
  const tooLong = 'k'.repeat(5000);

  it.each(['memory', 'redis'])(
    'is committed lane by lane (%s): the lanes before the failing one are committed, the rest not, the same failure',
    async (kind) => {
      const lanes = [input('a', ['1', '2']), input('b', ['3']), input('c', ['4', tooLong]), input('d', ['5'])];
      const prefixes: string[] = [];
      const storeOf = () => {
        if (kind === 'memory') return createMemoryStore();
        prefixes.push(uniquePrefix());
        return createRedisStore(redis, prefixes.at(-1));
      };
      const [batched, oneByOne] = [storeOf(), storeOf()];
      try {
        const failure = await commitLanes(batched, lanes).catch((err: Error) => err.message);
        let plainFailure: string | undefined;
        for (const l of lanes) {
          plainFailure = await commitLanes(oneByOne, [l]).then(
            () => undefined,
            (err: Error) => err.message,
          );
          if (plainFailure) break;
        }
        expect(failure).toBe(plainFailure);
        expect(failure).toMatch(/is 5000 characters long/);
        const held = async (store: KvStore) =>
          Promise.all(
            ['fp:a', 'fp:b', 'fp:c', 'fp:d', 'reso-hwm'].map(async (ns) => [ns, [...(await store.getAll(ns))].sort()]),
          );
        expect(await held(batched)).toEqual(await held(oneByOne));
        expect(await batched.get('reso-hwm', 'b')).toBe('mark-b');
        expect(await batched.get('reso-hwm', 'c')).toBeUndefined();
      } finally {
        for (const p of prefixes) await dropPrefix(redis, p);
      }
    },
  );
});
