// The page echo (page-echo.ts) against the emulator over HTTP: a paging that follows another of the
// same chatbot takes the listings it has seen from memory, and its remote side is the one a paging
// with no memory gives (every listing decoded), whatever changed in between: listings updated,
// deleted and created, pages shifted. Row options that differ are not mixed; the limit holds. Kept
// in files, a generation serves the next process; a file in doubt (altered, of another chatbot or
// shape) is ignored, and the paging decodes every page. The echo keeps no compared JSON: a recalled
// page's is read from its bytes, and what the change log names (an update's fields old → new, a
// URL-keyed delete's MLSNumber) is the same whether the page was recalled or decoded.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatbotApi } from '../../src/api/types.js';
import { silentLogger } from '../../src/log.js';
import { createEchoFiles } from '../../src/state/echo-files.js';
import type { RawBody } from '../../src/api/types.js';
import { comparedOfPageRow, decodePage } from '../../src/sync/remote/page-decode.js';
import {
  forgetEchoes,
  generationBytes,
  pageEcho,
  readGeneration,
  type Generation,
} from '../../src/sync/remote/page-echo.js';
import type { RemoteRows } from '../../src/sync/remote/remote-rows.js';
import { fetchRemote, type RemoteOptions } from '../../src/sync/remote/remote.js';
import { planDeletes, planListing } from '../../src/sync/plan/plan.js';
import type { RemoteSide } from '../../src/sync/model/plan-types.js';
import type { RemoteIndex } from '../../src/sync/remote/remote-index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { listing } from './helpers/listings.js';

const LISTINGS = 80;
let t: TestEmulator;

beforeAll(async () => {
  t = await startTestEmulator();
  for (let i = 0; i < LISTINGS; i++) {
    await t.api.createListing(
      listing(`E${i}`, {
        SerialNumber: 'SN-ECHO',
        Description: i % 3 ? `Home “${i}” },{ with }] in it ✓` : undefined,
        ExtensionColumn: i % 4 ? undefined : [{ Key: 'pool', value: 'yes' }],
        Bathrooms: 2 + (i % 4) * 0.25,
      }),
    );
  }
});
afterAll(() => t.close());

/** Everything the index holds, key by key, in a form toEqual compares. */
function contents(index: RemoteIndex) {
  return [...index].map(([key, copies]) => [
    key,
    copies.map((c) => ({
      id: c.id,
      otherKey: c.otherKey,
      hash: Buffer.from(c.hash).toString('hex'),
      compared: c.compared,
    })),
  ]);
}

const opts = (o: Partial<RemoteOptions> = {}): RemoteOptions => ({
  serialNumber: 'SN-ECHO',
  keyBy: 'MLSNumber',
  keepCompared: true,
  keepOtherKey: true,
  pageSize: 10,
  concurrency: 3,
  ...o,
});
/** the client without listListingsAs: every page parsed whole by the client (nothing recalled, nothing remembered) */
const plain = (api: ChatbotApi): ChatbotApi => ({ ...api, listListingsAs: undefined });

async function expectSameAsPlain(o: Partial<RemoteOptions> = {}) {
  const echoed = await fetchRemote(t.api, opts(o));
  const reference = await fetchRemote(plain(t.api), opts({ ...o, echoRows: 0 }));
  expect(reference.recalled).toBe(0);
  expect(contents(echoed.byKey)).toEqual(contents(reference.byKey));
  expect(echoed).toMatchObject({ complete: true, count: reference.count });
  return echoed;
}

