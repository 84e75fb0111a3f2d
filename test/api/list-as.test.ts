// listListingsAs: listListings with the caller's decoding of the page (paging decodes pages in worker
// threads through it). The same call, budget, retries and errors as listListings: a decoder that
// takes nothing leaves every response to the client's checks, and a failure of the caller's own
// decoding is its own error, not a call to retry.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { quickListPage } from '../../src/api/envelope.js';
import type { ListData } from '../../src/api/schemas.js';
import type { ApiCallEvent, ListPageDecoder } from '../../src/api/types.js';
import { ApiError, ResponseFormatError, ValidationError } from '../../src/errors.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { failure } from '../helpers/failure.js';
import { useHostileServers } from '../helpers/hostile-server.js';

const hostile = useHostileServers();
let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator();
});
afterAll(() => t.close());
beforeEach(async () => {
  t.emulator.configure({ latencyMs: 0, faultRate: 0, nextFaults: [], errorsAs200: false });
  await t.reset();
  for (const mls of ['A1', 'A2', 'A3'])
    await t.api.createListing(sampleListing({ MLSNumber: mls, Url: `https://example.com/${mls}` }));
});

function recorder() {
  const calls: ApiCallEvent[] = [];
  return { calls, onCall: (e: ApiCallEvent) => calls.push(e) };
}

/** takes what quickListPage takes (as a page worker does) or nothing; counts what it saw */
function decoder(takes: boolean) {
  const seen: number[] = [];
  const d: ListPageDecoder<{ from: 'raw' | 'data'; data: ListData }> = {
    raw: async (res) => {
      seen.push(res.status);
      const data = takes ? quickListPage(res.status, Buffer.from(res.bytes).toString('utf8')) : undefined;
      return data && { from: 'raw', data };
    },
    data: (data) => ({ from: 'data', data }),
  };
  return { seen, d };
}

describe('listListingsAs', () => {
  it('gives the page listListings gives, through the decoder that took it', async () => {
    const plain = await t.api.listListings({ SerialNumber: 'SN-1', PageSize: 2 });
    const taking = decoder(true);
    expect(await t.api.listListingsAs!({ SerialNumber: 'SN-1', PageSize: 2 }, taking.d)).toEqual({
      from: 'raw',
      data: plain,
    });
    const leaving = decoder(false);
    expect(await t.api.listListingsAs!({ SerialNumber: 'SN-1', PageSize: 2 }, leaving.d)).toEqual({
      from: 'data',
      data: plain,
    });
    expect([taking.seen, leaving.seen]).toEqual([[200], [200]]);
  });

  it('retries what listListings retries (a 503, a 500, a Code 503 in an HTTP 200), the decoder seeing every answer', async () => {
    for (const [faults, errorsAs200, statuses] of [
      [['503', '500'], false, [503, 500, 200]],
      [['503'], true, [200, 200]],
    ] as const) {
      t.emulator.configure({ nextFaults: [...faults], errorsAs200 });
      const { calls, onCall } = recorder();
      const { seen, d } = decoder(true);
      const page = await t.client({ onCall }).listListingsAs!({ SerialNumber: 'SN-1' }, d);
      expect(page.data.VirtualCount).toBe(3);
      expect(calls.map((c) => c.httpStatus)).toEqual(statuses);
      expect(calls.map((c) => c.outcome)).toEqual([...statuses.slice(1).map(() => 'retry'), 'ok']);
      expect(seen).toEqual(statuses);
    }
  });

  it('fails as listListings fails: an ApiError with the endpoint and Code, not retried when a retry cannot help', async () => {
    t.emulator.configure({ errorsAs200: true });
    const { calls, onCall } = recorder();
    const err = await failure(
      t.client({ sessionKey: 'wrong-session-0000', onCall }).listListingsAs!({ SerialNumber: 'SN-1' }, decoder(true).d),
    );
    const plain = await failure(t.client({ sessionKey: 'wrong-session-0000' }).listListings({ SerialNumber: 'SN-1' }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      endpoint: '/chat/Chatbot/RealEstateList',
      httpStatus: 200,
      apiCode: 401,
      retryable: false,
    });
    expect(err.message).toBe(plain.message);
    expect(calls).toHaveLength(1);
  });

  it('an HTML error page is a ResponseFormatError, retried when 5xx', async () => {
    const raw = await hostile((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>502 Bad Gateway</html>');
    });
    const api = createApiClient({
      baseUrl: raw.origin,
      secretKey: 'k-1234',
      sessionKey: 's-1234',
      timeoutMs: 2000,
      retry: { retries: 2, baseDelayMs: 1 },
    });
    const err = await failure(api.listListingsAs!({ SerialNumber: 'SN-1' }, decoder(true).d));
    expect(err).toBeInstanceOf(ResponseFormatError);
    expect(err).toMatchObject({ endpoint: '/chat/Chatbot/RealEstateList', httpStatus: 502, retryable: true });
    expect(err.message).toContain('not JSON (text/html)');
    expect(raw.received).toHaveLength(3);
  });

  it('a bad request is a ValidationError and nothing is sent', async () => {
    const { calls, onCall } = recorder();
    const err = await failure(t.client({ onCall }).listListingsAs!({ SerialNumber: '' }, decoder(true).d));
    expect(err).toBeInstanceOf(ValidationError);
    expect(calls).toHaveLength(0);
  });

  it("a failure of the caller's own decoding is its error, once: not a network error, not retried", async () => {
    const { calls, onCall } = recorder();
    const broken: ListPageDecoder<never> = {
      raw: async () => undefined,
      data: () => {
        throw new RangeError('decoder bug');
      },
    };
    const err = await failure(t.client({ onCall }).listListingsAs!({ SerialNumber: 'SN-1' }, broken));
    expect(err).toBeInstanceOf(RangeError);
    expect(calls.map((c) => c.outcome)).toEqual(['ok']);
  });
});
