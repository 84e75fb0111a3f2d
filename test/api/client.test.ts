// The client against the emulator over real HTTP: every endpoint, and every way a call can fail.
import { startHostile } from '../helpers/hostile-server.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ListingCreate, ListingUpdate } from '../../src/listing/schema.js';
import { validateListing } from '../../src/listing/validate.js';
import { createApiClient } from '../../src/api/client.js';
import type { ApiCallEvent } from '../../src/api/types.js';
import {
  AbortedError,
  ApiError,
  NetworkError,
  RateLimitedError,
  ResponseFormatError,
  TimeoutError,
  ValidationError,
} from '../../src/errors.js';
import { sampleListing, startTestEmulator, TEST_SECRET_KEY, type TestEmulator } from '../helpers/emulator.js';
import { failure } from '../helpers/failure.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator();
});
afterAll(() => t.close());
beforeEach(async () => {
  t.emulator.configure({ latencyMs: 0, faultRate: 0, nextFaults: [], errorsAs200: false, answerMode: 'normal' });
  await t.reset();
});

function recorder() {
  const calls: ApiCallEvent[] = [];
  return { calls, onCall: (e: ApiCallEvent) => calls.push(e) };
}

describe('client: every endpoint', () => {
  it('creates, lists, updates, deletes listings and the emulator stores what was sent', async () => {
    const id = await t.api.createListing(sampleListing());
    expect(id).toMatch(/^\d+$/);
    await t.api.createListing(
      sampleListing({ MLSNumber: 'A2', Url: 'https://example.com/listing/A2', City: 'Dallas' }),
    );

    const page = await t.api.listListings({ SerialNumber: 'SN-1' });
    expect(page.VirtualCount).toBe(2);
    expect(page.List.map((i) => i.MLSNumber)).toEqual(['A1', 'A2']);
    expect(page.List[0]).toMatchObject({ ID: Number(id), Bathrooms: '2.5', Price: '450000', City: 'Austin' });

    expect(
      await t.api.updateListing({ ...sampleListing({ SalePrice: 460000 }), Key: 'A1', KeyType: 'MLSNumber' }),
    ).toBe(1);
    expect(await t.api.updateListing({ ...sampleListing({ MLSNumber: 'ZZ' }), Key: 'ZZ', KeyType: 'MLSNumber' })).toBe(
      0,
    );
    const stored = await t.listings('SN-1');
    expect(stored.find((l) => l.MLSNumber === 'A1')?.SalePrice).toBe(460000);
    expect(stored.find((l) => l.MLSNumber === 'A1')).not.toHaveProperty('Key');

    expect(await t.api.deleteListings({ SerialNumber: 'SN-1', Keys: ['A1', 'missing'], KeyType: 'MLSNumber' })).toEqual(
      { SuccessCount: 1 },
    );
    expect((await t.listings('SN-1')).map((l) => l.MLSNumber)).toEqual(['A2']);
  });

  it('edits settings and asks, plain and streamed', async () => {
    await t.api.createListing(sampleListing());
    expect(await t.api.editSettings({ serialNumber: 'SN-1', AnswerSuffix: ' (Oak Realty)' })).toBe(1);
    const sessionID = await t.session('SN-1');
    const answer = await t.api.ask({ sessionID, content: 'Any 3 bedroom homes in Austin?' });
    expect(answer.noAnswer).toBe(false);
    expect(answer.content).toContain('12 Oak St');
    expect(answer.content.endsWith(' (Oak Realty)')).toBe(true);
    expect(answer.totalToken).toBeGreaterThan(0);

    const events = [];
    for await (const e of t.api.askStream({ sessionID, content: 'Any 3 bedroom homes in Austin?' })) events.push(e);
    const final = events.at(-1);
    expect(final?.type).toBe('final');
    const text = events
      .filter((e) => e.type === 'fragment')
      .map((e) => (e as { content: string }).content)
      .join('');
    expect(final).toMatchObject({ Answer: text });
    expect(text).toBe(answer.content);
  });

  it('sends the auth header the spec names for each operation, and Content-Type JSON', async () => {
    const seen: Array<{ path: string; headers: Record<string, unknown> }> = [];
    const raw = await rawServer((req, body, res) => {
      seen.push({ path: req.url!, headers: req.headers });
      const data = req.url!.endsWith('List')
        ? { List: [], VirtualCount: 0 }
        : req.url!.endsWith('Delete')
          ? { SuccessCount: 0 }
          : req.url!.endsWith('Create')
            ? '1'
            : 1;
      envelope(res, 200, data);
    });
    const api = createApiClient({
      baseUrl: raw.url,
      secretKey: 'the-secret',
      sessionKey: 'the-session',
      timeoutMs: 2000,
    });
    await api.editSettings({ serialNumber: 'SN' });
    await api.createListing(sampleListing());
    await api.updateListing({ ...sampleListing(), Key: 'A1', KeyType: 'MLSNumber' });
    await api.listListings({ SerialNumber: 'SN' });
    await api.deleteListings({ SerialNumber: 'SN', Keys: ['A1'], KeyType: 'MLSNumber' });
    await raw.close();
    for (const s of seen) expect(s.headers['content-type']).toBe('application/json');
    const byPath = Object.fromEntries(seen.map((s) => [s.path.split('/').pop(), s.headers]));
    for (const op of ['Edit', 'RealEstateCreate', 'RealEstateUpdate', 'RealEstateDelete']) {
      expect(byPath[op]).toMatchObject({ authorization: 'the-secret' });
      expect(byPath[op]).not.toHaveProperty('chatrobot-sessionkey');
    }
    expect(byPath.RealEstateList).toMatchObject({ 'chatrobot-sessionkey': 'the-session' });
    expect(byPath.RealEstateList).not.toHaveProperty('authorization');
  });
});

