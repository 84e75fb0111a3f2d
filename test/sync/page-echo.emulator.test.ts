// The page echo (page-echo.ts) against the emulator over HTTP: a paging that follows another of the
// same chatbot takes the listings it has seen from memory, and its remote side is the one a paging
// with no memory gives (every listing decoded), whatever changed in between: listings updated,
// deleted and created, pages shifted. Row options that differ are not mixed; the limit holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatbotApi } from '../../src/api/types.js';
import { fetchRemote, type RemoteOptions } from '../../src/sync/remote.js';
import type { RemoteIndex } from '../../src/sync/remote-index.js';
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
  return [...index].map(([key, copies]) => [key, copies.map((c) => ({ id: c.id, otherKey: c.otherKey, hash: Buffer.from(c.hash).toString('hex'), compared: c.compared }))]);
}

const opts = (o: Partial<RemoteOptions> = {}): RemoteOptions => ({ serialNumber: 'SN-ECHO', keyBy: 'MLSNumber', keepCompared: true, keepOtherKey: true, pageSize: 10, concurrency: 3, ...o });
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
    await t.api.updateListing({ ...listing('E5', { SerialNumber: 'SN-ECHO', SalePrice: 1 }), Key: 'E5', KeyType: 'MLSNumber' });
    await t.api.updateListing({ ...listing('E33', { SerialNumber: 'SN-ECHO', Description: 'now },{ different' }), Key: 'E33', KeyType: 'MLSNumber' });
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

  it('remembers nothing past its limit', async () => {
    await expectSameAsPlain({ serialNumber: 'SN-ECHO', keyBy: 'URL', ignore: new Set(['City']), echoRows: 30 });
    const again = await expectSameAsPlain({ serialNumber: 'SN-ECHO', keyBy: 'URL', ignore: new Set(['City']), echoRows: 30 });
    expect(again.recalled).toBe(0);
  });
});
