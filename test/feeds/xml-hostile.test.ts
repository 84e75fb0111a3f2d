// Hostile and broken XML (issue 8 points 1 and 7, issue 9 point 3): a bad record is one rejected
// record with its place, read as far as it can be so its key is known (and it is never taken for
// gone); nothing in a record expands or fetches an entity, nests without bound or reaches a
// prototype; a huge construct outside the records is skipped in linear time and bounded memory.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FeedReadError } from '../../src/errors.js';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import { createXmlScanner } from '../../src/feeds/xml/xml-scanner.js';
import { compileMapping, mapFeed, type MappedItem } from '../../src/mapping/index.js';
import { startHostile } from '../helpers/hostile-server.js';
import { chunks, collect, collectUntilError } from './helpers.js';

const opts = { label: 'feed.xml', recordPath: 'Listings.Listing' };
const listing = (mls: string, inner = '') => `<Listing><MlsNumber>${mls}</MlsNumber>${inner}</Listing>`;
const doc = (...records: string[]) => `<?xml version="1.0"?>\n<Listings>\n${records.join('\n')}\n</Listings>\n`;

/** Mapped items of `xml` through the demo's listhub mapping (keyed by MLSNumber = MlsNumber). */
async function mapped(xml: string, size = 7): Promise<MappedItem[]> {
  const { config } = await loadConfig(fileURLToPath(new URL('../../fixtures/demo.yaml', import.meta.url)));
  const feed = config.feeds.find((f) => f.name === 'listhub-xml')!;
  return collect(
    mapFeed(readXml(chunks(xml, size), opts), compileMapping(feed.mapping), { serialNumber: 'SN', keyBy: 'MLSNumber' }),
  );
}

