// The emulator's listing indexes (by position, MLSNumber, Url) agree with a full scan of what is
// stored, after creates, updates that change the keys, and deletes; also after a data file is loaded.
// And many requests waiting out the injected latency at once print no listener warning and leave
// no listener behind.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENDPOINTS } from '../../src/api/schemas.js';
import { ChatbotListings } from '../../src/emulator/chatbot-listings.js';
import { toListItem } from '../../src/emulator/list-item.js';
import { mulberry32 } from '../../src/emulator/prng.js';
import type { StoredListing } from '../../src/emulator/chatbot-listings.js';
import { sampleListing, startTestEmulator, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { rawPost } from '../helpers/raw-post.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const open: TestEmulator[] = [];
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((e) => e.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function emulator(opts: Parameters<typeof startTestEmulator>[0] = {}) {
  const e = await startTestEmulator(opts);
  open.push(e);
  return e;
}

/** every list page of a filter, as [ID, MLSNumber, Url], checking VirtualCount on each page */
async function listAll(t: TestEmulator, filter: { MLSNumber?: string; CityName?: string } = {}) {
  const out: [number, string, string][] = [];
  for (let page = 1; ; page++) {
    const res = await t.api.listListings({ SerialNumber: 'SN-1', PageSize: 3, PageNumber: page, ...filter });
    out.push(...res.List.map((i) => [i.ID, i.MLSNumber, i.Url] as [number, string, string]));
    if (res.List.length < 3) {
      expect(res.VirtualCount).toBe(out.length);
      return out;
    }
  }
}

/** the same from the admin view, which reads the stored listings directly */
async function scan(t: TestEmulator, keep: (l: StoredListing) => boolean = () => true) {
  return (await t.listings('SN-1')).filter(keep).map((l) => [l.ID, l.MLSNumber, l.Url]);
}

async function expectIndexesAgree(t: TestEmulator, mlsNumbers: string[]) {
  expect(await listAll(t)).toEqual(await scan(t));
  for (const mls of mlsNumbers)
    expect(await listAll(t, { MLSNumber: mls })).toEqual(await scan(t, (l) => l.MLSNumber === mls));
  expect(await listAll(t, { CityName: 'dallas' })).toEqual(await scan(t, (l) => l.City === 'Dallas'));
}

describe('emulator list pages', () => {
  it("are, byte for byte, the envelope of each stored listing as a list item, after updates too (each item's JSON is kept)", async () => {
    const t = await emulator();
    for (let i = 0; i < 5; i++)
      await t.api.createListing(
        sampleListing({ MLSNumber: `M${i}`, Description: `“${i}” ü \\ "q"`, Images: [`https://i/${i}.jpg`] }),
      );
    const page = async () => {
      const res = await freshFetch(t.url + ENDPOINTS.list, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'chatrobot-sessionkey': TEST_SESSION_KEY },
        body: JSON.stringify({ SerialNumber: 'SN-1', PageNumber: 1, PageSize: 4 }),
      });
      return res.text();
    };
    const expected = async () => {
      const stored = await t.listings('SN-1');
      return JSON.stringify({
        Data: { List: stored.slice(0, 4).map(toListItem), VirtualCount: stored.length },
        Version: '1.0',
        Success: true,
        Code: 200,
        Message: '',
      });
    };
    expect(await page()).toBe(await expected());
    await t.api.updateListing({ ...sampleListing({ MLSNumber: 'M2', SalePrice: 1 }), Key: 'M2', KeyType: 'MLSNumber' });
    await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['M0'], KeyType: 'MLSNumber' });
    const after = await page();
    expect(after).toBe(await expected());
    expect(after).toContain('"SalePrice":"1"');
  });
});

