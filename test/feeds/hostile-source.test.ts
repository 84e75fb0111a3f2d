// Feed transport against hostile servers: gzip bombs, endless bodies, slow drips, and redirects that
// would carry a feed's credentials to another origin (a second server records what it received).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBudgets, memoryBackend, type Budgets } from '../../src/budget/index.js';
import { FeedReadError } from '../../src/errors.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { openSource } from '../../src/feeds/source/source.js';
import type { FeedContext } from '../../src/feeds/types.js';
import { silentLogger } from '../../src/log.js';
import { runProbe } from '../helpers/child-probe.js';
import { drip, gzipBomb, pump, redirect, useHostileServers, ZERO_MEMBER } from '../helpers/hostile-server.js';
import { collectUntilError } from './helpers.js';
import { failure } from '../helpers/failure.js';

const CSV = 'MLS,Price\nA1,100\nA2,200\n';
const hostile = useHostileServers();

/** Reads a source's bytes to the end (the transport alone, no reader). */
async function drain(source: Record<string, unknown>): Promise<number> {
  const { bytes } = openSource(FeedSource.parse({ kind: 'csv', retries: 0, timeoutMs: 5000, ...source }), {
    baseDir: '/',
    logger: silentLogger,
  });
  let n = 0;
  for await (const chunk of bytes) n += chunk.length;
  return n;
}

function open(source: Record<string, unknown>, ctx: Partial<FeedContext> = {}) {
  return openFeed('f', FeedSource.parse({ kind: 'csv', retries: 0, timeoutMs: 5000, ...source }), {
    baseDir: '/',
    logger: silentLogger,
    ...ctx,
  });
}

describe('feed transport: bytes', () => {
  it('a 10 MB Content-Encoding gzip of 10 GiB of zeros ends with a FeedReadError, in bounded memory (child process)', async () => {
    const s = await hostile((_req, res, sent) =>
      gzipBomb(res, 10 * 1024, { 'content-type': 'text/csv', 'content-encoding': 'gzip' }, sent),
    );
    const out = await runProbe({ kind: 'feed', source: { kind: 'csv', url: `${s.url}feed.csv`, retries: 0 } });
    expect(out.error?.name).toBe('FeedReadError');
    expect(out.error?.message).toMatch(/expands more than 200×.*decompression bomb.*maxCompressionRatio/);
    expect(out.peakRssMb).toBeLessThan(300);
    // Well short of the 10 MB body; the slack is what kernel socket buffers take in before the
    // client's abort reaches the server, which grows when the machine is slow.
    expect(s.bytesSent()).toBeLessThan(8 * 1024 * 1024);
  });

  it('an application/gzip bomb stops at the ratio too, and a looser ratio stops at maxBytes', async () => {
    const s = await hostile((_req, res, sent) =>
      gzipBomb(res, 10 * 1024, { 'content-type': 'application/gzip' }, sent),
    );
    const first = await failure(drain({ url: `${s.url}feed` }), 'the read');
    expect(first).toBeInstanceOf(FeedReadError);
    expect(first.message).toMatch(/decompression bomb/);
    const second = await failure(
      drain({ url: `${s.url}feed`, maxCompressionRatio: 1e9, maxBytes: 64 * 1024 * 1024 }),
      'the read',
    );
    expect(second.message).toMatch(/expands past source\.maxBytes \(67108864 bytes\)/);
    expect(second.retryable).toBe(false);
  });

  it('a local .gz bomb is bounded the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'feedsync-bomb-'));
    await writeFile(join(dir, 'bomb.csv.gz'), Buffer.concat(Array.from({ length: 64 }, () => ZERO_MEMBER)));
    try {
      const err = await failure(
        drain({ path: join(dir, 'bomb.csv.gz'), maxCompressionRatio: 1e9, maxBytes: 20 * 1024 * 1024 }),
        'the read',
      );
      expect(err.message).toMatch(/bomb\.csv\.gz: the feed expands past source\.maxBytes/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an endless plain body stops at maxBytes, in bounded memory (child process)', async () => {
    const s = await hostile(async (_req, res, sent) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('MLS,Price\n');
      await pump(res, Buffer.from('A,1\n'.repeat(16384)), Infinity, sent);
    });
    const out = await runProbe({
      kind: 'feed',
      source: { kind: 'csv', url: s.url, retries: 0, maxBytes: 200 * 1024 * 1024 },
    });
    expect(out.error?.message).toMatch(/larger than source\.maxBytes \(209715200 bytes\)/);
    expect(out.peakRssMb).toBeLessThan(300);
  });
});

