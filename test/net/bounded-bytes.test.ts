// A response read whole (bytes(): the API client's every call) against the same response read as
// its stream (body(): feeds, downloads): the same bytes, or the same failure, whatever the server does.
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
  '/declared-over': (res) => {
    res.setHeader('content-length', String(CAP + 1));
    res.end('d'.repeat(CAP + 1));
  },
  '/streamed-over': (res) => {
    res.write('e'.repeat(600));
    setTimeout(() => res.end('e'.repeat(600)), 5);
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
async function outcome(path: string, read: 'bytes' | 'body', url: string | URL = base + path): Promise<string> {
  try {
    const res = await boundedRequest({ method: 'GET', url, headers: {}, deadlineMs: 500, maxBytes: CAP });
    if (read === 'bytes') return (await res.bytes()).toString('utf8');
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c);
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    return err instanceof RequestStopped ? `stopped: ${err.reason}` : `failed: ${(err as Error).name}`;
  }
}

describe('bytes() reads what body() reads', () => {
  for (const path of Object.keys(ANSWERS)) {
    it(`${path}`, async () => {
      const whole = await outcome(path, 'bytes');
      expect(whole).toBe(await outcome(path, 'body'));
      // a URL given parsed is the same request
      expect(await outcome(path, 'bytes', new URL(base + path))).toBe(whole);
    });
  }

  it('fails as it should: the cap, declared or streamed, the deadline, a cut body', async () => {
    expect(await outcome('/at-cap', 'bytes')).toBe('c'.repeat(CAP));
    expect(await outcome('/declared-over', 'bytes')).toBe('stopped: too-large');
    expect(await outcome('/streamed-over', 'bytes')).toBe('stopped: too-large');
    expect(await outcome('/slow', 'bytes')).toBe('stopped: deadline');
    expect(await outcome('/cut', 'bytes')).toMatch(/^failed: /);
  });

  it('a call whose signal is aborted before it starts is not sent', async () => {
    const signal = AbortSignal.abort();
    await expect(boundedRequest({ method: 'GET', url: base + '/one', headers: {}, deadlineMs: 500, maxBytes: CAP, signal })).rejects.toMatchObject({ reason: 'aborted' });
  });
});