describe('page echo', () => {
  it('takes every unchanged listing of a second paging from memory, giving the remote side a full decode gives', async () => {
    const first = await expectSameAsPlain();
    expect(first.recalled).toBe(0);
    const second = await expectSameAsPlain();
    expect(second.recalled).toBe(LISTINGS);
  });

  it('decodes what changed: updated, deleted and new listings, and pages shifted by them', async () => {
    await expectSameAsPlain();
    await t.api.updateListing({
      ...listing('E5', { SerialNumber: 'SN-ECHO', SalePrice: 1 }),
      Key: 'E5',
      KeyType: 'MLSNumber',
    });
    await t.api.updateListing({
      ...listing('E33', { SerialNumber: 'SN-ECHO', Description: 'now },{ different' }),
      Key: 'E33',
      KeyType: 'MLSNumber',
    });
    await t.api.deleteListings({ SerialNumber: 'SN-ECHO', Keys: ['E2'], KeyType: 'MLSNumber' });
    await t.api.createListing(listing('E-new', { SerialNumber: 'SN-ECHO' }));
    const after = await expectSameAsPlain();
    // every listing but the three changed ones comes from memory
    expect(after.recalled).toBe(after.count - 3);
    expect(after.byKey.get('E5')?.[0]?.compared).toContain('1');
    expect(after.byKey.has('E2')).toBe(false);
  });

  it('keeps row options apart: a paging with another ignore list or key decodes again', async () => {
    await expectSameAsPlain();
    const ignoring = await expectSameAsPlain({ ignore: new Set(['Description']) });
    expect(ignoring.recalled).toBe(0);
    const byUrl = await expectSameAsPlain({ keyBy: 'URL' });
    expect(byUrl.recalled).toBe(0);
    expect((await expectSameAsPlain({ keyBy: 'URL' })).recalled).toBe(LISTINGS - 1 + 1);
  });

  it('bounds the rows the pagings under way remember together by the limit; a paging that ends or fails lets go of them', async () => {
    // (a run pages a few chatbots at once: their next generations together stay within the limit)
    const res = await t.api.listListingsAs!(
      { SerialNumber: 'SN-ECHO', PageNumber: 1, PageSize: 10 },
      { raw: async (r: RawBody) => r, data: () => undefined },
    );
    const o = { keyBy: 'MLSNumber' as const, ignore: new Set(['Under way']) };
    const page = decodePage(res!.status, res!.bytes, o)!;
    expect(page.itemHashes).toHaveLength(10);
    forgetEchoes();
    const known = async (sn: string) => {
      const echo = await pageEcho(sn, o, 25);
      const got = echo.recall(res!) !== undefined;
      echo.abandon();
      return got;
    };
    const [a, b] = [await pageEcho('SN-UNDER-A', o, 25), await pageEcho('SN-UNDER-B', o, 25)];
    a.remember(page);
    a.remember(page);
    b.remember(page); // 30 rows under way, past 25: B remembers nothing this time
    await a.finish();
    await b.finish();
    expect(await known('SN-UNDER-A')).toBe(true);
    expect(await known('SN-UNDER-B')).toBe(false);
    // A's rows are no longer under way, nor an abandoned paging's: D remembers its 20 alone
    const c = await pageEcho('SN-UNDER-C', o, 25);
    c.remember(page);
    c.remember(page);
    c.abandon();
    c.abandon();
    const d = await pageEcho('SN-UNDER-D', o, 25);
    d.remember(page);
    d.remember(page);
    await d.finish();
    expect(await known('SN-UNDER-D')).toBe(true);
    expect(await known('SN-UNDER-C')).toBe(false);
  });

  it('takes a page whose whole answer it has seen, byte for byte, as the rows it gave then; a page differing in a byte is cut', async () => {
    const res = await t.api.listListingsAs!(
      { SerialNumber: 'SN-ECHO', PageNumber: 2, PageSize: 10 },
      { raw: async (r: RawBody) => r, data: () => undefined },
    );
    expect(res).toBeDefined();
    const o = { keyBy: 'MLSNumber' as const, keepCompared: true, keepOtherKey: true, ignore: new Set(['Whole']) };
    forgetEchoes();
    const first = await pageEcho('SN-WHOLE', o);
    const decoded = decodePage(res!.status, res!.bytes, o)!;
    first.remember(decoded);
    await first.finish();
    const second = await pageEcho('SN-WHOLE', o);
    const whole = second.recall(res!)!;
    // the rows remembered, without their compared JSON: that is read from the answer the page carries
    const { compared, ...remembered } = decoded.rows;
    expect(compared).toBeDefined();
    expect(whole.rows).toEqual(remembered);
    expect(whole.raw).toBe(res);
    expect(whole).toMatchObject({
      virtualCount: decoded.virtualCount,
      itemHashes: decoded.itemHashes,
      pageHash: decoded.pageHash,
    });
    expect(second.recalled).toBe(10);
    // the very rows remembered: not cut again, no item hashed or copied
    expect(second.recall(res!)!.rows).toBe(whole.rows);
    expect(second.recalled).toBe(20);
    // another VirtualCount in the envelope: another answer, so the page is cut and its items recalled one by one
    const text = Buffer.from(res!.bytes).toString('utf8');
    expect(text).toContain(`"VirtualCount":${decoded.virtualCount}`);
    const shifted = {
      status: res!.status,
      bytes: Buffer.from(
        text.replace(`"VirtualCount":${decoded.virtualCount}`, `"VirtualCount":${decoded.virtualCount + 1}`),
      ),
    };
    const cut = second.recall(shifted)!;
    expect(cut.rows).not.toBe(whole.rows);
    expect(cut.rows).toEqual(remembered);
    expect(cut.raw).toBe(shifted);
    expect(cut.virtualCount).toBe(decoded.virtualCount + 1);
    const { compared: shiftedCompared, ...shiftedRows } = decodePage(shifted.status, shifted.bytes, o)!.rows;
    expect(cut.rows).toEqual(shiftedRows);
    // each row's compared JSON read from the page's bytes is the one decoding gave that row
    const n = decoded.rows.ids.length;
    const comparedOf = (c: NonNullable<RemoteRows['compared']>, i: number) =>
      Buffer.from(c.utf8.subarray(i ? c.ends[i - 1] : 0, c.ends[i])).toString();
    for (let i = 0; i < n; i++) {
      expect(comparedOfPageRow(res!.status, res!.bytes, i, o)).toBe(comparedOf(compared!, i));
      expect(comparedOfPageRow(shifted.status, shifted.bytes, i, o)).toBe(comparedOf(shiftedCompared!, i));
    }
    expect(second.recalled).toBe(30);
    await second.finish();
    forgetEchoes();
  });

  it('remembers nothing past its limit', async () => {
    await expectSameAsPlain({ serialNumber: 'SN-ECHO', keyBy: 'URL', ignore: new Set(['City']), echoRows: 30 });
    const again = await expectSameAsPlain({
      serialNumber: 'SN-ECHO',
      keyBy: 'URL',
      ignore: new Set(['City']),
      echoRows: 30,
    });
    expect(again.recalled).toBe(0);
  });
});