describe('feed transport: a total deadline', () => {
  it('one byte every 1.5 s with timeoutMs 2000 ends at the deadline, not after the whole drip', async () => {
    const s = await hostile((_req, res, sent) => drip(res, 1500, 100, sent, { 'content-type': 'text/csv' }));
    const { error } = await collectUntilError(open({ url: s.url, timeoutMs: 2000 }).items);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/not complete within 2000 ms \(source\.timeoutMs, a total deadline/);
    expect(s.bytesSent()).toBeLessThanOrEqual(3);
  });
});

describe('feed transport: redirects keep credentials in their origin', () => {
  it('a redirect to another origin is refused when a bearer token or any header is configured; the other origin gets nothing', async () => {
    const other = await hostile((_req, res) => void res.end(CSV));
    const s = await hostile((_req, res) => redirect(res, 302, `${other.origin}/stolen.csv`));
    for (const creds of [{ bearerToken: 'tok-cross-origin-1' }, { headers: { 'X-Api-Auth': 'hdr-cross-origin-2' } }]) {
      const { error } = await collectUntilError(open({ url: `${s.url}feed.csv`, ...creds }).items);
      expect(error).toBeInstanceOf(FeedReadError);
      expect(error!.message).toMatch(/redirect to another origin \(http:\/\/127\.0\.0\.1:\d+\/stolen\.csv\) refused/);
      expect((error as FeedReadError).retryable).toBe(false);
    }
    expect(other.received).toEqual([]);
  });

  it('a redirect within the origin is followed with the credentials; one to another origin without any is followed bare', async () => {
    const other = await hostile((_req, res) => void res.end(CSV));
    const s = await hostile((req, res) => {
      if (req.url === '/feed.csv') return redirect(res, 301, '/moved.csv');
      if (req.url === '/moved.csv') return void res.end(CSV);
      return redirect(res, 307, `${other.origin}/public.csv`);
    });
    const same = await collectUntilError(open({ url: `${s.url}feed.csv`, bearerToken: 'tok-same-origin' }).items);
    expect(same.error).toBeUndefined();
    expect(same.items).toHaveLength(2);
    expect(s.received.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/feed.csv', 'Bearer tok-same-origin'],
      ['/moved.csv', 'Bearer tok-same-origin'],
    ]);
    const bare = await collectUntilError(open({ url: `${s.url}public` }).items);
    expect(bare.error).toBeUndefined();
    expect(other.received).toHaveLength(1);
    expect(other.received[0]!.headers.authorization).toBeUndefined();
  });

  it('a redirect to a non-http scheme is refused', async () => {
    const s = await hostile((_req, res) => redirect(res, 302, 'file:///etc/passwd'));
    const { error } = await collectUntilError(open({ url: s.url }).items);
    expect(error!.message).toMatch(/redirect to file: refused/);
  });

  it('a redirect whose Location is not a URL fails the read as a redirect, not retried as a network error', async () => {
    const s = await hostile((_req, res) => redirect(res, 302, 'http://[broken'));
    const { error } = await collectUntilError(open({ url: `${s.url}feed.csv`, retries: 1 }).items);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/HTTP 302 redirect to a Location that is not a URL/);
    expect((error as FeedReadError).retryable).toBe(false);
    expect(s.received).toHaveLength(1);
  });

  it("asks the credential's request budget before every request, redirects included", async () => {
    const s = await hostile((req, res) => (req.url === '/a' ? redirect(res, 302, '/b') : void res.end(CSV)));
    const inner = createBudgets(memoryBackend(), silentLogger);
    const asked: string[] = [];
    const budgets: Budgets = {
      shared: false,
      budget: (key, limits, opts) => {
        const b = inner.budget(key, limits, opts);
        return { ...b, acquire: (signal) => (asked.push(key), b.acquire(signal)) };
      },
    };
    for (const token of ['tok-one', 'tok-two']) {
      const { error } = await collectUntilError(open({ url: `${s.url}a`, bearerToken: token }, { budgets }).items);
      expect(error).toBeUndefined();
    }
    // two requests per read (the redirect and its target), each read on its own credential's budget
    expect(asked).toHaveLength(4);
    expect(asked[0]).toBe(asked[1]);
    expect(asked[2]).toBe(asked[3]);
    expect(asked[0]).not.toBe(asked[2]);
    expect(asked.join(' ')).not.toContain('tok-');
  });
});
