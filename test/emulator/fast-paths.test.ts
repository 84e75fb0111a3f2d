// The emulator's fast paths give what its plain rules give: a create or update the client's quick
// check accepts is stored as zod would have parsed it, and one it leaves to zod is refused as zod
// refuses it; the envelope's text is JSON.stringify's of the whole envelope; an endpoint's path
// taken as it is, is the one URL parsing gives; a close ends the latency waits in flight.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../fixtures/generate.js';
import { ENDPOINTS, ListingCreate, ListingUpdate } from '../../src/api/schemas.js';
import { envelopeJson, type Reply } from '../../src/emulator/endpoints.js';
import { startEmulator } from '../../src/emulator/index.js';
import { quickAccept } from '../../src/listing/validate.js';
import { sampleListing, startTestEmulator, TEST_SECRET_KEY, type TestEmulator } from '../helpers/emulator.js';
import { rawPost } from '../helpers/raw-post.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator();
});
afterAll(() => t.close());

const AUTH = { authorization: TEST_SECRET_KEY };

/** A listing with two random changes, some breaking a rule, some not (a value kept within the rules, the keys reordered). */
function mutated(r: () => number, i: number): Record<string, unknown> {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const c: Record<string, unknown> = sampleListing({
    SerialNumber: 'SN-FAST',
    MLSNumber: `F${i}`,
    Url: `https://x.test/${i}`,
    Images: ['https://x.test/a.jpg'],
    Description: 'two beds',
    ExtensionColumn: [{ Key: 'k', value: 'v' }],
  });
  const variants: Array<() => void> = [
    () => (c.Status = pick(['Active', 'Sold', 'Gone'])),
    () => (c.Bedrooms = pick([3, -1, 2.5, '3'])),
    () => (c.MLSNumber = pick([`F${i}`, ` F${i}`, ''])),
    () => (c.Images = pick([[], ['a.jpg'], ['javascript:alert(1)'], 'x'])),
    () => (c.Description = pick(['ok\nline', 'bell\u0007', ' padded '])),
    () => (c.Latitude = pick([30, 91, null])),
    () => (c.City = pick(['Round Rock', 'Austin\u00a0', ''])),
    () => delete c[pick(Object.keys(c))],
    () => (c[pick(['Unknown', 'toString', 'constructor', 'valueOf'])] = 'x'),
    () => {
      const entries = Object.entries(c).reverse();
      for (const k of Object.keys(c)) delete c[k];
      Object.assign(c, Object.fromEntries(entries));
    },
  ];
  for (let k = 0; k < 2; k++) pick(variants)();
  return c;
}

/** an update's listing: what it sends without its Key and KeyType */
function withoutKey(update: ListingUpdate): Omit<ListingUpdate, 'Key' | 'KeyType'> {
  const { Key: _key, KeyType: _keyType, ...listing } = update;
  return listing;
}

describe('emulator fast paths', () => {
  it('a create or update is answered and stored as the zod rule alone decides', async () => {
    const r = rng(7);
    let stored = 0;
    let refused = 0;
    let quick = 0;
    for (let i = 0; i < 200; i++) {
      const body = mutated(r, i);
      const zod = ListingCreate.safeParse(body);
      if (quickAccept(body)) quick++;
      const res = await rawPost(t.url + ENDPOINTS.create, body, AUTH);
      expect(res.status, JSON.stringify(body)).toBe(zod.success ? 200 : 400);
      if (!zod.success) {
        refused++;
        continue;
      }
      stored++;
      const update = { ...mutated(r, i), Key: `F${i}`, KeyType: 'MLSNumber' };
      const zu = ListingUpdate.safeParse(update);
      const up = await rawPost(t.url + ENDPOINTS.update, update, AUTH);
      expect(up.status, JSON.stringify(update)).toBe(zu.success ? 200 : 400);
      // what the emulator holds: zod's output, key for key and in its order, with the ID
      const ID = Number(res.body.Data);
      const held = (await t.listings('SN-FAST')).find((l) => l.ID === ID);
      const replaced = zu.success && Number(up.body.Data) === 1;
      const expected = replaced ? JSON.stringify({ ...withoutKey(zu.data), ID }) : JSON.stringify({ ...zod.data, ID });
      expect(JSON.stringify(held)).toBe(expected);
    }
    // both ways in: the quick check's, and zod's after the quick check left it (a blank to trim, a key to refuse)
    expect(quick).toBeGreaterThan(20);
    expect(stored - quick).toBeGreaterThan(5);
    expect(refused).toBeGreaterThan(20);
  });

  it("an answer's envelope is JSON.stringify's text of the whole envelope", () => {
    const reply = fc.oneof(
      fc.jsonValue().map((data): Reply => ({ kind: 'data', data })),
      fc.jsonValue().map((data): Reply => ({ kind: 'json', json: JSON.stringify(data) })),
      fc
        .record({ code: fc.integer({ min: 100, max: 599 }), message: fc.string() })
        .map(({ code, message }): Reply => ({ kind: 'error', code, message })),
    );
    fc.assert(
      fc.property(reply, (rep) => {
        if (rep.kind === 'stream') return;
        const error = rep.kind === 'error';
        const data = rep.kind === 'data' ? rep.data : rep.kind === 'json' ? JSON.parse(rep.json) : null;
        expect(envelopeJson(rep)).toBe(
          JSON.stringify({
            Data: data,
            Version: '1.0',
            Success: !error,
            Code: error ? rep.code : 200,
            Message: error ? rep.message : '',
          }),
        );
      }),
    );
  });

  it('an endpoint path is its own URL pathname (the router takes it unparsed)', () => {
    for (const path of Object.values(ENDPOINTS)) expect(new URL(path, 'http://emulator').pathname).toBe(path);
  });

  it('a close ends the latency waits in flight: their requests get no answer, the close does not wait for them', async () => {
    const e = await startEmulator({ latencyMs: 60_000, secretKey: TEST_SECRET_KEY });
    const pending = rawPost(e.url + ENDPOINTS.create, sampleListing(), AUTH).then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await e.close();
    expect(await pending).toBe('failed');
  });
});