describe('page echo files', () => {
  const withFiles = async (fn: (dir: string, files: ReturnType<typeof createEchoFiles>) => Promise<void>) => {
    const dir = await mkdtemp(join(tmpdir(), 'echo-files-'));
    const files = createEchoFiles(dir, silentLogger);
    try {
      await fn(dir, files);
    } finally {
      await files.settled(); // (a write still queued would land in the folder being removed)
      forgetEchoes();
      await rm(dir, { recursive: true, force: true });
    }
  };

  it('serves the next process: a paging after the memory is gone takes every listing from the file', async () => {
    await withFiles(async (dir, files) => {
      forgetEchoes();
      expect((await expectSameAsPlain({ echoFiles: files })).recalled).toBe(0);
      await files.settled();
      expect(await readdir(dir)).toHaveLength(1);
      forgetEchoes(); // a new process
      const next = await expectSameAsPlain({ echoFiles: files });
      expect(next.recalled).toBe(next.count);
    });
  });

  it('asks for the first page before the file is read back, and recalls every page all the same', async () => {
    await withFiles(async (_dir, files) => {
      forgetEchoes();
      await expectSameAsPlain({ echoFiles: files });
      await files.settled();
      forgetEchoes(); // a new process
      // the file's read is answered only once the first page has been asked for
      const asked: Array<number | undefined> = [];
      let firstAsked: () => void = () => undefined;
      const first = new Promise<void>((resolve) => (firstAsked = resolve));
      const api: ChatbotApi = {
        ...t.api,
        listListingsAs: (req, decoder, call) => {
          asked.push(req.PageNumber);
          firstAsked();
          return t.api.listListingsAs!(req, decoder, call);
        },
      };
      const slow = { ...files, read: async (name: string) => (await first, files.read(name)) };
      const paged = await fetchRemote(api, opts({ echoFiles: slow }));
      expect(asked[0]).toBe(1);
      expect(paged.recalled).toBe(paged.count);
    });
  });

  it('ignores a file altered, or of another chatbot, and decodes every page', async () => {
    await withFiles(async (dir, files) => {
      forgetEchoes();
      await expectSameAsPlain({ echoFiles: files });
      await files.settled();
      const [name] = await readdir(dir);
      const bytes = await readFile(join(dir, name!));
      // one letter changed in a listing's key
      const altered = Buffer.from(bytes);
      const at = altered.indexOf('E17');
      expect(at).toBeGreaterThan(0);
      altered[at] = 'F'.charCodeAt(0);
      await writeFile(join(dir, name!), altered);
      forgetEchoes();
      expect((await expectSameAsPlain({ echoFiles: files })).recalled).toBe(0);
      await files.settled();
      // the file of SN-ECHO where another chatbot's would be: its name inside does not match
      await writeFile(join(dir, name!), bytes);
      const other = { ...files, read: () => readFile(join(dir, name!)) };
      forgetEchoes();
      expect(
        (await expectSameAsPlain({ serialNumber: 'SN-ECHO', keepOtherKey: false, echoFiles: other })).recalled,
      ).toBe(0);
    });
  });

  it('ignores a file whose checksum holds but whose rows are not whole', () => {
    const name = 'n';
    const opts = { keyBy: 'MLSNumber' as const };
    const page = (n: number, o: Partial<RemoteRows> = {}): RemoteRows => ({
      ids: new Float64Array(n),
      keys: Array.from({ length: n }, (_, i) => `K${i}`),
      hashes: new Uint8Array(20 * n),
      ...o,
    });
    const generation = (
      pages: RemoteRows[],
      pageItems: string[][],
      answers = new Map([['200:x', { page: 0, virtualCount: 2 }]]),
      pageChunks: Generation['pageChunks'] = pages.map(() => ({ digests: [], rows: new Uint32Array(0) })),
    ): Generation => ({
      pages,
      pageItems,
      pageChunks,
      answers,
      rows: pages.reduce((n, p) => n + p.ids.length, 0),
    });
    const read = (
      pages: RemoteRows[],
      pageItems: string[][],
      o: {
        keepCompared?: boolean;
        limit?: number;
        answers?: Generation['answers'];
        pageChunks?: Generation['pageChunks'];
      } = {},
    ) =>
      readGeneration(
        name,
        { ...opts, ...o },
        o.limit ?? 10,
        generationBytes(name, generation(pages, pageItems, o.answers, o.pageChunks)),
      );
    // an item's hash: 20 bytes as latin1
    const a = 'a'.repeat(20);
    const b = 'b'.repeat(20);
    const items = [[a, b]];
    // whole: read back, each page's item hashes as they were, the map of them made only when asked
    const whole = read([page(2)], items);
    expect(whole).toMatchObject({
      rows: 2,
      pageItems: items,
      answers: new Map([['200:x', { page: 0, virtualCount: 2 }]]),
    });
    expect(whole?.byHash).toBeUndefined();
    expect(read([page(2)], [[a]])).toBeUndefined(); // a row without its item's hash
    expect(read([page(2)], [[a, 'b']])).toBeUndefined(); // a hash that is not 20 bytes
    expect(read([page(2)], [])).toBeUndefined(); // a page without its item hashes
    expect(read([page(2)], items, { answers: new Map([['200:x', { page: 1, virtualCount: 2 }]]) })).toBeUndefined(); // an answer of a page not there
    expect(read([page(2)], items, { answers: new Map([['200:x', { page: 0, virtualCount: -1 }]]) })).toBeUndefined();
    expect(read([page(2, { keys: ['K0'] })], items)).toBeUndefined(); // a key short
    expect(read([page(2, { hashes: new Uint8Array(20) })], items)).toBeUndefined(); // a hash short
    // rows never hold compared JSON (the options may keep it: rows are read alike)
    expect(read([page(2)], items, { keepCompared: true })).toMatchObject({ rows: 2 });
    expect(
      read([page(2, { compared: { utf8: new Uint8Array(2), ends: Uint32Array.of(1, 2) } })], items),
    ).toBeUndefined();
    expect(read([page(2)], items, { limit: 1 })).toBeUndefined(); // more rows than this process remembers
    // a page's chunks: each a 20-byte hash naming rows within the page
    const chunks = (digests: string[], ...rows: number[]) => [{ digests, rows: Uint32Array.from(rows) }];
    expect(read([page(2)], items, { pageChunks: chunks([a], 0, 2) })).toMatchObject({ pageChunks: chunks([a], 0, 2) });
    expect(read([page(2)], items, { pageChunks: chunks([a], 1, 2) })).toBeUndefined(); // rows past the page's
    expect(read([page(2)], items, { pageChunks: chunks([a], 0, 0) })).toBeUndefined(); // a chunk of no row
    expect(read([page(2)], items, { pageChunks: chunks(['a'], 0, 1) })).toBeUndefined(); // a hash not 20 bytes
    expect(read([page(2)], items, { pageChunks: chunks([a, b], 0, 1) })).toBeUndefined(); // a hash without its rows
    expect(read([page(2)], items, { pageChunks: [] })).toBeUndefined(); // a page without its chunks
    expect(readGeneration('other', opts, 10, generationBytes(name, generation([page(2)], items)))).toBeUndefined();
    expect(readGeneration(name, opts, 10, Buffer.from('short'))).toBeUndefined();
  });
});

