// The stores' one atomic write (apply): the file store's is one LMDB transaction, undone whole when
// it fails; the Redis store applies a run's changes in one transaction. (Kills and processes:
// store-processes.test.ts.)
import '../setup/needs-redis.js';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore, SCHEMA_VERSION } from '../../src/state/file-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { parseStateJson, writeStateJson } from '../../src/state/state-json.js';
import { REDIS_URL } from '../queue/helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** a state file's path in a new folder of its own (removed after the tests) */
async function statePath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-state-'));
  dirs.push(dir);
  return join(dir, 'state.lmdb');
}

describe('file store', () => {
  it('applies changes to several namespaces in one transaction; a failed apply leaves the state as it was and does not poison the next', async () => {
    const path = await statePath();
    const store = await createFileStore(path);
    await store.apply([
      {
        ns: 'fp:a',
        set: [
          ['K1', 'f1'],
          ['__proto__', 'f2'],
        ],
      },
      { ns: 'missing:a', set: [['K9', '2026-01-01T00:00:00Z']] },
    ]);
    // an apply whose second namespace's entries fail halfway: nothing of it is kept, the first namespace's sets included
    function* failing(): Generator<[string, string]> {
      yield ['K5', 'f5'];
      throw new Error('the run broke off');
    }
    await expect(
      store.apply([
        { ns: 'fp:a', set: [['K1', 'changed']], delete: ['__proto__'] },
        { ns: 'stamp:a', set: failing() },
      ]),
    ).rejects.toThrow('the run broke off');
    expect(await entriesOf(store, 'fp:a')).toEqual({ K1: 'f1', ['__proto__']: 'f2' });
    expect((await store.getAll('stamp:a')).size).toBe(0);
    await store.apply([{ ns: 'fp:a', set: [['K3', 'f3']], delete: ['K1'] }]);
    expect(await entriesOf(store, 'fp:a')).toEqual({ K3: 'f3', ['__proto__']: 'f2' });
    await store.close();
    // and a new process (a new open) reads what was committed
    const again = await createFileStore(path);
    expect([await entriesOf(again, 'fp:a'), await entriesOf(again, 'missing:a')]).toEqual([
      { K3: 'f3', ['__proto__']: 'f2' },
      { K9: '2026-01-01T00:00:00Z' },
    ]);
    await again.close();
  });

  it("writes no page for a set of the value a slot holds already (a first sync's commit sets again what its acknowledged writes recorded)", async () => {
    const path = await statePath();
    const pairs = Array.from({ length: 20_000 }, (_, i): [string, string] => [
      `ATX${1_000_000 + i}`,
      `2.${i}`.padEnd(29, 'x'),
    ]);
    /** the file's last page in use: a transaction's copies of the pages it writes go past it */
    const lastPage = async () => {
      const env = open({ path, noSubdir: true, maxDbs: 3, readOnly: true });
      const { lastPageNumber } = env.getStats() as { lastPageNumber: number };
      await env.close();
      return lastPageNumber;
    };
    const first = await createFileStore(path);
    await first.apply([{ ns: 'fp:a', set: pairs }]);
    await first.close();
    const before = await lastPage();
    const again = await createFileStore(path);
    await again.apply([
      { ns: 'fp:a', set: [...pairs.slice(1), ['ATX1000000', 'changed']] },
      { ns: 'stamp:a', set: pairs.slice(0, 10) },
    ]);
    expect(await again.get('fp:a', 'ATX1000000')).toBe('changed');
    expect(await again.get('fp:a', 'ATX1019999')).toBe(pairs[19_999]![1]);
    expect((await again.getAll('stamp:a')).size).toBe(10);
    await again.close();
    // (the 20,000 pairs fill about 280 pages: written again, each is copied)
    expect((await lastPage()) - before).toBeLessThan(20);
    // a key set again within one apply back to the value stored before ends with it (the skip reads the apply's own writes)
    const third = await createFileStore(path);
    await third.apply([
      { ns: 'fp:a', set: [['ATX1000001', 'other']] },
      { ns: 'fp:a', set: [['ATX1000001', pairs[1]![1]]] },
    ]);
    expect(await third.get('fp:a', 'ATX1000001')).toBe(pairs[1]![1]);
    await third.close();
  });

  it("applies in the background (lmdb's write thread) as apply does: sets then deletes of several namespaces, a change that throws queues nothing, a new file's schema recorded", async () => {
    const path = await statePath();
    const store = await createFileStore(path);
    const long = 'k'.repeat(5000);
    await expect(
      store.applyInBackground([
        { ns: 'fp:a', set: [['K1', 'f1']] },
        { ns: 'fp:b', set: [[long, 'x']] },
      ]),
    ).rejects.toThrow(/5000 characters/);
    await store.applyInBackground([
      {
        ns: 'fp:a',
        set: [
          ['K1', 'f1'],
          ['K2', 'f2'],
        ],
        delete: ['K2'],
      },
      { ns: 'unlisted:a', set: [['K1', '{}']] },
    ]);
    // (read at once, as the lane's commit reads after the drain)
    expect(await entriesOf(store, 'fp:a')).toEqual({ K1: 'f1' });
    await store.close();
    const env = open({ path, noSubdir: true, maxDbs: 3, readOnly: true });
    expect(env.openDB({ name: 'meta', encoding: 'string' }).get('schema')).toBe(String(SCHEMA_VERSION));
    await env.close();
    const again = await createFileStore(path);
    expect([
      await entriesOf(again, 'fp:a'),
      await entriesOf(again, 'unlisted:a'),
      await entriesOf(again, 'fp:b'),
    ]).toEqual([{ K1: 'f1' }, { K1: '{}' }, {}]);
    await again.close();
  });

  it('two stores on one file see what the other committed', async () => {
    const path = await statePath();
    const one = await createFileStore(path);
    const two = await createFileStore(path);
    await one.apply([{ ns: 'fp:a', set: [['K1', 'f1']] }]);
    await two.apply([{ ns: 'fp:b', set: [['K2', 'f2']] }]);
    const view = await one.getAll('fp:b');
    expect(await entriesOf(two, 'fp:a')).toEqual({ K1: 'f1' });
    await two.set('fp:b', [['K2', 'f3']]);
    expect([view.get('K2'), await one.get('fp:b', 'K2')]).toEqual(['f3', 'f3']); // a read answers what is stored when it is made
    await Promise.all([one.close(), two.close()]);
  });

  it('reads a namespace as a Map would hold it, any key a key like any other, and counts it', async () => {
    const store = await createFileStore(await statePath());
    const long = 'L'.repeat(3000); // past LMDB's key limit (1,978 bytes)
    const entries: [string, string][] = [
      ['K1', 'a'],
      ['__proto__', 'b'],
      ['constructor', 'c'],
      ['', 'd'],
      ['K\u0000x', 'e'],
      [long, 'f'],
      [long + 'ü', 'g'],
      ['lone \ud800 surrogate', 'h'],
      ['lone \udc00 surrogate', 'i'],
      ['pair 😀 ok', 'j'],
    ];
    await store.set('fp:a', entries);
    await store.set('fp:ab', [['K1', 'other namespace']]);
    await store.set('fp:a', [['K1', 'a2']]); // a set of a key it holds: counted once
    await store.delete('fp:a', ['absent', 'constructor', 'constructor']); // deletes of absent keys count nothing
    const expected = new Map(entries.filter(([k]) => k !== 'constructor').map(([k, v]) => [k, k === 'K1' ? 'a2' : v]));
    const view = await store.getAll('fp:a');
    expect(view.size).toBe(expected.size);
    expect(new Map(view)).toEqual(expected);
    expect(new Set(view.keys())).toEqual(new Set(expected.keys()));
    expect([...view.values()].sort()).toEqual([...expected.values()].sort());
    for (const [k, v] of expected) expect([view.has(k), view.get(k), await store.get('fp:a', k)]).toEqual([true, v, v]);
    // nothing inherited from Object.prototype is a key; a key of another namespace is not this one's
    expect([view.has('toString'), view.get('toString'), view.has('constructor'), view.get('L'.repeat(2999))]).toEqual([
      false,
      undefined,
      false,
      undefined,
    ]);
    const seen = new Map<string, string>();
    view.forEach((v, k) => seen.set(k, v));
    expect(seen).toEqual(expected);
    const empty = await store.getAll('nothing');
    expect([empty.size, empty.get('toString'), [...empty]]).toEqual([0, undefined, []]);
    expect(store.namespaces()).toEqual([
      ['fp:a', expected.size],
      ['fp:ab', 1],
    ]);
    await store.close();
  });

  it('refuses a namespace it could not keep apart from another (a NUL in its name)', async () => {
    const store = await createFileStore(await statePath());
    await expect(store.set('fp:a\u0000b', [['K', 'v']])).rejects.toThrow(/namespace/);
    await store.close();
  });
});

