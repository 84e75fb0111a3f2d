// The feed thread (feed-thread.ts) gives the items the reader on this thread gives for the same
// file: the same records (position, text, data), the same per-row errors (message, place, fields,
// whether they stand alone), the same error that ends the file, and each record's key as the
// mapping reads it from the data; across batches, in windows-1252 and gzip, and it ends its worker
// however the reading ends.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CsvSource } from '../../src/feeds/config-schema.js';
import { openFeed, type FeedItem } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping } from '../../src/mapping/index.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { idleFeedWorkers, openFeedThread, ThreadRecord, YOUNG_GENERATION_MB } from '../../src/sync/read/feed-thread.js';
import { collectUntilError } from '../feeds/helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feed-thread-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const mapping = MappingConfig.parse({
  fields: { MLSNumber: { from: 'MLS' }, Url: { template: 'https://x.test/{MLS}' } },
});
const compiled = compileMapping(mapping);

/** an item as the sync reads it: what it is, where, its data and text, its error */
function plain(item: FeedItem) {
  const base = { kind: item.kind, position: item.position, data: item.kind === 'error' ? item.data : { ...item.data } };
  if (item.kind === 'record') return { ...base, text: item.text };
  if (item.kind === 'error')
    return { ...base, error: { message: item.error.message, place: item.error.place }, standalone: item.standalone };
  return base;
}

async function both(name: string, bytes: Buffer | string, source: Partial<CsvSource> = {}) {
  await writeFile(join(dir, name), bytes);
  const src = CsvSource.parse({ kind: 'csv', path: name, ...source });
  const here = await collectUntilError(openFeed('f', src, { baseDir: dir, logger: silentLogger }).items);
  const thread = await openFeedThread(src, { baseDir: dir, mapping, keyBy: 'MLSNumber', minBytes: 0 });
  expect(thread).toBeDefined();
  const there = await collectUntilError(thread!.items);
  expect(there.items.map(plain)).toEqual(here.items.map(plain));
  expect(there.error?.message).toBe(here.error?.message);
  expect(there.error?.constructor).toBe(here.error?.constructor);
  for (const item of there.items) {
    if (item instanceof ThreadRecord) expect(item.key).toBe(compiled.keyOf(item.data, 'MLSNumber'));
  }
  return there;
}