const CMP = 40;
const cmpKey = (keyBy: 'MLSNumber' | 'URL', i: number) => (keyBy === 'URL' ? `https://example.com/C${i}` : `C${i}`);
/** listing C`i` as the chatbot holds it, and (`changed`) as the feed has it now: C7's price and every other listing's bedrooms */
const cmpListing = (i: number, changed = false) =>
  listing(`C${i}`, {
    SerialNumber: 'SN-CMP',
    Description: i % 3 ? `Home “${i}” },{ with }] in it ✓` : undefined,
    ExtensionColumn: i % 4 ? undefined : [{ Key: 'pool', value: 'yes' }],
    Bathrooms: 2 + (i % 4) * 0.25,
    ...(changed && (i === 7 ? { SalePrice: 1 } : { Bedrooms: 4 })),
  });

/**
 * What planning reads of the kept compared JSON, from a remote side: the fields each update names
 * old → new (what the change log records), and the MLSNumber each URL-keyed delete carries (C11
 * and C32 gone from the feed).
 */
function comparedReads(remote: RemoteSide, keyBy: 'MLSNumber' | 'URL') {
  const options = {
    keyBy,
    deletesMode: 'mirror' as const,
    ignore: new Set<string>(),
    fingerprints: new Map<string, string>(),
  };
  const kept = Array.from({ length: CMP }, (_, i) => i).filter((i) => i !== 11 && i !== 32);
  const updates = kept.map((i) => {
    const key = cmpKey(keyBy, i);
    return [
      key,
      planListing(
        { key, listing: cmpListing(i, true), position: { file: 'f', index: i } },
        remote.byKey.get(key),
        options,
      ).update?.changes,
    ];
  });
  const listings = new Set(kept.map((i) => cmpKey(keyBy, i)));
  const deletes = planDeletes(
    remote,
    { listings, protectedKeys: new Set(), goneKeys: new Map(), mode: 'full' },
    options,
  ).deletes;
  return { updates, deletes: deletes.map((d) => [d.key, d.mlsNumber]).sort() };
}

