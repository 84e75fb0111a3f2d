// The kept compared JSON (compared-store.ts) held to the plain rule: every row reads back as the
// string it was, whether its page stayed in memory or went to the file (the default), and no file
// is left behind; a raw page's row is what readRaw makes of the page's answer, read back whole.
import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ComparedStore } from '../../src/sync/remote/compared-store.js';

/** a page's compared JSONs as RemoteRows keep them ('' is "none") */
function page(rows: readonly string[]) {
  const ends = new Uint32Array(rows.length);
  let total = 0;
  rows.forEach((r, i) => (ends[i] = total += Buffer.byteLength(r)));
  return { utf8: new Uint8Array(Buffer.from(rows.join(''))), ends };
}

describe('ComparedStore', () => {
  it('reads every row back as it was, in memory or from the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'compared-store-'));
    try {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme' })), { maxLength: 8 }), { maxLength: 12 }),
          fc.integer({ min: 0, max: 60 }),
          (pages, memoryRows) => {
            const store = new ComparedStore({ memoryRows, dir });
            const numbers = pages.map((rows) => store.add(page(rows)));
            // nothing under the folder: the file was removed as soon as it was opened
            expect(readdirSync(dir)).toEqual([]);
            let rows = 0;
            let spilled = 0;
            for (const p of pages) if ((rows += p.length) > memoryRows) spilled++;
            expect(store.spilled).toBe(spilled);
            pages.forEach((rows, p) => rows.forEach((r, i) => expect(store.read(numbers[p]!, i)).toBe(r === '' ? undefined : r)));
            store.close();
            // pages in memory stay readable after close
            pages.forEach((rows, p) => {
              let before = 0;
              for (let q = 0; q <= p; q++) before += pages[q]!.length;
              if (before <= memoryRows) rows.forEach((r, i) => expect(store.read(numbers[p]!, i)).toBe(r === '' ? undefined : r));
            });
          },
        ),
      );
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
    const raw = store.addRaw(200, Buffer.from('body ✓'), 2);
    expect(store.spilled).toBe(0);
    expect([0, 1, 2].map((i) => store.read(n, i))).toEqual(['{"a":1}', undefined, 'é']);
    expect(store.read(raw, 1)).toBe('200:body ✓:1');
  });

  it('keeps every page in its file by default, a raw page as its answer read back whole for each row', () => {
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
      const raw = store.addRaw(203, Buffer.from('{"List":[…]}'), 3);
      const b = store.add(page(['z']));
      expect(store.spilled).toBe(3);
      expect(readdirSync(dir)).toEqual([]);
      expect([store.read(a, 1), store.read(raw, 2), store.read(raw, 0), store.read(b, 0)]).toEqual(['yé', 'row 2', undefined, 'z']);
      expect(reads).toEqual([
        [203, '{"List":[…]}', 2],
        [203, '{"List":[…]}', 0],
      ]);
      store.close();
      expect(() => store.read(a, 0)).toThrow(/after close/);
      // a store made without a way to read raw pages refuses them at once, not when a row is read
      expect(() => new ComparedStore({ dir }).addRaw(200, Buffer.from('{}'), 1)).toThrow(/readRaw/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