describe('client: requests are checked before sending', () => {
  it.each([
    ['a listing with a bad enum', () => t.api.createListing(sampleListing({ SaleType: 'sale' })), 'SaleType'],
    [
      'a listing missing a required field',
      () => t.api.createListing(sampleListing({ Bedrooms: undefined })),
      'Bedrooms',
    ],
    ['an update without KeyType', () => t.api.updateListing({ ...sampleListing(), Key: 'A1' } as never), 'KeyType'],
    ['fileIds with a Text message', () => t.api.ask({ sessionID: 1, content: 'hi', fileIds: [1] }), 'fileIds'],
    [
      'two files with Audio',
      () => t.api.ask({ sessionID: 1, content: '', chatAskType: 'Audio', fileIds: [1, 2] }),
      'fileIds',
    ],
    [
      'two files with Video',
      () => t.api.ask({ sessionID: 1, content: '', chatAskType: 'Video', fileIds: [1, 2] }),
      'fileIds',
    ],
    [
      'an unknown chatAskType',
      () => t.api.ask({ sessionID: 1, content: 'x', chatAskType: 'Gif' as never }),
      'chatAskType',
    ],
    [
      'a delete without keys',
      () => t.api.deleteListings({ SerialNumber: 'SN-1', Keys: [], KeyType: 'MLSNumber' }),
      'Keys',
    ],
    [
      'a bad RGB colour',
      () => t.api.editSettings({ serialNumber: 'SN-1', ChatBubbleColor: '#fff' }),
      'ChatBubbleColor',
    ],
  ])('refuses %s with a ValidationError naming the field, and sends nothing', async (_name, call, field) => {
    const err = await failure(call());
    expect(err).toBeInstanceOf(ValidationError);
    expect(err instanceof ValidationError && err.issues.map((i) => i.field)).toContain(field);
    expect((await t.stats()).total).toBe(0);
  });

  it('parses a listing with zod once at most: what the mapping validated is not parsed again, what it did not is', async () => {
    // (the in-process emulator parses what it receives too: only calls on the very object sent count)
    const parse = vi.spyOn(ListingCreate, 'safeParse');
    const parseUpdate = vi.spyOn(ListingUpdate, 'safeParse');
    const parsed = (o: unknown) => [...parse.mock.calls, ...parseUpdate.mock.calls].filter((c) => c[0] === o).length;
    try {
      // needs zod (a key to trim): the mapping's check parses it once, the client's quick check accepts its output
      const candidate = sampleListing({ MLSNumber: ' V1 ' });
      const checked = validateListing(candidate);
      if (!checked.ok) throw new Error('the sample listing should be valid');
      expect(parsed(candidate)).toBe(1);
      await t.api.createListing(checked.listing);
      const update = { ...checked.listing, SalePrice: 1, Key: 'V1', KeyType: 'MLSNumber' as const };
      await t.api.updateListing(update);
      expect([parsed(checked.listing), parsed(update)]).toEqual([0, 0]);
      // a caller that did not validate still gets zod's check (and its trimming) before anything is sent
      const raw = sampleListing({ MLSNumber: ' RAW ' });
      await t.api.createListing(raw);
      expect(parsed(raw)).toBe(1);
      expect((await t.listings('SN-1')).map((l) => [l.MLSNumber, l.SalePrice])).toEqual([
        ['V1', 1],
        ['RAW', expect.any(Number)],
      ]);
    } finally {
      parse.mockRestore();
      parseUpdate.mockRestore();
    }
  });

  it('accepts several images, and one file with Audio', async () => {
    const sessionID = await t.session('SN-1');
    await expect(
      t.api.ask({ sessionID, content: '', chatAskType: 'Image', fileIds: [1, 2, 3] }),
    ).resolves.toMatchObject({ messageid: expect.any(Number) });
    await expect(t.api.ask({ sessionID, content: '', chatAskType: 'Audio', fileIds: [9] })).resolves.toMatchObject({
      messageid: expect.any(Number),
    });
  });
});

