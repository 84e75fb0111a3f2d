// The check a page worker makes of a list response (quickListPage) against the client's own
// (readEnvelope with ListData): it takes only responses the client would take, gives the very data
// the client would, and takes the plain successful pages the emulator answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quickEnvelope, quickListPage, readEnvelope } from '../../src/api/envelope.js';
import { Envelope, ListData, quickListData } from '../../src/api/schemas.js';
import { toListItem } from '../../src/emulator/list-item.js';
import { listing } from '../sync/helpers/listings.js';

const item = (id: number) => toListItem({ ...listing(`M${id}`, { Description: `ünïcode “${id}” ✓` }), ID: id });
const okEnvelope = (Data: unknown): Record<string, unknown> => ({
  Data,
  Version: '1.0',
  Success: true,
  Code: 200,
  Message: null,
});

/** readEnvelope's verdict: the data, or undefined when it throws */
function clientReads(status: number, text: string): ListData | undefined {
  try {
    return readEnvelope(
      '/chat/Chatbot/RealEstateList',
      { status, headers: new Headers({ 'content-type': 'application/json' }), text },
      ListData,
      quickListData,
    );
  } catch {
    return undefined;
  }
}

const envelopeMutation = fc.constantFrom<(e: Record<string, unknown>) => void>(
  () => {},
  (e) => void (e.Success = false),
  (e) => void (e.Success = 'true'),
  (e) => void (e.Code = 429),
  (e) => void (e.Code = 200.5),
  (e) => void (e.Code = '200'),
  (e) => void delete e.Version,
  (e) => void (e.Version = 1),
  (e) => void (e.Message = 'ok'),
  (e) => void (e.Message = 3),
  (e) => void delete e.Message,
  (e) => void delete e.Data,
  (e) => void (e.Data = null),
  (e) => void (e.Data = { List: [], VirtualCount: -1 }),
  (e) => void (e.Data = { VirtualCount: 0, List: [] }),
  (e) => void (e.Extra = true),
  (e) => void (e.Code = 2 ** 60),
  (e) => void (e.Code = -1),
  (e) => void (e.Success = null),
  (e) => void (e.Data = 'created-id'),
);

describe('quickListPage', () => {
  it('takes a plain successful page, giving what the client reads', () => {
    const text = JSON.stringify(okEnvelope({ List: [item(1), item(2)], VirtualCount: 2 }));
    const quick = quickListPage(200, text);
    expect(quick?.List.map((i) => i.ID)).toEqual([1, 2]);
    expect(quick).toEqual(clientReads(200, text));
  });

  it('leaves to the client what is not plainly a successful page', () => {
    const good = JSON.stringify(okEnvelope({ List: [item(1)], VirtualCount: 1 }));
    for (const [status, text] of [
      [500, good],
      [204, ''],
      [200, '<html>bad gateway</html>'],
      [200, '\uFEFF' + good],
      [200, '[]'],
      [200, 'null'],
      [200, JSON.stringify({ ...okEnvelope(null), Success: false, Code: 401, Message: 'bad key' })],
    ] as const) {
      expect(quickListPage(status, text)).toBeUndefined();
    }
  });

  it("never takes a response the client refuses, and gives the client's data when it takes one", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(200, 201, 299, 300, 429, 500),
        envelopeMutation,
        fc.array(fc.integer({ min: 1, max: 500 }), { maxLength: 4 }),
        (status, mutate, ids) => {
          const env = okEnvelope({ List: ids.map(item), VirtualCount: ids.length });
          mutate(env);
          const text = JSON.stringify(env);
          const quick = quickListPage(status, text);
          if (quick !== undefined) expect(quick).toEqual(clientReads(status, text));
        },
      ),
    );
  });
});

describe('quickEnvelope (every response: the envelope without zod)', () => {
  it('gives what the Envelope schema gives, or leaves it to the schema', () => {
    fc.assert(
      fc.property(
        fc.array(envelopeMutation, { maxLength: 3 }),
        fc.constantFrom<unknown>('id-1', 7, null, { List: [], VirtualCount: 0 }),
        (mutations, Data) => {
          const env = okEnvelope(Data);
          for (const mutate of mutations) mutate(env);
          const json: unknown = JSON.parse(JSON.stringify(env));
          const quick = quickEnvelope(json);
          const slow = Envelope.safeParse(json);
          if (quick !== undefined) expect(slow.success && slow.data).toStrictEqual(quick);
        },
      ),
    );
  });

  it('takes the plain envelopes, failures included', () => {
    for (const env of [okEnvelope('id-1'), { ...okEnvelope(null), Success: false, Code: 429, Message: 'slow down' }]) {
      expect(quickEnvelope(env)).toStrictEqual(Envelope.parse(env));
    }
    for (const bad of [null, [], 'x', {}, { ...okEnvelope(1), Code: '200' }, { ...okEnvelope(1), Message: undefined }])
      expect(quickEnvelope(bad)).toBeUndefined();
  });
});
