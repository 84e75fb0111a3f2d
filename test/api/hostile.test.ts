// The API client against servers that misbehave: bodies too large to hold, bodies without end, a
// drip that would keep an idle timeout alive forever, and redirects that would carry the key away.
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiError, ResponseFormatError, TimeoutError } from '../../src/errors.js';
import { runProbe } from '../helpers/child-probe.js';
import { drip, hugeEnvelope, pump, redirect, useHostileServers } from '../helpers/hostile-server.js';
import { failure } from '../helpers/failure.js';

const hostile = useHostileServers();

describe('api transport: bounded bytes', () => {
  it('a 500 MB envelope fails the call at the byte cap, in bounded memory (child process)', async () => {
    const s = await hostile((_req, res, sent) => hugeEnvelope(res, 500 * 1024 * 1024, sent));
    const out = await runProbe({ kind: 'api', url: s.url, timeoutMs: 60_000, maxResponseBytes: 4 * 1024 * 1024 });
    expect(out.error?.name).toBe('ResponseFormatError');
    expect(out.error?.message).toMatch(/larger than api\.maxResponseBytes \(4194304 bytes\)/);
    expect(out.peakRssMb).toBeLessThan(300);
    expect(s.bytesSent()).toBeLessThan(100 * 1024 * 1024);
  });

  it('an endless body fails at the default cap, in bounded memory (child process)', async () => {
    const s = await hostile(async (_req, res, sent) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      await pump(res, Buffer.alloc(256 * 1024, ' '), Infinity, sent);
    });
    const out = await runProbe({ kind: 'api', url: s.url, timeoutMs: 60_000 });
    expect(out.error?.message).toMatch(/larger than api\.maxResponseBytes \(8388608 bytes\)/);
    expect(out.peakRssMb).toBeLessThan(300);
  });

  it('a declared Content-Length over the cap is refused before the body is read', async () => {
    const s = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      res.write('{');
    });
    const api = createApiClient({
      baseUrl: s.url,
      secretKey: 'k',
      sessionKey: 's',
      timeoutMs: 5000,
      maxResponseBytes: 1024,
      retry: { retries: 0 },
    });
    const err = await failure(api.listListings({ SerialNumber: 'SN-1' }));
    expect(err).toBeInstanceOf(ResponseFormatError);
    expect(err.retryable).toBe(false);
  });
});

describe('api transport: a total deadline', () => {
  it('a server dripping one byte every 1.5 s is cut at timeoutMs, not kept alive by each byte', async () => {
    const s = await hostile((_req, res, sent) => drip(res, 1500, 40, sent));
    const api = createApiClient({
      baseUrl: s.url,
      secretKey: 'k',
      sessionKey: 's',
      timeoutMs: 2000,
      retry: { retries: 0 },
    });
    const err = await failure(api.listListings({ SerialNumber: 'SN-1' }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(/within 2000 ms/);
    // an idle timeout would have read all 40 bytes; a total deadline of 2 s sees at most two
    expect(s.bytesSent()).toBeLessThanOrEqual(3);
  });

  it('a streamed answer that drips is cut at timeoutMs too (the deadline holds while reading the stream)', async () => {
    const s = await hostile((_req, res, sent) => drip(res, 1500, 40, sent, { 'content-type': 'text/event-stream' }));
    const api = createApiClient({
      baseUrl: s.url,
      secretKey: 'k',
      sessionKey: 's',
      timeoutMs: 2000,
      retry: { retries: 0 },
    });
    const err = await failure(
      (async () => {
        for await (const _e of api.askStream({ sessionID: 1, content: 'hi' })) void _e;
      })(),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(s.bytesSent()).toBeLessThanOrEqual(3);
  });
});

describe('api transport: redirects are errors', () => {
  it('a 307 to another origin is not followed: the other origin receives nothing, not the key, not the body', async () => {
    const elsewhere = await hostile((_req, res) => void res.end('{"Success":true,"Code":200,"Message":"","Data":"1"}'));
    const api307 = await hostile((_req, res) =>
      redirect(res, 307, `${elsewhere.origin}/api/Chatbot/RealEstateCreate?x=1`),
    );
    // (and a Location that is not a URL is the same redirect, not a network error retried)
    const locations = [301, 302, 307, 308].map((status) => [status, `${elsewhere.origin}/steal`] as const);
    for (const [status, location] of [...locations, [302, 'http://[broken'] as const]) {
      api307.received.length = 0;
      const s = await hostile((_req, res) => redirect(res, status, location));
      const api = createApiClient({
        baseUrl: s.url,
        secretKey: 'sk-redirect-secret',
        sessionKey: 'sess-redirect',
        timeoutMs: 2000,
      });
      const err = await failure(api.listListings({ SerialNumber: 'SN-1' }));
      expect(err).toBeInstanceOf(ApiError);
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(new RegExp(`HTTP ${status}.*redirect.*never followed`));
      expect(s.received).toHaveLength(1); // not retried either
    }
    const api = createApiClient({
      baseUrl: api307.url,
      secretKey: 'sk-redirect-secret',
      sessionKey: 'sess-redirect',
      timeoutMs: 2000,
    });
    await failure(
      api.createListing({
        SerialNumber: 'SN-1',
        MLSNumber: 'A1',
        Url: 'https://example.com/a',
        Status: 'Active',
        PropertyType: 'Residential',
      } as never),
    );
    expect(elsewhere.received).toEqual([]);
  });
});