describe('client: failures', () => {
  it('a wrong key is an ApiError 401, not retried', async () => {
    const { calls, onCall } = recorder();
    const err = await failure(t.client({ secretKey: 'wrong-key-1234', onCall }).createListing(sampleListing()));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      httpStatus: 401,
      apiCode: 401,
      retryable: false,
      endpoint: '/chat/Chatbot/RealEstateCreate',
    });
    expect(err.message).not.toContain('wrong-key-1234');
    expect(calls).toHaveLength(1);
  });

  it('an error the server reports (unknown session) is an ApiError with its Code and Message', async () => {
    const err = await failure(t.api.ask({ sessionID: 424242, content: 'hi' }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ httpStatus: 404, apiCode: 404, retryable: false });
    expect(err.apiMessage).toContain('424242');
  });

  it('retries a 429 after the Retry-After it was given, then succeeds', async () => {
    t.emulator.configure({ nextFaults: ['429'] });
    const { calls, onCall } = recorder();
    const id = await t.client({ onCall }).createListing(sampleListing());
    expect(id).toMatch(/^\d+$/);
    expect(calls.map((c) => [c.outcome, c.httpStatus])).toEqual([
      ['retry', 429],
      ['ok', 200],
    ]);
    expect(calls[0]!.retryDelayMs).toBe(1000); // Retry-After: 1, not the 1-10 ms backoff of the test client
    expect((await t.stats()).requests['/chat/Chatbot/RealEstateCreate']).toEqual({ '429': 1, '200': 1 });
    expect(await t.listings('SN-1')).toHaveLength(1);
  });

  it('retries a 503 and a 500, then succeeds', async () => {
    t.emulator.configure({ nextFaults: ['503', '500'] });
    const { calls, onCall } = recorder();
    const page = await t.client({ onCall }).listListings({ SerialNumber: 'SN-1' });
    expect(page.VirtualCount).toBe(0);
    expect(calls.map((c) => c.httpStatus)).toEqual([503, 500, 200]);
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
  });

  it('gives up after its retries with the last error, marked retryable', async () => {
    t.emulator.configure({ nextFaults: ['503', '503', '503', '503'] });
    const { calls, onCall } = recorder();
    const err = await failure(t.client({ onCall }).listListings({ SerialNumber: 'SN-1' }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ httpStatus: 503, retryable: true });
    expect(calls).toHaveLength(4); // 1 + 3 retries
    expect(calls.at(-1)!.outcome).toBe('error');
  });

  it('retry: false makes one attempt only', async () => {
    t.emulator.configure({ nextFaults: ['500'] });
    const { calls, onCall } = recorder();
    const err = await failure(t.client({ onCall }).createListing(sampleListing(), { retry: false }));
    expect(err).toMatchObject({ httpStatus: 500, retryable: true });
    expect(calls).toHaveLength(1);
    expect(await t.listings('SN-1')).toHaveLength(0);
  });

  it('a dropped connection is a NetworkError, retried', async () => {
    t.emulator.configure({ nextFaults: ['drop'] });
    const { calls, onCall } = recorder();
    await t.client({ onCall }).createListing(sampleListing());
    expect(calls.map((c) => c.outcome)).toEqual(['retry', 'ok']);
    expect(calls[0]!.error).toMatch(/network error/);
    expect((await t.stats()).requests['/chat/Chatbot/RealEstateCreate']).toEqual({ dropped: 1, '200': 1 });
    const err = await failure(
      (t.emulator.configure({ nextFaults: ['drop'] }), t.client().createListing(sampleListing(), { retry: false })),
    );
    expect(err).toBeInstanceOf(NetworkError);
  });

  it('no answer within timeoutMs is a TimeoutError, retried, then given up', async () => {
    // An emulator of its own, closed after: the two calls given up stay in the emulator for its 400 ms,
    // and in the shared one the later of them took the next test's scripted 503 when that test ran
    // within them (a loaded machine: test:quick on Node 22 at load 20, [200, 200, 'ok'] alone).
    const slow = await startTestEmulator({ latencyMs: 400 });
    try {
      const { calls, onCall } = recorder();
      const err = await failure(
        slow.client({ timeoutMs: 50, onCall, retry: { retries: 1 } }).listListings({ SerialNumber: 'SN-1' }),
      );
      expect(err).toBeInstanceOf(TimeoutError);
      expect(err).toMatchObject({ timeoutMs: 50, retryable: true });
      expect(calls.map((c) => c.outcome)).toEqual(['retry', 'error']);
    } finally {
      await slow.close();
    }
  });

  it('HTTP 200 with Success false is a failure with the Code of the body', async () => {
    t.emulator.configure({ errorsAs200: true, nextFaults: ['503'] });
    const { calls, onCall } = recorder();
    await t.client({ onCall }).listListings({ SerialNumber: 'SN-1' });
    expect(calls.map((c) => [c.httpStatus, c.apiCode, c.outcome])).toEqual([
      [200, 503, 'retry'],
      [200, 200, 'ok'],
    ]);

    const err = await failure(t.client({ secretKey: 'nope-nope' }).createListing(sampleListing()));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ httpStatus: 200, apiCode: 401, retryable: false });

    t.emulator.configure({ nextFaults: ['429'] });
    const limited = await failure(t.client().createListing(sampleListing(), { retry: false }));
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited).toMatchObject({ httpStatus: 200, retryAfterMs: 1000 });
  });

  it('an HTML error page is a ResponseFormatError with the start of the body; retried when 5xx', async () => {
    let hits = 0;
    const raw = await rawServer((_req, _body, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>');
    });
    const { calls, onCall } = recorder();
    const api = createApiClient({
      baseUrl: raw.url,
      secretKey: TEST_SECRET_KEY,
      sessionKey: 'x-session',
      timeoutMs: 2000,
      retry: { retries: 2, baseDelayMs: 1 },
      onCall,
    });
    const err = await failure(api.listListings({ SerialNumber: 'SN-1' }));
    await raw.close();
    expect(err).toBeInstanceOf(ResponseFormatError);
    expect(err).toMatchObject({ httpStatus: 502, retryable: true });
    expect(err.message).toContain('not JSON (text/html)');
    expect(err.bodySnippet).toContain('502 Bad Gateway');
    expect(hits).toBe(3);
    expect(calls).toHaveLength(3);
  });

  it('an unexpected Data shape is a ResponseFormatError naming the field', async () => {
    const raw = await rawServer((_req, _body, res) => envelope(res, 200, { List: [{ ID: 'x' }], VirtualCount: 1 }));
    const api = createApiClient({ baseUrl: raw.url, secretKey: 'k-1234', sessionKey: 's-1234', timeoutMs: 2000 });
    const err = await failure(api.listListings({ SerialNumber: 'SN-1' }));
    await raw.close();
    expect(err).toBeInstanceOf(ResponseFormatError);
    expect(err.message).toContain('Data.List.0.ID');
    expect(err.retryable).toBe(false);
  });

  it('an abort stops a call at once, even while it waits to retry', async () => {
    t.emulator.configure({ nextFaults: ['429'], retryAfterSeconds: 30 });
    const controller = new AbortController();
    const { calls, onCall } = recorder();
    const pending = failure(t.client({ onCall }).createListing(sampleListing(), { signal: controller.signal }));
    while (calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const err = await pending;
    t.emulator.configure({ retryAfterSeconds: 1 });
    expect(err).toBeInstanceOf(AbortedError);
    expect(calls.map((c) => c.outcome)).toEqual(['retry']);
    expect(calls[0]!.retryDelayMs).toBe(30_000);
  });

  it('an abort while the request is in flight is an AbortedError, not a timeout or network error', async () => {
    t.emulator.configure({ latencyMs: 300 });
    const err = await failure(t.api.listListings({ SerialNumber: 'SN-1' }, { signal: AbortSignal.timeout(30) }));
    expect(err).toBeInstanceOf(AbortedError);
  });
});

// ---- a tiny raw HTTP server for answers the emulator never gives ---------------------------------

type Handler = (
  req: import('node:http').IncomingMessage,
  body: string,
  res: import('node:http').ServerResponse,
) => void;

export async function rawServer(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server = await startHostile((req, res) => handler(req, req.body, res));
  return { url: server.origin, close: server.close };
}

export function envelope(res: import('node:http').ServerResponse, code: number, data: unknown, message = ''): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ Data: data, Version: '1.0', Success: code === 200, Code: code, Message: message }));
}
