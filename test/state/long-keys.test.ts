// Keys of any length up to the stores' maximum (MAX_STATE_KEY_CHARS), with or without NULs: the
// memory, Redis and file stores answer every read alike — point lookups, walks of a namespace,
// counts, the namespaces and export/import of the file store. lmdb's default key encoding
// (ordered-binary) wrote a string of 64+ characters as raw UTF-8, a NUL in it then read back as an
// array separator ("Keys use 0/null bytes as delimiters for arrays, and so strings currently can not
// have '\x00' (null char) in them", lmdb-js README, Keys): a state file of that encoding
// (test/state/fixtures/state-v1-bea1a14.lmdb, written by bea1a14) is rewritten once when opened.
import '../setup/needs-redis.js';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore, SCHEMA_VERSION, type FileStore } from '../../src/state/file-store.js';
import { MAX_STATE_KEY_CHARS, type KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { parseStateJson, writeStateJson } from '../../src/state/state-json.js';
import { fixtureEntries } from './fixtures/state-v1-entries.js';
import { REDIS_URL } from '../queue/helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/state-v1-bea1a14.lmdb', import.meta.url));
const dirs: string[] = [];
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `test-long-keys-${process.pid}-${Date.now()}`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-long-keys-'));
  dirs.push(dir);
  return dir;
}

/** a namespace read whole, as a Map, through the walk (entries), and its count (size) */
async function walked(store: KvStore, ns: string): Promise<{ entries: Map<string, string>; size: number }> {
  const view = await store.getAll(ns);
  return { entries: new Map([...view]), size: view.size };
}

/** the file store's export, parsed back */
async function exported(store: FileStore): Promise<Record<string, Record<string, string>>> {
  let text = '';
  await writeStateJson(
    store.namespaces().map(([ns]) => [ns, store.entries(ns)] as const),
    async (piece) => {
      text += piece;
    },
  );
  return JSON.parse(text) as Record<string, Record<string, string>>;
}

// (a lone surrogate, which UTF-8 cannot carry, and a NUL and a quote first, which the Redis store escapes)
const unit = fc.constantFrom(
  'a',
  'Z',
  '/',
  '"',
  'ü',
  '✓',
  '😀',
  '\u0000',
  '\u0001',
  '\u0004',
  '\u0010',
  '\u001b',
  '\ud83d',
  '\ude00',
);
/** keys of 1 to 2,000 characters, NUL-free and NUL-holding, around the lengths where encodings change (63/64) */
const key = fc.oneof(
  fc.integer({ min: 1, max: 70 }).chain((n) => fc.array(unit, { minLength: n, maxLength: n })),
  fc.integer({ min: 1, max: 2000 }).chain((n) => fc.array(unit, { minLength: n, maxLength: n })),
  fc.integer({ min: 55, max: 2000 }).map((n) => [`https://broker.example.com/l/${'p'.repeat(Math.max(0, n - 30))}`]),
);
const keyText = key.map((units) => units.join('').slice(0, 2000) || 'k');

