// The stores' one atomic write (apply): the file store replaces the file whole and survives a
// failed write; the Redis store applies a run's changes in one transaction.
import '../setup/needs-redis.js';
import { mkdir, mkdtemp, readFile, rm, rmdir, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createFileStore } from '../../src/state/file-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** a state file's path in a new folder of its own (removed after the tests) */
async function statePath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-state-'));
  dirs.push(dir);
  return join(dir, 'state.json');
}

describe('file store', () => {
  it('applies changes to several namespaces in one write, and a failed write does not poison the next', async () => {
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
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ 'fp:a': { K1: 'f1', ['__proto__']: 'f2' }, 'missing:a': { K9: '2026-01-01T00:00:00Z' } });

    // the state file's place is taken by a folder: this write fails, the file is not half written
    await rm(path);
    await mkdir(path);
    await expect(store.apply([{ ns: 'fp:a', set: [['K2', 'f2']] }])).rejects.toThrow(/state file/);
    await rmdir(path);
    await store.apply([{ ns: 'fp:a', set: [['K3', 'f3']], delete: ['K1'] }]);
    expect(new Map(await store.getAll('fp:a'))).toEqual(new Map([['K3', 'f3']]));
    await store.close();
  });

  it('sees what another process committed (every read reads the file)', async () => {
    const path = await statePath();
    const one = await createFileStore(path);
    const two = await createFileStore(path);
    await one.apply([{ ns: 'fp:a', set: [['K1', 'f1']] }]);
    await two.apply([{ ns: 'fp:b', set: [['K2', 'f2']] }]);
    expect(new Map(await one.getAll('fp:b'))).toEqual(new Map([['K2', 'f2']]));
    expect(new Map(await two.getAll('fp:a'))).toEqual(new Map([['K1', 'f1']]));
  });
  it('reads namespaces from the bytes, parsing none, and sees a change another process made (a run reads many namespaces)', async () => {
    const path = await statePath();
    const one = await createFileStore(path);
    const two = await createFileStore(path);
    await two.apply([
      { ns: 'fp:a', set: [['K1', 'f1']] },
      { ns: 'missing:a', set: [['K1', 't1']] },
    ]);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (let round = 0; round < 3; round++) for (const ns of ['fp:a', 'missing:a', 'recur:a', 'fp:b']) await one.getAll(ns);
      expect(parse).not.toHaveBeenCalled(); // answered from the bytes through each namespace's index
      expect(new Map(await one.getAll('missing:a'))).toEqual(new Map([['K1', 't1']]));
      await two.apply([{ ns: 'fp:a', set: [['K1', 'f2']] }]); // same size, new bytes
      expect(await one.get('fp:a', 'K1')).toBe('f2');
    } finally {
      parse.mockRestore();
    }
  });
});

describe('file store: reads of the same file', () => {
  it('reads the file once while it stays the same file (device, inode, size, mtime), and again after any change', async () => {
    const path = await statePath();
    const one = await createFileStore(path);
    const two = await createFileStore(path);
    await two.apply([{ ns: 'fp:a', set: [['K1', 'f1']] }]);
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000); // whole seconds: utimes restores it exactly
    await utimes(path, t, t);
    expect(await one.get('fp:a', 'K1')).toBe('f1');
    // new bytes under the same identity (an edit in place with the time put back): not read again,
    // which is what spares a run's per-listing reads the whole file each
    await writeFile(path, (await readFile(path, 'utf8')).replace('"f1"', '"f9"'));
    await utimes(path, t, t);
    expect(await one.get('fp:a', 'K1')).toBe('f1');
    // the same edit with a new time, as any edit has: read again
    await utimes(path, t, new Date(t.getTime() + 5_000));
    expect(await one.get('fp:a', 'K1')).toBe('f9');
    // another process's write (write-file-atomic: a new file renamed into place, same size): read again
    await two.apply([{ ns: 'fp:a', set: [['K1', 'f2']] }]);
    expect(await one.get('fp:a', 'K1')).toBe('f2');
  });
});

describe('file store: a file written within the last second', () => {
  it('is read again: two writes in one clock tick can leave the same device, inode, size and mtime', async () => {
    // The kernel stamps mtime from a coarse clock (a few ms a tick), and a renamed-away file's inode
    // is soon handed out again: two writes in one tick can look like one file. An edit in place
    // with the time put back stands in for that second write.
    const path = await statePath();
    const one = await createFileStore(path);
    const two = await createFileStore(path);
    await two.apply([{ ns: 'alerts', set: [['feed', 'v1']] }]);
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000); // a fresh file (just written), whole seconds
    await utimes(path, t, t);
    expect(await one.get('alerts', 'feed')).toBe('v1');
    await writeFile(path, (await readFile(path, 'utf8')).replace('"v1"', '"v2"'));
    await utimes(path, t, t);
    expect(await one.get('alerts', 'feed')).toBe('v2');
    // and a compare-and-swap decides on the file as it is
    expect(await one.swap('alerts', 'feed', 'v1', 'v3')).toBe(false);
    expect(await one.swap('alerts', 'feed', 'v2', 'v3')).toBe(true);
  });
});

