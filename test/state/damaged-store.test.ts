// A state file damaged inside (bytes changed within its length, its header whole) is refused at open
// with the paragraph a cut file gets, where LMDB would have failed mid-run with MDB_PAGE_NOTFOUND or
// MDB_CORRUPTED, or killed the process (SIGSEGV): it is read whole in a child process first
// (src/state/store-walk.ts). A valid store opens; a damaged one leaves the process running.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvironmentError } from '../../src/errors.js';
import { createFileStore } from '../../src/state/file-store.js';
import { judgeLmdbFile } from '../../src/state/lmdb-header.js';
import { growStore, headerOf } from './lmdb-files.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** what opening the store at `path` throws (undefined: it opened, and was closed again) */
const openError = (path: string) =>
  createFileStore(path, { waitMs: 600 }).then(
    (store) => store.close(),
    (e: unknown) => e,
  );

describe('a state file damaged inside', () => {
  it.each([
    ['zeros', (n: number) => Buffer.alloc(n)],
    ['0xff', (n: number) => Buffer.alloc(n, 0xff)],
    ['a pattern', (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff))],
  ])(
    'the middle third of its pages overwritten with %s: refused as a cut one is, the process alive',
    async (_what, bytes) => {
      const dir = await mkdtemp(join(tmpdir(), 'feedsync-damaged-'));
      dirs.push(dir);
      const path = join(dir, 'state.lmdb');
      const store = await createFileStore(path);
      await store.set(
        'fp:a',
        Array.from({ length: 5000 }, (_, i) => [`key-${i}`, `value-${i}`.repeat(i % 7)] as const),
      );
      await store.close();
      expect(await openError(path)).toBeUndefined(); // whole, it opens
      const whole = await readFile(path);
      const { pageSize, inUse } = headerOf(whole);
      expect(whole.length).toBe(inUse);
      // the middle third of its pages
      const from = Math.floor(whole.length / pageSize / 3) * pageSize;
      const to = 2 * from;
      const damaged = Buffer.concat([whole.subarray(0, from), bytes(to - from), whole.subarray(to)]);
      await writeFile(path, damaged);
      expect(judgeLmdbFile(path).kind).toBe('ok'); // the header is whole: only a read of the rest finds it
      const err = await openError(path);
      expect(err).toBeInstanceOf(EnvironmentError);
      const message = (err as Error).message;
      expect(message).toMatch(
        / is damaged: reading it whole (failed \(.+\)|killed the reading process \(SIG[A-Z]+\))\. LMDB would read what is not there and crash\. /,
      );
      expect(message.startsWith(`The state file ${path} is damaged: `)).toBe(true);
      expect(message).toContain(
        `Restore it from a backup, or move it aside (mv ${path} ${path}.bad) and run again; a state document of feedsync state export goes back in with feedsync state import. Moving it aside costs no listing`,
      );
    },
    60_000,
  );

  it('a store that ends short of its last page with every page after its header overwritten: refused, not a RangeError of the header check', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-damaged-'));
    dirs.push(dir);
    const path = join(dir, 'state.lmdb');
    await growStore(path, 4);
    const whole = await readFile(path);
    const { pageSize, inUse } = headerOf(whole);
    expect(whole.length).toBeLessThan(inUse); // so the header check reads the free tree
    const pattern = Buffer.from(Array.from({ length: whole.length - 2 * pageSize }, (_, i) => (i * 131 + 7) & 0xff));
    await writeFile(path, Buffer.concat([whole.subarray(0, 2 * pageSize), pattern]));
    const err = await openError(path);
    expect(err).toBeInstanceOf(EnvironmentError);
    expect((err as Error).message).toMatch(
      new RegExp(`^The state file .* is (damaged|cut short): .*Restore it from a backup, or move it aside`),
    );
  }, 60_000);
});