describe('file store: the former state file (state.json) and the schema version', () => {
  /** a state.json written by the JSON state store this one replaces (at b1b5025) */
  const FORMER = fileURLToPath(new URL('./fixtures/state-b1b5025.json', import.meta.url));

  it('imports a state.json beside it once, keeps it as state.json.migrated, and records its schema version', async () => {
    const path = await statePath();
    const former = join(dirname(path), 'state.json');
    const bytes = await readFile(FORMER, 'utf8');
    await writeFile(former, bytes);
    const store = await createFileStore(path);
    const expected = JSON.parse(bytes) as Record<string, Record<string, string>>;
    for (const [ns, entries] of Object.entries(expected)) expect(await entriesOf(store, ns)).toEqual(entries);
    expect(await store.get('fp:homes', '__proto__')).toBe('v2.BBBB');
    expect(await readdir(dirname(path))).not.toContain('state.json');
    expect(await readFile(`${former}.migrated`, 'utf8')).toBe(bytes);
    await store.set('fp:homes', [['K1', 'changed']]);
    await store.close();
    // opened again: nothing imported again
    const again = await createFileStore(path);
    expect(await again.get('fp:homes', 'K1')).toBe('changed');
    await again.close();
    // a state.json that turns up beside a store in use is refused, not merged, and left where it is
    await writeFile(former, bytes);
    await expect(createFileStore(path)).rejects.toThrow(
      /lies beside the state store .* which is in use\. Import it .*feedsync state import/,
    );
    expect(await readFile(former, 'utf8')).toBe(bytes);
    // a store of a later schema version is refused
    await rm(former);
    const env = open({ path, maxDbs: 2, overlappingSync: false });
    await env.openDB({ name: 'meta', encoding: 'string' }).put('schema', String(SCHEMA_VERSION + 1));
    await env.close();
    await expect(createFileStore(path)).rejects.toThrow(
      `was written by a later feedsync (its schema is version ${SCHEMA_VERSION + 1}; this one reads version ${SCHEMA_VERSION})`,
    );
  });

  it('says what is wrong with a state.json it cannot import, and imports nothing', async () => {
    const path = await statePath();
    const former = join(dirname(path), 'state.json');
    await writeFile(former, '{"fp:a":{"K1":"f1",}}');
    await expect(createFileStore(path)).rejects.toThrow(
      /state\.json:1:20 is not valid JSON \("}" cannot stand there; 21 characters\): it was cut short or edited by hand\. Restore it from a backup, or move it aside/,
    );
    await writeFile(former, '{"fp:a":{"K1":"f1"},"alerts":{"a":1}}');
    await expect(createFileStore(path)).rejects.toThrow(
      /is JSON but not feedsync state \("alerts" → "a" is not a string\)/,
    );
    expect(await readdir(dirname(path))).toContain('state.json');
    await rm(former);
    const store = await createFileStore(path);
    expect(store.namespaces()).toEqual([]);
    await store.close();
  });
});