describe('file store reads', () => {
  it('reads a namespace as a Map would hold it, any key a key like any other', async () => {
    const store = await createFileStore(await statePath());
    const entries: [string, string][] = [
      ['K1', 'a'],
      ['__proto__', 'b'],
      ['constructor', 'c'],
      ['', 'd'],
    ];
    await store.set('fp:a', entries);
    const view = await store.getAll('fp:a');
    expect(view.size).toBe(4);
    expect(new Map(view)).toEqual(new Map(entries));
    expect([...view.keys()]).toEqual(entries.map(([k]) => k));
    expect([...view.values()]).toEqual(entries.map(([, v]) => v));
    for (const [k, v] of entries) expect([view.has(k), view.get(k)]).toEqual([true, v]);
    // nothing inherited from Object.prototype is a key
    expect([view.has('toString'), view.get('toString'), view.has('hasOwnProperty')]).toEqual([false, undefined, false]);
    const seen: string[] = [];
    view.forEach((v, k) => seen.push(k + '=' + v));
    expect(seen).toEqual(entries.map(([k, v]) => k + '=' + v));
    const empty = await store.getAll('nothing');
    expect([empty.size, empty.get('toString'), [...empty]]).toEqual([0, undefined, []]);
    await store.close();
  });
});

describe('file store writes', () => {
  it('writes the whole state as JSON.stringify would, serializing only the namespaces a write changed', async () => {
    const path = await statePath();
    const store = await createFileStore(path);
    const big = Array.from({ length: 500 }, (_, i): [string, string] => [`K${i}`, `fingerprint "${i}" ü`]);
    await store.apply([
      { ns: 'fp:a', set: big },
      { ns: '__proto__', set: [['x', 'y']] },
      { ns: 'alerts', set: [['a', '{}']] },
    ]);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      for (let run = 0; run < 3; run++) await store.set('alerts', [['a', `{"run":${run}}`]]);
      // the 500 fingerprints were not serialized again by the three alert writes
      expect(stringify.mock.calls.some(([v]) => v !== null && typeof v === 'object' && 'K1' in v)).toBe(false);
    } finally {
      stringify.mockRestore();
    }
    const text = await readFile(path, 'utf8');
    const expected = { 'fp:a': Object.fromEntries(big), ['__proto__']: { x: 'y' }, alerts: { a: '{"run":2}' } };
    expect(JSON.parse(text)).toEqual(expected);
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    await store.close();
  });
});

describe('file store: namespaces parsed when asked for, written back as they were', () => {
  // hand-written: odd spacing, escapes, a key given twice; each namespace's value bytes stay as they are
  const unread = '{ "K1" :\t"{\\"AreaUnit\\":\\"Square Feet\\"}" ,\n "K\\u00fc": "x" }';
  const text = `\n{ "fp:a"  : {"K1":"f1",\r\n "K2":  "f2"},\n\t"unlisted:a":${unread} ,"alerts":{"old":"1"}, "alerts" : { "a" : "v0" }\n}\n`;

  it('writes one namespace and leaves the bytes of every other as they were, parsing none it was not asked for', async () => {
    const path = await statePath();
    await writeFile(path, text);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const store = await createFileStore(path);
      expect(await store.get('alerts', 'a')).toBe('v0'); // the last of the two
      await store.set('alerts', [['a', 'v1']]);
      await store.apply([
        { ns: 'fp:a', set: [], delete: [] },
        { ns: 'unlisted:a', set: [], delete: [] }, // what a rerun's commit holds: nothing to change
      ]);
      await store.close();
      const parsedText = parse.mock.calls.map(([arg]) => arg).join('\n');
      expect(parsedText).not.toContain('AreaUnit');
      expect(parsedText).not.toContain('f1');
    } finally {
      parse.mockRestore();
    }
    // the top level as JSON.stringify writes it, in JSON.parse's order; the namespaces not changed verbatim
    expect(await readFile(path, 'utf8')).toBe(`{"fp:a":{"K1":"f1",\r\n "K2":  "f2"},"unlisted:a":${unread},"alerts":{"a":"v1"}}`);
    // and read back (a new process: nothing cached) as written
    const again = await createFileStore(path);
    expect(new Map(await again.getAll('unlisted:a'))).toEqual(
      new Map([
        ['K1', '{"AreaUnit":"Square Feet"}'],
        ['Kü', 'x'],
      ]),
    );
  });

  it('keeps the new bytes after a write: a later change writes the unchanged namespaces, and the unchanged members of a changed one, as they were', async () => {
    const path = await statePath();
    await writeFile(path, text);
    const store = await createFileStore(path);
    const fp = await store.getAll('fp:a');
    await store.set('fp:a', [['K3', 'f3']]);
    await store.set('alerts', [['a', 'v2']]);
    // a changed namespace's members kept as they were written, the new ones appended
    expect(await readFile(path, 'utf8')).toBe(`{"fp:a":{"K1":"f1",\r\n "K2":  "f2","K3":"f3"},"unlisted:a":${unread},"alerts":{"a":"v2"}}`);
    expect([fp.size, (await store.getAll('fp:a')).size, await store.get('alerts', 'a')]).toEqual([2, 3, 'v2']);
  });

  it('says at which byte a state file stops being JSON, or what it holds that is not a namespace', async () => {
    const path = await statePath();
    await writeFile(path, '{"fp:a":{"K1":"f1",}}');
    await expect(createFileStore(path)).rejects.toThrow(/is not valid JSON \('\}' where a member name \(a string in double quotes\) was expected at byte 19; 21 bytes\)/);
    await writeFile(path, '{"fp:a":{"K1":"f1"},"alerts":{"a":1}}');
    await expect(createFileStore(path)).rejects.toThrow(/is JSON but not feedsync's state \(the value of "alerts" is not an object of strings at byte 29;/);
  });
});

describe('redis store', () => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  const prefix = `test-state-${process.pid}-${Date.now()}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('applies sets and deletes of several namespaces in one transaction', async () => {
    const store = createRedisStore(redis, prefix);
    await store.apply([{ ns: 'fp:a', set: Array.from({ length: 2500 }, (_, i) => [`K${i}`, `f${i}`] as [string, string]) }]);
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
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
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
