// Issue 23, bounded bytes: the CSV reader caps a row's size and its column count (source.maxRecordBytes,
// source.maxColumns), on the fast path and in csv-parse alike, as a read error naming the line. A quote
// never closed no longer buffers the rest of the file, and a header of a million columns is refused
// before it is built into records. Memory is measured in a child process with a 64 MB heap cap (what
// csv-parse holds off-heap shows in its RSS all the same), against generated input of 128 MB.
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../src/feeds/csv/csv-reader.js';
import { FeedReadError } from '../../src/errors.js';
import { runProbe } from '../helpers/child-probe.js';
import { collectUntilError } from './helpers.js';

async function* chunks(text: string, size = 1000): AsyncIterable<Buffer> {
  for (let i = 0; i < text.length; i += size) yield Buffer.from(text.slice(i, i + size));
}

const read = (text: string, fastPath: boolean, caps: { maxRecordBytes?: number; maxColumns?: number }) =>
  collectUntilError(
    readCsv(chunks(text), { label: 'caps.csv', delimiter: ',', quote: '"', encoding: 'utf8', ...caps }, { fastPath }),
  );

describe.each([true, false])('CSV caps (fast path: %s)', (fastPath) => {
  it('a row longer than maxRecordBytes ends the read, naming the line it starts on; nothing after it is read', async () => {
    const text = `MLS,Remarks\nA1,fine\nA2,"${'x'.repeat(10_000)}\nA3,"after"\nA4,after\n`;
    const { items, error } = await read(text, fastPath, { maxRecordBytes: 4096 });
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/row starting on line 3 is longer than source\.maxRecordBytes \(4096 bytes\)/);
    expect((error as FeedReadError).place).toMatchObject({ file: 'caps.csv', line: 3 });
    expect(items.map((i) => i.kind === 'record' && i.data.MLS)).toEqual(['A1']);
  });

  it('a whole row over the cap (its quote closed) is refused the same on either path', async () => {
    const { items, error } = await read(`MLS,Remarks\nA1,fine\nA2,"${'x'.repeat(10_000)}"\nA3,after\n`, fastPath, {
      maxRecordBytes: 4096,
    });
    expect(error!.message).toMatch(/row starting on line 3 is longer than source\.maxRecordBytes/);
    expect(items.map((i) => i.kind === 'record' && i.data.MLS)).toEqual(['A1']);
  });

  it('rows within the cap read as before', async () => {
    const { items, error } = await read(`MLS,Remarks\nA1,"${'y'.repeat(3000)}"\nA2,z\n`, fastPath, {
      maxRecordBytes: 4096,
    });
    expect(error).toBeUndefined();
    expect(items.map((i) => i.kind)).toEqual(['record', 'record']);
  });

  it('more columns than maxColumns ends the read, naming the line', async () => {
    const header = Array.from({ length: 30 }, (_, i) => `c${i}`).join(',');
    const wide = await read(`${header}\n${'1,'.repeat(29)}1\n`, fastPath, { maxColumns: 20 });
    expect(wide.error!.message).toMatch(/line 1 has 30 columns, more than source\.maxColumns \(20\)/);
    expect(wide.items).toHaveLength(0);
    const row = await read(`a,b\n1,2\n${'3,'.repeat(25)}3\n`, fastPath, { maxColumns: 20 });
    expect(row.error!.message).toMatch(/line 3 has 26 columns/);
    expect(row.items.map((i) => i.kind)).toEqual(['record']);
  });
});

describe('CSV caps in bounded memory (child process, 64 MB heap cap, 128 MB of input)', () => {
  it.each([
    ['unclosed-quote', true],
    ['unclosed-quote', false],
    ['wide-header', true],
    ['wide-header', false],
  ] as const)(
    '%s (fast path: %s): a read error naming the line, after a few MB of input, RSS bounded',
    async (shape, fastPath) => {
      const out = await runProbe({ kind: 'csv', shape, megabytes: 128, fastPath }, 120_000, [
        '--max-old-space-size=64',
      ]);
      expect(out.error?.name, JSON.stringify(out)).toBe('FeedReadError');
      expect(out.error!.message).toMatch(
        shape === 'unclosed-quote'
          ? /row starting on line 3 is longer than source\.maxRecordBytes/
          : /row starting on line 1 is longer|line 1 has \d+ columns/,
      );
      const taken = Number(/bytes taken (\d+)/.exec(out.error!.message)?.[1]);
      expect(taken).toBeLessThan(8 * 1024 * 1024); // of 128 MB: the reader stopped at the cap
      expect(out.peakRssMb).toBeLessThan(250);
    },
  );
});