describe('keys of 1 to 2,000 characters, of any characters, in the three stores', () => {
  it('every store answers lookups, walks, counts alike after the same sets and deletes', async () => {
    const file = await createFileStore(join(await freshDir(), 'state.lmdb'));
    const stores: Array<[string, KvStore]> = [
      ['memory', createMemoryStore()],
      ['redis', createRedisStore(redis, prefix)],
      ['file', file],
    ];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyText, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (keys, deleting) => {
          // a namespace of a run's own, with a neighbour whose name extends it (fp:a, fp:a-…)
          const ns = `fp:feed-${run++}`;
          const gone = deleting.map((i) => keys[i % keys.length]!);
          for (const [, store] of stores) {
            await store.apply([
              { ns, set: keys.map((k, i) => [k, `v${i}`] as const) },
              { ns: `${ns}-next`, set: [[keys[0]!, 'neighbour']] },
            ]);
            await store.delete(ns, gone);
          }
          const expected = new Map(keys.map((k, i) => [k, `v${i}`] as const).filter(([k]) => !gone.includes(k)));
          for (const [name, store] of stores) {
            const { entries, size } = await walked(store, ns);
            expect([name, size, entries]).toEqual([name, expected.size, expected]);
            for (const k of keys) expect([name, await store.get(ns, k)]).toEqual([name, expected.get(k)]);
          }
          expect(file.namespaces().filter(([n]) => n === ns)).toEqual(expected.size ? [[ns, expected.size]] : []);
        },
      ),
      { numRuns: 60 },
    );
    await file.close();
  }, 120_000);

  it('walks a namespace of a URL-keyed feed whole, counts it, and its export round-trips through import', async () => {
    const store = await createFileStore(join(await freshDir(), 'state.lmdb'));
    const doc = fixtureEntries();
    await store.apply(Object.entries(doc).map(([ns, entries]) => ({ ns, set: Object.entries(entries) })));
    expect(store.namespaces()).toEqual(
      Object.keys(doc)
        .sort()
        .map((ns) => [ns, Object.keys(doc[ns]!).length]),
    );
    for (const [ns, entries] of Object.entries(doc))
      expect((await walked(store, ns)).entries).toEqual(new Map(Object.entries(entries)));
    const text = await exported(store);
    expect(text).toEqual(doc);
    const again = await createFileStore(join(await freshDir(), 'state.lmdb'));
    await again.replace(parseStateJson(JSON.stringify(text), (problem) => new Error(problem)));
    expect(await exported(again)).toEqual(doc);
    await Promise.all([store.close(), again.close()]);
  });

  it.each([
    ['memory', async () => createMemoryStore()],
    ['redis', async () => createRedisStore(redis, `${prefix}-max`)],
    ['file', async () => createFileStore(join(await freshDir(), 'state.lmdb'))],
  ] as const)(
    '%s: keeps a key of the maximum length and refuses a longer one, saying which and what the maximum is',
    async (_name, open) => {
      const store = await open();
      const longest = 'k'.repeat(MAX_STATE_KEY_CHARS);
      await store.set('fp:max', [[longest, 'kept']]);
      await expect(
        store.set('fp:max', [
          ['x', 'with it'],
          [longest + 'k', 'too long'],
        ]),
      ).rejects.toThrow(
        `A state key of namespace "fp:max" is ${MAX_STATE_KEY_CHARS + 1} characters long (kkkkkkkkkk…): the state keeps keys of at most ${MAX_STATE_KEY_CHARS}`,
      );
      expect([...(await store.getAll('fp:max'))]).toEqual([[longest, 'kept']]); // nothing of the refused write
      await store.close();
    },
  );
});

describe('a state file of the former key encoding (schema 1, written by bea1a14)', () => {
  it('is read whole and rewritten once in the new encoding: walks, counts and export find every entry', async () => {
    const path = join(await freshDir(), 'state.lmdb');
    await copyFile(FIXTURE, path);
    const doc = fixtureEntries();
    const store = await createFileStore(path);
    expect(store.namespaces()).toEqual(
      Object.keys(doc)
        .sort()
        .map((ns) => [ns, Object.keys(doc[ns]!).length]),
    );
    for (const [ns, entries] of Object.entries(doc)) {
      expect((await walked(store, ns)).entries).toEqual(new Map(Object.entries(entries)));
      for (const [k, v] of Object.entries(entries)) expect(await store.get(ns, k)).toBe(v);
    }
    expect(await exported(store)).toEqual(doc);
    await store.set('fp:url-feed', [['after', 'migration']]);
    await store.close();
    // opened again: read as it now is (nothing rewritten twice), the schema version recorded
    const again = await createFileStore(path);
    expect(await again.get('fp:url-feed', 'after')).toBe('migration');
    expect((await walked(again, 'fp:url-feed')).size).toBe(Object.keys(doc['fp:url-feed']!).length + 1);
    await again.close();
    const env = open({ path, noSubdir: true, maxDbs: 3 });
    expect(env.openDB({ name: 'meta', encoding: 'string' }).get('schema')).toBe(String(SCHEMA_VERSION));
    await env.close();
  });
});