describe('feed thread', () => {
  it('gives the records, row errors and positions the reader on this thread gives', async () => {
    const csv = [
      'MLS, City ,Price',
      'A1,Austin,100',
      '"A2","Round Rock, TX","2""00"',
      '',
      'A3,"two',
      'lines",300',
      'A4,short',
      'A5,"x\u001fy",500',
      ' A6 ,Élan ✓,600',
      'A7,Austin,700,extra,cols,here,and,more',
      '',
    ].join('\r\n');
    const { items } = await both('mixed.csv', csv);
    expect(items.map((i) => i.kind)).toEqual(['record', 'record', 'record', 'error', 'record', 'record', 'error']);
    // the joined form comes as its text, rebuilt when read; the JSON form (a unit separator) as itself
    expect(items.filter((i) => i instanceof ThreadRecord)).toHaveLength(4);
  });

  it('reads a long file across batches, as the reader here does', async () => {
    const rows = Array.from({ length: 20_500 }, (_, i) => `M${i},City ${i % 7},${i}`);
    const { items } = await both('long.csv', ['MLS,City,Price', ...rows, ''].join('\n'));
    expect(items).toHaveLength(20_500);
    expect(items.at(-1)).toMatchObject({ position: { line: 20_501, index: 20_499 } });
  });

  it('reads windows-1252 and gzip as the reader here does', async () => {
    await both('cp.csv', iconv.encode('MLS,City\nA1,Caf\u00e9 \u201cquoted\u201d \u20ac\n', 'windows-1252'), {
      encoding: 'windows-1252',
    });
    await both('z.csv.gz', gzipSync('MLS,City\nA1,Austin\nA2,Waco\n'));
  });

  it('ends with the error that ends the file here: a quote never closed, no header, a name twice', async () => {
    expect((await both('cut.csv', 'MLS,City\nA1,Austin\nA2,"never closed\n')).error).toBeDefined();
    expect((await both('empty.csv', '')).error).toBeDefined();
    expect((await both('twice.csv', 'MLS,City,MLS\nA1,Austin,A1\n')).error).toBeDefined();
  });

  it('keeps a header naming __proto__ a column like any other', async () => {
    await both('proto.csv', 'MLS,__proto__\nA1,x\n');
  });

  it('reads nothing of a file below its size, and ends its worker when the reading stops early', async () => {
    await writeFile(join(dir, 'small.csv'), 'MLS\nA1\n');
    const src = CsvSource.parse({ kind: 'csv', path: 'small.csv' });
    expect(await openFeedThread(src, { baseDir: dir, mapping, keyBy: 'MLSNumber', minBytes: 1024 })).toBeUndefined();
    expect(
      await openFeedThread(CsvSource.parse({ kind: 'csv', path: 'missing.csv' }), {
        baseDir: dir,
        mapping,
        keyBy: 'MLSNumber',
        minBytes: 0,
      }),
    ).toBeUndefined();

    await writeFile(
      join(dir, 'stop.csv'),
      ['MLS', ...Array.from({ length: 30_000 }, (_, i) => `S${i}`), ''].join('\n'),
    );
    const thread = (await openFeedThread(CsvSource.parse({ kind: 'csv', path: 'stop.csv' }), {
      baseDir: dir,
      mapping,
      keyBy: 'MLSNumber',
      minBytes: 0,
    }))!;
    let seen = 0;
    for await (const _ of thread.items) if (++seen === 10) break;
    expect(seen).toBe(10);
    await thread.close(); // (already ended by the break: a second close is harmless)

    const aborted = new AbortController();
    const cut = (await openFeedThread(CsvSource.parse({ kind: 'csv', path: 'stop.csv' }), {
      baseDir: dir,
      mapping,
      keyBy: 'MLSNumber',
      minBytes: 0,
      signal: aborted.signal,
    }))!;
    const read = collectUntilError(cut.items);
    aborted.abort();
    const { error } = await read;
    expect(error?.message).toMatch(/stop\.csv: aborted/);
  });

  it('keeps its worker for the next read, after a read stopped early too', async () => {
    await writeFile(
      join(dir, 'again.csv'),
      ['MLS,City', ...Array.from({ length: 40_000 }, (_, i) => `G${i},C${i}`), ''].join('\n'),
    );
    const src = CsvSource.parse({ kind: 'csv', path: 'again.csv' });
    const first = (await openFeedThread(src, { baseDir: dir, mapping, keyBy: 'MLSNumber', minBytes: 0 }))!;
    for await (const item of first.items) if (item.position.index === 5) break;
    expect(idleFeedWorkers()).toBeGreaterThanOrEqual(1);
    const idleBefore = idleFeedWorkers();
    // the next read takes the kept worker: none of the stopped read's batches reach it
    const second = await collectUntilError(
      (await openFeedThread(src, { baseDir: dir, mapping, keyBy: 'MLSNumber', minBytes: 0 }))!.items,
    );
    expect(second.error).toBeUndefined();
    expect(second.items.map((i) => i.position.index)).toEqual(Array.from({ length: 40_000 }, (_, i) => i));
    expect(idleFeedWorkers()).toBe(idleBefore);
  });

  it("bounds its worker's young generation, whatever the machine's memory (node's default grows it with its garbage)", async () => {
    await writeFile(join(dir, 'f.csv'), 'MLS\nA1\n');
    const thread = (await openFeedThread(CsvSource.parse({ kind: 'csv', path: 'f.csv' }), {
      baseDir: dir,
      mapping,
      keyBy: 'MLSNumber',
      minBytes: 0,
      entry: new URL('../helpers/young-generation-worker.ts', import.meta.url),
    }))!;
    const { error } = await collectUntilError(thread.items);
    // (the worker's answer: the most its new space was committed, and the limit it runs with)
    const [, bytes, limit] = /the feed thread failed: (\d+) (\d+)/.exec(error?.message ?? '') ?? [];
    expect(Number(limit)).toBe(YOUNG_GENERATION_MB);
    const newSpace = Number(bytes);
    expect(newSpace).toBeGreaterThan(0);
    // V8 commits more new space than the limit names (16-19 MB seen at 12, Node 24.21), and with node's
    // default 32 MB here, growing with the machine's memory: twice the limit tells the two apart
    expect(newSpace).toBeLessThanOrEqual(2 * YOUNG_GENERATION_MB * 2 ** 20);
  });

  it.each(['throw', 'exit', 'hang'])(
    'ends a read whose worker fails (%s) with an error, never a hang',
    async (mode) => {
      await writeFile(join(dir, 'f.csv'), 'MLS\nA1\n');
      const entry = new URL(`../helpers/faulty-feed-worker.ts?mode=${mode}`, import.meta.url);
      const aborted = new AbortController();
      const thread = (await openFeedThread(CsvSource.parse({ kind: 'csv', path: 'f.csv' }), {
        baseDir: dir,
        mapping,
        keyBy: 'MLSNumber',
        minBytes: 0,
        entry,
        stopWaitMs: 100,
        signal: aborted.signal,
      }))!;
      const read = collectUntilError(thread.items);
      // a worker that hangs is left by the run's deadline (its signal), then ended
      if (mode === 'hang') setTimeout(() => aborted.abort(), 300);
      const { items, error } = await read;
      expect(items).toEqual([]);
      expect(error?.message).toMatch(
        mode === 'throw' ? /the reader broke/ : mode === 'exit' ? /exit code 3/ : /aborted/,
      );
    },
  );
});