describe('file store: export and import', () => {
  it('writes the state as one JSON document and replaces the whole state with one', async () => {
    const store = await createFileStore(await statePath());
    await store.apply([
      {
        ns: 'fp:a',
        set: [
          ['K1', 'f1'],
          ['__proto__', 'x "y"'],
          ['L'.repeat(3000), 'long'],
        ],
      },
      { ns: 'alerts', set: [['a', '{}']] },
    ]);
    let text = '';
    await writeStateJson(
      store.namespaces().map(([ns]) => [ns, store.entries(ns)] as const),
      async (piece) => {
        text += piece;
      },
      10,
    );
    expect(JSON.parse(text)).toEqual({
      'fp:a': { K1: 'f1', ['__proto__']: 'x "y"', ['L'.repeat(3000)]: 'long' },
      alerts: { a: '{}' },
    });
    await store.replace(parseStateJson('{"fp:b":{"K2":"f2"},"alerts":{"b":"1"}}', (problem) => new Error(problem)));
    expect(store.namespaces()).toEqual([
      ['alerts', 1],
      ['fp:b', 1],
    ]);
    expect([await entriesOf(store, 'fp:a'), await entriesOf(store, 'fp:b'), await entriesOf(store, 'alerts')]).toEqual([
      {},
      { K2: 'f2' },
      { b: '1' },
    ]);
    await store.close();
  });
});