describe('a malformed XML record', () => {
  it('with a stray "<" or "&" is one error at its line, with its key read before or after the mistake', async () => {
    const xml = doc(
      listing('K1'),
      listing('K2', '<ListingDescription>3 < 4</ListingDescription>'),
      '<Listing><ListingDescription>Smith & Sons</ListingDescription><MlsNumber>K3</MlsNumber></Listing>',
      '<Listing><ListingDescription>a<1b</ListingDescription><MlsNumber>K4</MlsNumber></Listing>',
      listing('K5'),
    );
    const items = await mapped(xml);
    expect(items.map((i) => [i.kind, i.position.index, i.position.line, 'key' in i ? i.key : undefined])).toEqual([
      ['rejected', 0, 3, 'K1'], // the demo mapping wants more fields: rejected, but read
      ['error', 1, 4, 'K2'],
      ['error', 2, 5, 'K3'],
      ['error', 3, 6, 'K4'],
      ['rejected', 4, 7, 'K5'],
    ]);
    const messages = items.map((i) => (i.kind === 'error' ? i.error.message : ''));
    expect(messages[1]).toBe('feed.xml:4, record 1: malformed <Listing> record: a stray "<" (write &lt;) (line 4)');
    expect(messages[2]).toBe('feed.xml:5, record 2: malformed <Listing> record: a stray "&" (write &amp;) (line 5)');
  });

  it('never swallows the records after it: a stray "&" with no ";" anywhere after it, an unclosed quote, a wrong close tag', async () => {
    const xml = doc(
      listing('K1', '<ListingDescription>fish & chips</ListingDescription>'),
      listing('K2', '<ListPrice currency="USD>100</ListPrice>'),
      listing('K3', '<ListPrice>100</Price>'),
      listing('K4'),
    );
    for (const size of [1, 5, 64, xml.length]) {
      const { items, error } = await collectUntilError(readXml(chunks(xml, size), opts));
      expect(error).toBeUndefined();
      expect(
        items.map((i) => [i.kind, i.kind === 'error' ? i.data?.MlsNumber : i.kind === 'record' && i.data.MlsNumber]),
      ).toEqual([
        ['error', 'K1'],
        ['error', 'K2'],
        ['error', 'K3'],
        ['record', 'K4'],
      ]);
    }
  });

  it('holding a DOCTYPE with an external entity is rejected; the entity is neither expanded nor fetched, here or before the root', async () => {
    let requests = 0;
    const server = await startHostile((_req, res) => {
      requests++;
      res.end('<Listing><MlsNumber>INJECTED</MlsNumber></Listing>');
    });
    const url = `${server.origin}/e.xml`;
    try {
      const xml =
        `<?xml version="1.0"?>\n<!DOCTYPE Listings [ <!ENTITY top SYSTEM "${url}"> ]>\n<Listings>\n` +
        `${listing('K1', `<ListingDescription>&top;</ListingDescription>`)}\n` +
        `${listing('K2', `<!DOCTYPE x [ <!ENTITY xxe SYSTEM "${url}"> ]><ListingDescription>&xxe;</ListingDescription>`)}\n` +
        `${listing('K3')}\n</Listings>\n`;
      const { items, error } = await collectUntilError(readXml(chunks(xml, 11), opts));
      expect(error).toBeUndefined();
      expect(items.map((i) => i.kind)).toEqual(['record', 'error', 'record']);
      expect(items[0]!.kind === 'record' && items[0]!.data.ListingDescription).toBe('&top;');
      const bad = items[1]!;
      expect(bad.kind === 'error' && bad.error.message).toMatch(
        /^feed\.xml:5, record 1: malformed <Listing> record: a DOCTYPE inside the record/,
      );
      expect(bad.kind === 'error' && bad.data).toEqual({ MlsNumber: 'K2', ListingDescription: '&xxe;' });
      expect(requests).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('nested 101 levels deep is rejected at its line (100 levels are read); a million levels do not crash', async () => {
    const nest = (levels: number) => `${'<D>'.repeat(levels)}x${'</D>'.repeat(levels)}`;
    const xml = doc(listing('K1', nest(99)), listing('K2', nest(100)), listing('K3', nest(1_000_000)), listing('K4'));
    const { items, error } = await collectUntilError(readXml(chunks(xml, 65536), opts));
    expect(error).toBeUndefined();
    expect(items.map((i) => [i.kind, i.position.line])).toEqual([
      ['record', 3],
      ['error', 4],
      ['error', 5],
      ['record', 6],
    ]);
    expect(items[1]!.kind === 'error' && items[1]!.error.message).toMatch(
      /elements nested deeper than 100 levels \(line 4\)$/,
    );
    expect(items[2]!.kind === 'error' && items[2]!.data?.MlsNumber).toBe('K3');
  });

  it('with an element named __proto__ is rejected and touches no prototype', async () => {
    const xml = doc(
      listing('K1', '<__proto__><polluted>yes</polluted></__proto__><constructor>c</constructor>'),
      listing('K2'),
    );
    const { items } = await collectUntilError(readXml(chunks(xml, 3), opts));
    expect(items.map((i) => i.kind)).toEqual(['error', 'record']);
    const bad = items[0]!;
    expect(bad.kind === 'error' && bad.error.message).toMatch(/an element named __proto__ \(line 3\)$/);
    expect(bad.kind === 'error' && Object.getPrototypeOf(bad.data)).toBe(Object.prototype);
    expect(bad.kind === 'error' && bad.data).toEqual({ MlsNumber: 'K1', constructor: 'c' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('bounded XML reading', () => {
  it('skips a 200 MB comment, 50 MB of blank text and a 20 MB processing instruction between records with a 48 MB heap', () => {
    const child = fileURLToPath(new URL('./xml-big-construct.ts', import.meta.url));
    const r = spawnSync(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', child], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const { items, peakRssMb } = JSON.parse(r.stdout) as { items: unknown[]; peakRssMb: number };
    expect(items).toEqual([
      [3, 'A1'],
      [4, 'A2'],
      [26_214_405, 'A3'],
    ]);
    // reading it whole took 2.5 GB before; the process itself is about 60-90 MB
    expect(peakRssMb).toBeLessThan(200);
  }, 130_000);

  it('hands on values that do not pin the text they were read from: 100k keys of a 120 MB feed kept in a few MB', () => {
    const child = fileURLToPath(new URL('./xml-kept-keys.ts', import.meta.url));
    const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=64', '--import', 'tsx', child], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const { keys, heapUsedMb } = JSON.parse(r.stdout) as { keys: number; heapUsedMb: number };
    expect(keys).toBe(100_000);
    // slices of the chunks kept every chunk alive: the whole document (120 MB) was in the heap
    expect(heapUsedMb).toBeLessThan(40);
  }, 130_000);

  it('a start tag cut by many chunks is searched once (issue 49): 3.5 MB of one open tag in 16 KB chunks costs about what 3.5 MB of records do', () => {
    const CHUNK = 16 * 1024;
    const SIZE = 3.5 * 1024 * 1024;
    /** CPU microseconds of pushing SIZE characters of `piece(i)` chunks, the median of three */
    const cpu = (piece: (i: number) => string) => {
      const runs: number[] = [];
      for (let r = 0; r < 3; r++) {
        const scanner = createXmlScanner({ recordPath: 'L.R', label: 'f.xml' });
        const before = process.cpuUsage();
        scanner.push('<L>');
        for (let i = 0, n = 0; n < SIZE; i++) {
          const p = piece(i);
          scanner.push(p);
          n += p.length;
        }
        const used = process.cpuUsage(before);
        runs.push(used.user + used.system);
      }
      return runs.sort((a, b) => a - b)[1]!;
    };
    const records = '<R><A>1</A><B>two</B></R>\n'.repeat(Math.ceil(CHUNK / 26)).slice(0, CHUNK);
    const base = cpu(() => records);
    // (searched again from its `<` at every push, the tag cost ten times the records: 2.6 s against 0.26 s)
    expect(cpu((i) => (i === 0 ? '<X ' : '') + 'a="b" '.repeat(CHUNK / 6)) / base).toBeLessThan(4);
    expect(cpu((i) => (i === 0 ? '<X' : '') + 'n'.repeat(CHUNK)) / base).toBeLessThan(4);
    expect(cpu((i) => (i === 0 ? '<X a="' : '') + '>'.repeat(CHUNK)) / base).toBeLessThan(4);
  });

  it('refuses a record or a tag past its cap as an error of the document, at its line', () => {
    const big = createXmlScanner({ recordPath: 'Listings.Listing', label: 'f.xml', maxRecordChars: 1000 });
    big.push('<Listings>\n<Listing><A>1</A></Listing>\n<Listing><A>');
    expect(() => big.push('x'.repeat(2000))).toThrow(FeedReadError);
    expect(() =>
      createXmlScanner({ recordPath: 'L.R', label: 'f.xml', maxRecordChars: 1000 }).push(
        `<L>\n\n<R><!-- ${'c'.repeat(2000)}`,
      ),
    ).toThrow(/^f\.xml:3: the <R> record starting on line 3 is longer than 1000 characters/);
    const tag = createXmlScanner({ recordPath: 'L.R', label: 'f.xml', maxMarkupChars: 1000 });
    tag.push('<L>\n<R a="');
    expect(() => tag.push('v'.repeat(2000))).toThrow(
      /^f\.xml:2: markup longer than 1000 characters starting on line 2/,
    );
  });
});