describe('emulator indexes over HTTP', () => {
  it('agree with a full scan after updates that change MLSNumber and Url, and deletes', async () => {
    const t = await emulator({ maxPageSize: 3 });
    const url = (s: string) => `https://example.com/l/${s}`;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const mls = i % 4 === 0 ? 'DUP' : `M${i}`;
      ids.push(
        await t.api.createListing(sampleListing({ MLSNumber: mls, Url: url(mls), City: i % 3 ? 'Austin' : 'Dallas' })),
      );
    }
    const mlsNumbers = ['DUP', 'M1', 'M2', 'M3', 'M5', 'M6', 'M7', 'M9', 'NEW', 'MOVED', 'nope'];
    await expectIndexesAgree(t, mlsNumbers);

    // ID 1 (a DUP copy) gets a new MLSNumber and Url by its NewOaks key
    const moved = sampleListing({ MLSNumber: 'MOVED', Url: url('MOVED'), City: 'Dallas' });
    expect(await t.api.updateListing({ ...moved, Key: ids[0]!, KeyType: 'NewOaks' })).toBe(1);
    expect(await t.api.updateListing({ ...moved, Key: url('DUP'), KeyType: 'URL' })).toBe(2); // the other two copies
    expect(await t.api.updateListing({ ...moved, Key: url('MOVED'), KeyType: 'URL' })).toBe(3);
    expect(await t.api.updateListing({ ...moved, Key: 'DUP', KeyType: 'MLSNumber' })).toBe(0);
    expect(await t.api.updateListing({ ...moved, Key: url('DUP'), KeyType: 'URL' })).toBe(0);
    await expectIndexesAgree(t, mlsNumbers);

    // a later ID takes an earlier one's MLSNumber: the filtered list stays in ID order
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M1', Url: url('M1') }),
        Key: 'M9',
        KeyType: 'MLSNumber',
      }),
    ).toBe(1);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'NEW', Url: url('NEW') }),
        Key: 'M1',
        KeyType: 'MLSNumber',
      }),
    ).toBe(2);
    expect((await listAll(t, { MLSNumber: 'NEW' })).map(([id]) => id)).toEqual([2, 10]);
    await expectIndexesAgree(t, mlsNumbers);

    expect(
      (await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: [url('MOVED'), url('M3')], KeyType: 'URL' }))
        .SuccessCount,
    ).toBe(4);
    expect(
      (await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['MOVED', 'M3'], KeyType: 'MLSNumber' })).SuccessCount,
    ).toBe(0);
    expect(
      (await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: [ids[5]!, ids[5]!], KeyType: 'NewOaks' })).SuccessCount,
    ).toBe(1);
    await expectIndexesAgree(t, mlsNumbers);
    expect(await listAll(t)).toEqual([
      [2, 'NEW', url('NEW')],
      [3, 'M2', url('M2')],
      [7, 'M6', url('M6')],
      [8, 'M7', url('M7')],
      [10, 'NEW', url('NEW')],
    ]);

    // created after deletes: appended in ID order, and found by its keys
    const id = await t.api.createListing(sampleListing({ MLSNumber: 'M2', Url: url('late') }));
    expect((await listAll(t)).map(([i]) => i)).toEqual([2, 3, 7, 8, 10, Number(id)]);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M2', Url: url('late') }),
        Key: url('late'),
        KeyType: 'URL',
      }),
    ).toBe(1);
    await expectIndexesAgree(t, mlsNumbers);
  });

  it('loads a data file into the indexes, listing in ID order even when the file is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-emu-'));
    dirs.push(dir);
    const file = join(dir, 'emulator.json');
    const stored = [7, 3, 5].map((ID) => ({
      ...sampleListing({ MLSNumber: ID === 5 ? 'X' : `M${ID}`, Url: `https://h.test/u${ID}` }),
      ID,
    }));
    stored.push({ ...sampleListing({ MLSNumber: 'X', Url: 'https://h.test/u9' }), ID: 9 });
    const saved = { nextId: 10, nextMessageId: 1, nextSessionId: 1001, settings: {}, sessions: {}, monthly: {} };
    await writeFile(file, JSON.stringify({ ...saved, listings: { 'SN-1': stored } }));
    const t = await emulator({ dataFile: file });

    expect((await listAll(t)).map(([id]) => id)).toEqual([3, 5, 7, 9]);
    expect((await listAll(t, { MLSNumber: 'X' })).map(([id]) => id)).toEqual([5, 9]);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M3', Url: 'https://h.test/u3b' }),
        Key: 'https://h.test/u3',
        KeyType: 'URL',
      }),
    ).toBe(1);
    expect(
      await t.api.updateListing({
        ...sampleListing({ MLSNumber: 'M3', Url: 'https://h.test/u3b' }),
        Key: 'https://h.test/u3',
        KeyType: 'URL',
      }),
    ).toBe(0);
    expect((await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['X'], KeyType: 'MLSNumber' })).SuccessCount).toBe(
      2,
    );
    const id = await t.api.createListing(sampleListing({ MLSNumber: 'N' }));
    expect(await listAll(t)).toEqual([
      [3, 'M3', 'https://h.test/u3b'],
      [7, 'M7', 'https://h.test/u7'],
      [Number(id), 'N', 'https://example.com/listing/A1'],
    ]);
  });
});

describe('ChatbotListings', () => {
  it('agrees with a plain scan through random puts, key changes and deletes', () => {
    const random = mulberry32(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const keys = ['a', 'b', 'c', 'd', 'e'];
    const c = new ChatbotListings();
    const model = new Map<number, StoredListing>();
    let nextId = 1;
    for (let step = 0; step < 2000; step++) {
      const roll = random();
      const ids = [...model.keys()];
      const listing = (ID: number) =>
        ({ ...sampleListing({ MLSNumber: pick(keys), Url: pick(keys) }), ID }) as StoredListing;
      if (roll < 0.4 || !ids.length) {
        const l = listing(nextId++);
        c.put(l);
        model.set(l.ID, l);
      } else if (roll < 0.7) {
        const l = listing(pick(ids));
        c.put(l);
        model.set(l.ID, l);
      } else {
        const id = pick(ids);
        expect(c.delete(id)).toBe(true);
        model.delete(id);
      }
      const all = [...model.values()].sort((a, b) => a.ID - b.ID);
      expect(c.size).toBe(all.length);
      for (const k of keys) {
        expect(c.withKey('MLSNumber', k)).toEqual(all.filter((l) => l.MLSNumber === k));
        expect(c.withKey('Url', k)).toEqual(all.filter((l) => l.Url === k));
      }
      const start = Math.floor(random() * (all.length + 2));
      expect(c.slice(start, start + 3)).toEqual(all.slice(start, start + 3));
      expect([...c.inOrder()]).toEqual(all);
    }
    expect(c.delete(nextId)).toBe(false);
  });
});

describe('emulator latency', () => {
  it('many requests waiting at once print no MaxListenersExceededWarning and add no abort listener a wait', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const added = vi.spyOn(EventTarget.prototype, 'addEventListener');
    try {
      const t = await emulator({ latencyMs: 30 });
      const answers = await Promise.all(
        Array.from({ length: 25 }, () =>
          rawPost(t.url + ENDPOINTS.list, { SerialNumber: 'SN-1' }, { 'chatrobot-sessionkey': TEST_SESSION_KEY }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(25).fill(200));
      // fetch gives each client request a signal of its own; the emulator's waits (waits.ts) use none
      const adds = new Map<AbortSignal, number>();
      added.mock.calls.forEach((call, i) => {
        const target = added.mock.contexts[i];
        if (call[0] === 'abort' && target instanceof AbortSignal) adds.set(target, (adds.get(target) ?? 0) + 1);
      });
      expect([...adds.values()].filter((n) => n >= 25)).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
