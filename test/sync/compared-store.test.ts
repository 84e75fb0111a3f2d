// The kept compared JSON (compared-store.ts) held to the plain rule: every row reads back as the
// string it was, whether its page stayed in memory (within memoryBytes), is on its way to the file
// (held until written) or is in it (the default), and no file is left behind; a raw page's row is
// what readRaw makes of the page's answer, read back whole.
import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ComparedStore, noFileWarning, type NoFile } from '../../src/sync/remote/compared-store.js';

/** the pages sent to the file, until their writes are done (it lets go of a page's bytes once they are in it) */
async function written(store: ComparedStore, inMemory: number): Promise<void> {
  store.flush();
  const until = Date.now() + 10_000;
  while (store.held > inMemory) {
    if (Date.now() > until) throw new Error(`${store.held} pages still held, ${inMemory} expected`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** a page's compared JSONs as RemoteRows keep them ('' is "none") */
function page(rows: readonly string[]) {
  const ends = new Uint32Array(rows.length);
  let total = 0;
  rows.forEach((r, i) => (ends[i] = total += Buffer.byteLength(r)));
  return { utf8: new Uint8Array(Buffer.from(rows.join(''))), ends };
}

describe('ComparedStore', () => {
  it('reads every row back as it was, in memory, on its way to the file or from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compared-store-'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.array(fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme' })), { maxLength: 8 }),
            { maxLength: 12 },
          ),
          fc.integer({ min: 0, max: 400 }),
          async (pages, memoryBytes) => {
            const store = new ComparedStore({ memoryBytes, dir });
            const numbers = pages.map((rows) => store.add(page(rows)));
            // nothing under the folder: the file was removed as soon as it was opened
            expect(readdirSync(dir)).toEqual([]);
            // the plain rule: a page stays in memory while the bytes added so far are within memoryBytes
            let bytes = 0;
            const inMemory = pages.map((rows) => (bytes += Buffer.byteLength(rows.join(''))) <= memoryBytes);
            expect(store.spilled).toBe(inMemory.filter((m) => !m).length);
            const readAll = (which: (p: number) => boolean) =>
              pages.forEach(
                (rows, p) =>
                  which(p) && rows.forEach((r, i) => expect(store.read(numbers[p]!, i)).toBe(r === '' ? undefined : r)),
              );
            // at once (the pages on their way to the file read from their bytes), then from the file
            readAll(() => true);
            await written(store, inMemory.filter(Boolean).length);
            readAll(() => true);
            store.close();
            // pages in memory stay readable after close; those in the file do not
            readAll((p) => inMemory[p]!);
            pages.forEach((rows, p) =>
              rows.forEach(
                (r, i) => !inMemory[p] && r !== '' && expect(() => store.read(numbers[p]!, i)).toThrow(/after close/),
              ),
            );
          },
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('closes the file once the writes on their way are done, and refuses to read its pages from then on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compared-store-'));
    try {
      const store = new ComparedStore({ dir });
      const rows = Array.from({ length: 50 }, (_, i) => `{"row":${i},"text":"${'x'.repeat(i * 100)}"}`);
      const numbers = rows.map((r) => store.add(page([r])));
      expect(store.spilled).toBe(50);
      store.flush();
      store.close();
      // on their way or written, a closed store's file pages are not read
      expect(() => store.read(numbers[49]!, 0)).toThrow(/after close/);
      await written(store, 0);
      expect(() => store.read(numbers[0]!, 0)).toThrow(/after close/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a batch at once past the bytes it lets be on their way, and reads every page back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compared-store-'));
    try {
      const store = new ComparedStore({ dir, memoryBytes: 1000 });
      // 24 MB: three times what may be on its way to the file at once
      const rows = Array.from(
        { length: 40 },
        (_, i) => `{"row":${i},"text":"${String.fromCharCode(97 + (i % 26)).repeat(600_000)}"}`,
      );
      const numbers = rows.map((r) => store.add(page([r])));
      expect(store.spilled).toBe(40);
      rows.forEach((r, i) => expect(store.read(numbers[i]!, 0)).toBe(r));
      await written(store, 0);
      rows.forEach((r, i) => expect(store.read(numbers[i]!, 0)).toBe(r));
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the bytes in memory when the file cannot be made', () => {
    const store = new ComparedStore({
      dir: join(tmpdir(), 'no-such-folder-for-compared-store', 'deeper'),
      readRaw: (status, body, row) => `${status}:${Buffer.from(body).toString()}:${row}`,
    });
    const n = store.add(page(['{"a":1}', '', 'é']));
    const raw = store.addRaw(200, Buffer.from('body ✓'));
    expect(store.spilled).toBe(0);
    expect([0, 1, 2].map((i) => store.read(n, i))).toEqual(['{"a":1}', undefined, 'é']);
    expect(store.read(raw, 1)).toBe('200:body ✓:1');
  });

  it('says once, when the file cannot be made, where and why, and the bytes it then holds (the run warns of it)', () => {
    const dir = join(tmpdir(), 'no-such-folder-for-compared-store', 'deeper');
    const told: NoFile[] = [];
    const store = new ComparedStore({ dir, onNoFile: (f) => told.push(f) });
    store.add(page(['{"a":1}', '{"b":2}']));
    store.add(page(['{"c":3}']));
    expect(store.spilled).toBe(0);
    expect(told).toEqual([{ dir, step: 'made', err: expect.objectContaining({ code: 'ENOENT' }), heldBytes: 14 }]);
    const warning = noFileWarning('SN-1', told[0]!);
    expect(warning).toContain(
      `chatbot SN-1's listings (for the change log) stays in memory: its temporary file in ${dir} could not be made (ENOENT`,
    );
    expect(warning).toMatch(/0\.0 MB held now, and about 0\.9 KB more a listing paged to the run's end/);
    expect(warning).toMatch(/point TMPDIR at one with room$/);
  });

  it('keeps every page in its file by default, a raw page as its answer read back whole for each row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compared-store-'));
    try {
      const reads: Array<[number, string, number]> = [];
      const store = new ComparedStore({
        dir,
        readRaw: (status, body, row) => {
          reads.push([status, Buffer.from(body).toString(), row]);
          return row === 0 ? undefined : `row ${row}`;
        },
      });
      const a = store.add(page(['x', 'yé']));
      const raw = store.addRaw(203, Buffer.from('{"List":[…]}'));
      const b = store.add(page(['z']));
      expect(store.spilled).toBe(3);
      await written(store, 0);
      expect(readdirSync(dir)).toEqual([]);
      expect([store.read(a, 1), store.read(raw, 2), store.read(raw, 0), store.read(b, 0)]).toEqual([
        'yé',
        'row 2',
        undefined,
        'z',
      ]);
      expect(reads).toEqual([
        [203, '{"List":[…]}', 2],
        [203, '{"List":[…]}', 0],
      ]);
      store.close();
      expect(() => store.read(a, 0)).toThrow(/after close/);
      // a store made without a way to read raw pages refuses them at once, not when a row is read
      expect(() => new ComparedStore({ dir }).addRaw(200, Buffer.from('{}'))).toThrow(/readRaw/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
