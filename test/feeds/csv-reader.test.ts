import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { FeedReadError, RecordParseError } from '../../src/errors.js';
import { readCsv, type CsvOptions } from '../../src/feeds/csv/csv-reader.js';
import { chunks, collectUntilError } from './helpers.js';

const opts: CsvOptions = { label: 'feed.csv', delimiter: ',', quote: '"', encoding: 'utf8' };

async function read(input: string | Buffer, o: Partial<typeof opts> = {}, size = 7) {
  return collectUntilError(readCsv(chunks(input, size), { ...opts, ...o }));
}

describe('readCsv', () => {
  it('reads records keyed by the header, with BOM, CRLF, quoted newlines and the line each starts on', async () => {
    const { items, error } = await read(
      '\ufeffMLS,Remarks\r\nA1,plain\r\n\r\nA2,"two\r\nlines, and ""quotes"""\r\nA3,last\r\n',
    );
    expect(error).toBeUndefined();
    expect(items.map((i) => [i.kind, i.position.line, i.position.index, i.kind === 'record' && i.data])).toEqual([
      ['record', 2, 0, { MLS: 'A1', Remarks: 'plain' }],
      ['record', 4, 1, { MLS: 'A2', Remarks: 'two\r\nlines, and "quotes"' }],
      ['record', 6, 2, { MLS: 'A3', Remarks: 'last' }],
    ]);
  });

  it('reports a row with the wrong column count as an error with its line, and reads on', async () => {
    const { items, error } = await read('a,b\n1,2\n3,4,5\n6\n7,8\n');
    expect(error).toBeUndefined();
    expect(items.map((i) => [i.kind, i.position.line])).toEqual([
      ['record', 2],
      ['error', 3],
      ['error', 4],
      ['record', 5],
    ]);
    const bad = items[1]!;
    expect(bad.kind === 'error' && bad.error).toBeInstanceOf(RecordParseError);
    expect(bad.kind === 'error' && bad.error.message).toBe(
      'feed.csv:3, record 1: expected 2 columns as in the header, got 3',
    );
  });

  it('reports a quote inside an unquoted field as a row error and reads on', async () => {
    const { items, error } = await read('a,b\n1,2\n3,ab"c\n4,5\n');
    expect(error).toBeUndefined();
    expect(items.map((i) => [i.kind, i.position.line])).toEqual([
      ['record', 2],
      ['error', 3],
      ['record', 4],
    ]);
  });

  it('throws FeedReadError for a quote left open at the end (a truncated file), after the rows it could read', async () => {
    const { items, error } = await read('a,b\n1,2\n3,"abc\n4,5\n');
    expect(items.map((i) => i.kind)).toEqual(['record']);
    expect(error).toBeInstanceOf(FeedReadError);
    expect((error as FeedReadError).retryable).toBe(false);
    expect(error!.message).toMatch(/^feed\.csv:3: a quote opened in the row starting on line 3 is never closed/);
  });

  it('throws FeedReadError for an empty file', async () => {
    const { error } = await read('');
    expect(error).toBeInstanceOf(FeedReadError);
  });

  it('uses the configured delimiter and quote', async () => {
    const { items } = await read("a;b\n'x;y';2\n", { delimiter: ';', quote: "'" });
    expect(items[0]!.kind === 'record' && items[0]!.data).toEqual({ a: 'x;y', b: '2' });
  });

  it('decodes windows-1252 (€, curly quotes) unlike latin1, across chunk boundaries', async () => {
    const text = 'Remarks\n“Seller’s” price €2,000 – café\n';
    const bytes = iconv.encode(text.replace(/,/g, ''), 'windows-1252');
    for (const size of [1, 2, 5]) {
      const cp = await read(bytes, { encoding: 'windows-1252' }, size);
      expect(cp.items[0]!.kind === 'record' && cp.items[0]!.data.Remarks).toBe('“Seller’s” price €2000 – café');
    }
    const latin = await read(bytes, { encoding: 'latin1' });
    const remarks = latin.items[0]!.kind === 'record' ? String(latin.items[0]!.data.Remarks) : '';
    expect(remarks).toContain('café');
    expect(remarks).not.toContain('€');
    expect(remarks.charCodeAt(0)).toBe(0x93); // a C1 control in latin1, a curly quote in windows-1252
  });

  it('reads the committed windows-1252 sample', async () => {
    const { openFeed } = await import('../../src/feeds/index.js');
    const { silentLogger } = await import('../../src/log.js');
    const { fileURLToPath } = await import('node:url');
    const baseDir = fileURLToPath(new URL('../../fixtures', import.meta.url));
    const feed = openFeed(
      'cp',
      {
        kind: 'csv',
        path: 'feeds/cp1252-sample.csv',
        encoding: 'windows-1252',
        delimiter: ',',
        quote: '"',
        maxRecordBytes: 1 << 20,
        maxColumns: 10_000,
        headers: {},
        timeoutMs: 1000,
        retries: 0,
      },
      { baseDir, logger: silentLogger },
    );
    const { items, error } = await collectUntilError(feed.items);
    expect(error).toBeUndefined();
    expect(items.map((i) => i.kind === 'record' && i.data.Remarks)).toEqual([
      'Seller’s “must see” home — HOA dues €0.',
      'Price includes a €2,000 credit; “as is”.',
      'Ask about the ‘smart home’ package…',
      'Plain remarks, nothing special.',
    ]);
  });
});
