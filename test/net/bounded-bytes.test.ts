// A response read whole against the same response read as its stream (body(): feeds, downloads):
// bytes() of a streamed exchange, and an exchange made to be read whole (whole: the API client's
// every call but the streamed answer) give the same bytes, or the same failure, whatever the server does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedRequest, RequestStopped } from '../../src/net/request.js';

const CAP = 1000;
/** what the server answers at each path */
const ANSWERS: Record<string, (res: import('node:http').ServerResponse) => void> = {
  '/empty': (res) => res.end(),
  '/one': (res) => res.end('{"Data":"id-1"}'),
  '/chunks': (res) => {
    res.write('a'.repeat(300));
    setTimeout(() => res.end('b'.repeat(300)), 5);
  },
  '/at-cap': (res) => res.end('c'.repeat(CAP)),
  // (a 1xx first: the answer is the one after it)
  '/early-hints': (res) => {
    res.writeEarlyHints({ link: '</x.css>; rel=preload; as=style' });
    res.end('{"after":"hints"}');
  },
  '/declared-over': (res) => {
    res.setHeader('content-length', String(CAP + 1));
    res.end('d'.repeat(CAP + 1));
  },
  '/streamed-over': (res) => {
    res.write('e'.repeat(600));
    setTimeout(() => res.end('e'.repeat(600)), 5);
  },
  // (over the cap without a length, sent with the headers in one write: the body whole before it is read)
  '/over-at-once': (res) => {
    res.write('h'.repeat(CAP + 1));
    res.end();
  },
  '/cut': (res) => {
    res.setHeader('content-length', '500');
    res.write('f'.repeat(100));
    setTimeout(() => res.destroy(), 5);
  },
  '/slow': (res) => {
    res.write('g');
    setTimeout(() => res.end('g'), 2000);
  },
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => ANSWERS[req.url ?? '']?.(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** the outcome of one read: the bytes as text, or the failure's kind */
async function outcome(
  path: string,
  read: 'bytes' | 'body' | 'whole',
  url: string | URL = base + path,
): Promise<string> {
  try {
    const res = await boundedRequest({
      method: 'GET',
      url,
      headers: {},
      deadlineMs: 500,
      maxBytes: CAP,
      whole: read === 'whole',
    });
    if (read !== 'body') return `${res.status} ${(await res.bytes()).toString('utf8')}`;
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c);
    return `${res.status} ${Buffer.concat(chunks).toString('utf8')}`;
  } catch (err) {
    // (any other failure is the network's: the API client says NetworkError for each, http.ts
    // transportError; undici and node:http name a cut body differently, SocketError and ECONNRESET)
    return err instanceof RequestStopped ? `stopped: ${err.reason}` : 'failed';
  }
}

describe('bytes() reads what body() reads', () => {
  for (const path of Object.keys(ANSWERS)) {
    it(`${path}`, async () => {
      const streamed = await outcome(path, 'body');
      expect(await outcome(path, 'bytes')).toBe(streamed);
      expect(await outcome(path, 'whole')).toBe(streamed);
      // a URL given parsed is the same request
      expect(await outcome(path, 'whole', new URL(base + path))).toBe(streamed);
      expect(await outcome(path, 'bytes', new URL(base + path))).toBe(streamed);
    });
  }

  for (const read of ['bytes', 'whole'] as const) {
    it(`fails as it should (${read}): the cap, declared or streamed, the deadline, a cut body`, async () => {
      expect(await outcome('/at-cap', read)).toBe(`200 ${'c'.repeat(CAP)}`);
      expect(await outcome('/declared-over', read)).toBe('stopped: too-large');
      expect(await outcome('/streamed-over', read)).toBe('stopped: too-large');
      expect(await outcome('/over-at-once', read)).toBe('stopped: too-large');
      expect(await outcome('/slow', read)).toBe('stopped: deadline');
      expect(await outcome('/cut', read)).toBe('failed');
    });

    it(`a call whose signal is aborted before it starts is not sent, and one aborted while it reads stops (${read})`, async () => {
      const whole = read === 'whole';
      const signal = AbortSignal.abort();
      await expect(
        boundedRequest({
          method: 'GET',
          url: base + '/one',
          headers: {},
          deadlineMs: 500,
          maxBytes: CAP,
          signal,
          whole,
        }),
      ).rejects.toMatchObject({ reason: 'aborted' });
      const later = new AbortController();
      const res = await boundedRequest({
        method: 'GET',
        url: base + '/slow',
        headers: {},
        deadlineMs: 5000,
        maxBytes: CAP,
        signal: later.signal,
        whole,
      });
      setTimeout(() => later.abort(), 20);
      await expect(res.bytes()).rejects.toMatchObject({ reason: 'aborted' });
    });
  }

  it('a URL that is not http(s) is refused as undici refuses it, read whole or not', async () => {
    const refusal = async (whole: boolean) =>
      boundedRequest({
        method: 'GET',
        url: 'ftp://127.0.0.1/x',
        headers: {},
        deadlineMs: 500,
        maxBytes: CAP,
        whole,
      }).then(
        () => 'sent',
        (err: Error) => `${err.name}: ${err.message}`,
      );
    expect(await refusal(true)).toBe(await refusal(false));
  });
});