/** a namespace's entries as an object (own properties, `__proto__` too) */
async function entriesOf(store: KvStore, ns: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of await store.getAll(ns)) Object.defineProperty(out, k, { value: v, enumerable: true });
  return out;
}

describe('redis store', () => {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const prefix = `test-state-${process.pid}-${Date.now()}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('applies sets and deletes of several namespaces in one transaction', async () => {
    const store = createRedisStore(redis, prefix);
    await store.apply([
      { ns: 'fp:a', set: Array.from({ length: 2500 }, (_, i) => [`K${i}`, `f${i}`] as [string, string]) },
    ]);
    let execs = 0;
    const exec = redis.multi.bind(redis);
    const spy = (...args: Parameters<typeof redis.multi>) => {
      execs++;
      return exec(...args);
    };
    (redis as { multi: typeof redis.multi }).multi = spy as typeof redis.multi;
    await store.apply([
      { ns: 'fp:a', set: [['K1', 'changed']], delete: Array.from({ length: 2000 }, (_, i) => `K${i + 2}`) },
      { ns: 'reso-hwm', set: [['a', '{"ts":"x","key":"y"}']] },
    ]);
    (redis as { multi: typeof redis.multi }).multi = exec;
    expect(execs).toBe(1);
    const fp = await store.getAll('fp:a');
    expect(fp.size).toBe(500);
    expect(fp.get('K1')).toBe('changed');
    expect(await store.get('reso-hwm', 'a')).toBe('{"ts":"x","key":"y"}');
  });
});

describe('swap: set a key only if it holds what the caller read', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `test-swap-${process.pid}-${Date.now()}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });
  const stores: Array<[string, () => Promise<KvStore>]> = [
    ['memory', async () => createMemoryStore()],
    ['redis', async () => createRedisStore(redis, `${prefix}-${Math.random()}`)],
    [
      'file',
      async () => {
        return createFileStore(await statePath());
      },
    ],
  ];
  it.each(stores)('%s', async (_name, open) => {
    const store = await open();
    expect(await store.swap('alerts', 'K', undefined, 'v1')).toBe(true);
    expect(await store.swap('alerts', 'K', undefined, 'v2')).toBe(false); // no longer absent
    expect(await store.swap('alerts', 'K', 'v0', 'v2')).toBe(false);
    expect(await store.swap('alerts', 'K', 'v1', 'v2')).toBe(true);
    expect(await store.get('alerts', 'K')).toBe('v2');
    // a key named like an Object.prototype member is absent until set
    expect(await store.swap('alerts', 'constructor', undefined, 'c1')).toBe(true);
    expect(await store.get('alerts', 'constructor')).toBe('c1');
    await store.close();
  });
});