describe('compared JSON of recalled pages', () => {
  beforeAll(async () => {
    for (let i = 0; i < CMP; i++) await t.api.createListing(cmpListing(i));
  });

  for (const keyBy of ['MLSNumber', 'URL'] as const) {
    it(`names the same changes and deletes (${keyBy}) whether pages were decoded, recalled in this process or from a file`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'echo-compared-'));
      const files = createEchoFiles(dir, silentLogger);
      try {
        forgetEchoes();
        const o = opts({ serialNumber: 'SN-CMP', keyBy, echoFiles: files });
        const decoded = await fetchRemote(t.api, o);
        expect(decoded.recalled).toBe(0);
        const reads = comparedReads(decoded, keyBy);
        // the rule held to is not empty: C7's price, every other kept listing's bedrooms; deletes by URL carry their MLSNumber
        expect(reads.updates.find(([k]) => k === cmpKey(keyBy, 7))?.[1]).toEqual([
          { field: 'SalePrice', old: 350000, new: 1 },
        ]);
        expect(reads.updates.find(([k]) => k === cmpKey(keyBy, 8))?.[1]).toEqual([
          { field: 'Bedrooms', old: 3, new: 4 },
        ]);
        expect(reads.updates.every(([, c]) => Array.isArray(c) && c.length === 1)).toBe(true);
        expect(reads.deletes).toEqual([
          [cmpKey(keyBy, 11), keyBy === 'URL' ? 'C11' : undefined],
          [cmpKey(keyBy, 32), keyBy === 'URL' ? 'C32' : undefined],
        ]);
        const inProcess = await fetchRemote(t.api, o);
        expect(inProcess.recalled).toBe(CMP);
        expect(comparedReads(inProcess, keyBy)).toEqual(reads);
        await files.settled();
        forgetEchoes(); // a new process: the generation read from its file
        const fromFile = await fetchRemote(t.api, o);
        expect(fromFile.recalled).toBe(CMP);
        expect(comparedReads(fromFile, keyBy)).toEqual(reads);
        for (const r of [decoded, inProcess, fromFile]) r.byKey.close();
      } finally {
        await files.settled();
        forgetEchoes();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
