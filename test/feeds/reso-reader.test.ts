// The RESO reader over real HTTP against the test OData server (test/helpers/reso-server.ts), which
// pages with $skip nextLinks over records as they are at each request, the way real servers do.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { FeedReadError } from '../../src/errors.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { clearTokenCache } from '../../src/feeds/reso/oauth2.js';
import { openReso } from '../../src/feeds/reso/reso-reader.js';
import { silentLogger } from '../../src/log.js';
import { maskSecrets } from '../../src/secrets.js';
import { startResoServer, type ResoServer, type ResoServerOptions } from '../helpers/reso-server.js';
import type { Spelling } from '../helpers/reso-spelling.js';
import { collect, collectUntilError } from './helpers.js';

const servers: ResoServer[] = [];
afterEach(async () => {
  clearTokenCache();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(opts: ResoServerOptions) {
  const s = await startResoServer(opts);
  servers.push(s);
  return s;
}

function record(key: string, ts: string | null, extra: Record<string, unknown> = {}) {
  return {
    ListingKey: key,
    ListingId: `MLS-${key}`,
    ModificationTimestamp: ts,
    StandardStatus: 'Active Under Contract',
    PropertyType: 'Residential',
    ...extra,
  };
}

function source(url: string, extra: Record<string, unknown> = {}) {
  return FeedSource.parse({ kind: 'reso', url, incremental: true, retries: 2, timeoutMs: 5000, ...extra });
}

/** A pull handed the mark `mark` (what the sync would store from the last run). */
async function pull(url: string, mark: string | undefined, extra: Record<string, unknown> = {}, full = false) {
  const src = source(url, extra);
  if (src.kind !== 'reso') throw new Error('not reso');
  const feed = openReso(
    'mls',
    src,
    { baseDir: '/', logger: silentLogger, full, ...(mark !== undefined && { mark }) },
    { backoffMs: 10 },
  );
  const { items, error } = await collectUntilError(feed.items);
  return { feed, items, error, keys: items.map((i) => i.position.id) };
}

const T1 = '2025-03-01T10:00:00.000Z';
const T2 = '2025-03-01T11:00:00.000Z';
const T3 = '2025-03-01T12:00:00.000Z';
// no request of the reader's is anything but a data page (the mark comes from the records received)
const dataRequests = (s: ResoServer) => s.requests;

describe.each<Spelling>(['display', 'enum'])('RESO reader against a server spelling lookups as %s', (spelling) => {
  it('pages a full pull by key with Prefer: odata.maxpagesize, through pages the server makes smaller, with the bearer token', async () => {
    const records = [...generateResoRecords(22, { seed: 3 }), record('K9', T1, { StandardStatus: 'Coming Soon' })];
    const s = await server({ records, spelling, maxPageSize: 5, token: 'tok-123456' });
    const { items, feed, error } = await pull(s.url, undefined, { bearerToken: 'tok-123456', maxPageSize: 10 });
    expect(error).toBeUndefined();
    expect(items).toHaveLength(23);
    expect(new Set(items.map((i) => i.position.id)).size).toBe(23);
    // five pages of 5 or fewer, then the empty page after the last key (a full pull of the standard
    // profile asks for it: a short page proves nothing there); no request of its own for the mark
    expect(s.requests).toHaveLength(6);
    expect(feed.stats.requests).toBe(6);
    expect(
      s.requests.every((r) => r.authorization === 'Bearer tok-123456' && r.prefer === 'odata.maxpagesize=10'),
    ).toBe(true);
    expect(dataRequests(s).map((r) => r.orderby)).toEqual(Array(6).fill('ListingKey'));
    expect(dataRequests(s)[1]!.filter).toBe(`ListingKey gt '${items[4]!.position.id}'`);
    expect(s.requests[0]!.url).toContain('$expand=Media');
    expect(feed.mode).toBe('full'); // incremental, but no mark yet: everything was pulled
    const statuses = items.map((i) => (i.kind === 'record' ? String(i.data.StandardStatus) : ''));
    expect(statuses.some((v) => v.includes(' '))).toBe(spelling === 'display');
  });

  it('a no-change incremental pull is one request, with or without maxPageSize', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2)], spelling });
    const first = await pull(s.url, undefined);
    for (const extra of [{}, { maxPageSize: 50 }]) {
      const again = await pull(s.url, first.feed.mark, extra);
      expect(again.feed.mode).toBe('incremental');
      expect(again.keys).toEqual(['B']); // the record at the mark's own timestamp (ge)
      expect(again.feed.stats.requests).toBe(1);
    }
  });

  it('a full pull against a server that caps pages silently and sends no nextLink still reads every record (it asks for the empty page)', async () => {
    const s = await server({
      records: generateResoRecords(12, { seed: 6 }),
      spelling,
      maxPageSize: 5,
      nextLink: () => undefined,
    });
    const { items, error, feed } = await pull(s.url, undefined, { maxPageSize: 10 }, true);
    expect(error).toBeUndefined();
    expect(items).toHaveLength(12);
    expect(feed.stats.requests).toBe(4); // 5 + 5 + 2, and the empty page
  });

  it('loses no record when records change and disappear between the pages of a full pull', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `K${String(i).padStart(2, '0')}`);
    const s = await server({
      records: keys.map((k, i) => record(k, new Date(Date.parse(T1) + i * 1000).toISOString())),
      spelling,
      maxPageSize: 4,
      beforePage: (n, srv) => {
        if (n === 3) {
          srv.touch('K01'); // read on page 1, then changed: moves to the end in time order
          srv.touch('K06'); // not read yet: changed in place
          srv.remove('K02'); // read on page 1, then deleted: shifts every later record by one under $skip
        }
      },
    });
    const { keys: read, error } = await pull(s.url, undefined, {}, true);
    expect(error).toBeUndefined();
    expect(read).toEqual(keys); // each key exactly once, none skipped
  });

  it("an incremental pull reads what changed since the mark, including a record written later with the mark's exact timestamp and a lower key", async () => {
    const s = await server({
      records: [record('A', T1), record('B', T2), record('C', T2), record('D', T2)],
      spelling,
      maxPageSize: 2,
    });
    const first = await pull(s.url, undefined);
    expect(first.keys).toEqual(['A', 'B', 'C', 'D']);
    expect(JSON.parse(first.feed.mark!)).toEqual({ ts: T2 });

    // 0 arrives with the mark's very timestamp and a key before every other; F later; B changes again
    s.records = [record('A', T1), record('C', T2), record('D', T2), record('0', T2), record('B', T3), record('F', T3)];
    const before = s.requests.length;
    const second = await pull(s.url, first.feed.mark);
    expect(second.feed.mode).toBe('incremental');
    expect(s.requests[before]!.filter).toBe(`ModificationTimestamp ge ${T2}`);
    expect(second.keys).toEqual(['0', 'C', 'D', 'B', 'F']);
    expect(JSON.parse(second.feed.mark!)).toEqual({ ts: T3 });
  });

  it('a record stamped in the future, or with a timestamp that does not parse, never becomes the mark', async () => {
    const future = new Date(Date.now() + 86_400_000 * 365).toISOString();
    const s = await server({
      records: [
        record('A', T1),
        record('B', T2),
        record('Z', future),
        record('Y', '0000-00-00T00:00:00Z'),
        record('X', null),
      ],
      spelling,
    });
    const first = await pull(s.url, undefined);
    expect(first.keys.sort()).toEqual(['A', 'B', 'X', 'Y', 'Z']);
    expect(JSON.parse(first.feed.mark!)).toEqual({ ts: T2 });
    // a later change at T3 is still seen: the future record did not freeze the mark
    s.touch('A', { ModificationTimestamp: T3 });
    const second = await pull(s.url, first.feed.mark);
    expect(second.keys).toContain('A');
    expect(JSON.parse(second.feed.mark!)).toEqual({ ts: T3 });
  });

  it('the mark is where the server stood when the pull began: a record changed during the pull is read again by the next one', async () => {
    const records = ['A', 'B', 'C', 'D', 'E', 'F'].map((k, i) =>
      record(k, new Date(Date.parse(T1) + i * 1000).toISOString()),
    );
    const s = await server({
      records,
      spelling,
      maxPageSize: 2,
      beforePage: (n, srv) => {
        if (n === 3) {
          srv.touch('A', { ListPrice: 1 }); // already read (page 1): its change must not be lost
          srv.touch('E', { ListPrice: 2 }); // read later with the newer timestamp
        }
      },
    });
    const first = await pull(s.url, undefined, {}, true);
    expect(first.keys).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    // A and E changed during the pull (stamped by the server's clock, after the pull began): the mark is not past them
    expect(JSON.parse(first.feed.mark!)).toEqual({ ts: records[5]!.ModificationTimestamp });
    const second = await pull(s.url, first.feed.mark);
    // F was the latest before the pull began: records at the mark's own timestamp are read again
    expect(second.keys).toEqual(['F', 'A', 'E']);
    expect(second.items.map((i) => i.kind === 'record' && i.data.ListPrice)).toEqual([undefined, 1, 2]);
  });

  it('$top is a total: a full pull capped by it ends incomplete; the page size is maxPageSize', async () => {
    const s = await server({ records: generateResoRecords(23, { seed: 3 }), spelling, maxPageSize: 100 });
    const { items, error, feed } = await pull(s.url, undefined, { top: 10, maxPageSize: 4 }, true);
    expect(items).toHaveLength(10);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/top = 10 records: top is a total.*not complete/);
    expect(feed.mark).toBeUndefined();
    expect(dataRequests(s).map((r) => r.top)).toEqual([10, 6, 2]);
    expect(dataRequests(s).every((r) => r.prefer === 'odata.maxpagesize=4')).toBe(true);
  });

  it('an incremental pull capped by top resumes after the last record it read', async () => {
    const records = ['A', 'B', 'C', 'D', 'E'].map((k, i) =>
      record(k, new Date(Date.parse(T1) + i * 1000).toISOString()),
    );
    const s = await server({ records, spelling });
    const first = await pull(s.url, undefined);
    s.records = records.map((r, i) => ({
      ...r,
      ModificationTimestamp: new Date(Date.parse(T2) + i * 1000).toISOString(),
    }));
    const second = await pull(s.url, first.feed.mark, { top: 3 });
    expect(second.error).toBeUndefined();
    expect(second.keys).toEqual(['A', 'B', 'C']);
    const third = await pull(s.url, second.feed.mark, { top: 3 });
    expect(third.keys).toEqual(['C', 'D', 'E']);
  });

  it('a page whose body breaks off is asked for again, and no record is handed on twice', async () => {
    const s = await server({
      records: generateResoRecords(9, { seed: 2 }),
      spelling,
      maxPageSize: 3,
      brokenBodies: [3],
    });
    const { keys, error, feed } = await pull(s.url, undefined, {}, true);
    expect(error).toBeUndefined();
    expect(keys).toHaveLength(9);
    expect(new Set(keys).size).toBe(9);
    expect(s.requests.filter((r) => r.filter === s.requests[2]!.filter)).toHaveLength(2);
    expect(feed.stats.keysSeenTwiceCount).toBe(0);
  });

  it('incremental pulls also take records whose photos changed, where the server has PhotosChangeTimestamp', async () => {
    const s = await server({
      records: [record('A', T1, { PhotosChangeTimestamp: T1 }), record('B', T2, { PhotosChangeTimestamp: T2 })],
      spelling,
    });
    const first = await pull(s.url, undefined);
    expect(JSON.parse(first.feed.mark!)).toEqual({ ts: T2, photos: T2 });
    s.records = [record('A', T1, { PhotosChangeTimestamp: T3 }), record('B', T2, { PhotosChangeTimestamp: T2 })];
    const second = await pull(s.url, first.feed.mark);
    expect(dataRequests(s).at(-1)!.filter).toBe(`ModificationTimestamp ge ${T2} or PhotosChangeTimestamp ge ${T2}`);
    expect(second.feed.stats.requests).toBe(1); // one page, without a nextLink: nothing more changed
    expect(second.keys).toEqual(['A', 'B']);
    expect(JSON.parse(second.feed.mark!)).toEqual({ ts: T2, photos: T3 });
  });

  it('a server without PhotosChangeTimestamp is never asked about it', async () => {
    const s = await server({ records: [record('A', T1)], spelling });
    const first = await pull(s.url, undefined);
    const second = await pull(s.url, first.feed.mark);
    expect(second.error).toBeUndefined();
    expect(s.requests.every((r) => r.status === 200 && !r.url.includes('Photos'))).toBe(true);
  });
});

describe('RESO reader: paging by nextLink, bounded', () => {
  const nextLink = { paging: 'nextLink' };

  it("follows the server's nextLinks in order", async () => {
    const s = await server({ records: generateResoRecords(7, { seed: 1 }), maxPageSize: 3 });
    const { keys, error } = await pull(s.url, undefined, nextLink, true);
    expect(error).toBeUndefined();
    expect(keys).toHaveLength(7);
    expect(dataRequests(s).map((r) => r.skip)).toEqual([undefined, 3, 6]);
  });

  it('a nextLink that points at its own page is an error that leaves the read incomplete', async () => {
    const self = await server({
      records: generateResoRecords(7, { seed: 1 }),
      maxPageSize: 3,
      nextLink: () => `${self.url}/Property?$skip=3`,
    });
    const { error, feed, items } = await pull(self.url, undefined, nextLink, true);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/would ask for an earlier page again/);
    expect(feed.mark).toBeUndefined();
    expect(items).toHaveLength(6);
    expect(dataRequests(self)).toHaveLength(2);
  });

  it('an endless series of new pages stops at maxPages, incomplete', async () => {
    const s = await server({
      records: generateResoRecords(3, { seed: 1 }),
      maxPageSize: 3,
      nextLink: (_made, n) => `${s.url}/Property?$skip=0&page=${n}`,
    });
    const { error, feed } = await pull(s.url, undefined, { ...nextLink, maxPages: 5 }, true);
    expect(error!.message).toMatch(/more than source.maxPages \(5\) pages/);
    expect(feed.mark).toBeUndefined();
    expect(dataRequests(s)).toHaveLength(5);
    expect(feed.stats.keysSeenTwiceCount).toBe(12); // the same 3 records on pages 2 to 5
  });

  it("a nextLink's query values ($skiptoken) are not taken for secrets: the registry does not grow with the pages read", async () => {
    const s = await server({
      records: generateResoRecords(7, { seed: 1 }),
      maxPageSize: 3,
      nextLink: (made, n) => made && `${made}&$skiptoken=skiptoken-${n}-7d1c9a`,
    });
    const { keys, error } = await pull(s.url, undefined, nextLink, true);
    expect(error).toBeUndefined();
    expect(keys).toHaveLength(7);
    expect(dataRequests(s)[1]!.url).toContain('skiptoken-1-7d1c9a');
    for (const n of [1, 2]) expect(maskSecrets(`skiptoken-${n}-7d1c9a`)).toBe(`skiptoken-${n}-7d1c9a`);
  });

  it("a nextLink's userinfo is not used: the feed's configured credentials go with every page, never ones the server picks", async () => {
    const s = await server({
      records: generateResoRecords(7, { seed: 1 }),
      maxPageSize: 3,
      nextLink: (made) => made?.replace('http://', 'http://picked:pk-3f9a1c7e@'),
    });
    const configured = s.url.replace('http://', 'http://cfg:cfgpass-1234@');
    const { keys, error } = await pull(configured, undefined, nextLink, true);
    expect(error).toBeUndefined();
    expect(keys).toHaveLength(7);
    const basic = `Basic ${Buffer.from('cfg:cfgpass-1234').toString('base64')}`;
    expect(dataRequests(s).map((r) => r.authorization)).toEqual([basic, basic, basic]);
    expect(maskSecrets('pk-3f9a1c7e')).toBe('pk-3f9a1c7e');
  });

  it('a nextLink to another origin is not followed: the other origin receives nothing, and the read is incomplete', async () => {
    const other = await server({ records: [record('X', T1)] });
    const s = await server({
      records: generateResoRecords(6, { seed: 1 }),
      maxPageSize: 3,
      token: 'secret-tok',
      nextLink: () => `${other.url}/Property?$skip=3`,
    });
    const { error, items } = await pull(s.url, undefined, { ...nextLink, bearerToken: 'secret-tok' }, true);
    expect(items).toHaveLength(3);
    expect(error!.message).toMatch(/another origin/);
    expect(other.requests).toHaveLength(0);
  });

  it('a nextLink that is not http(s) is not followed', async () => {
    const s = await server({
      records: generateResoRecords(6, { seed: 1 }),
      maxPageSize: 3,
      nextLink: () => 'file:///etc/passwd',
    });
    const { error } = await pull(s.url, undefined, nextLink, true);
    expect(error!.message).toMatch(/only http\(s\) is followed/);
  });

  it('a page with more records than maxPageRecords is an error', async () => {
    const s = await server({ records: generateResoRecords(20, { seed: 1 }), maxPageSize: 20 });
    const { error, items } = await pull(s.url, undefined, { maxPageRecords: 10 }, true);
    expect(items).toHaveLength(0);
    expect(error!.message).toMatch(/holds 20 records, more than source.maxPageRecords \(10\)/);
  });

  it('reports keys seen twice (a $skip page shifted by a record inserted at the front)', async () => {
    const records = ['B', 'C', 'D', 'E'].map((k) => record(k, T1));
    const s = await server({
      records,
      maxPageSize: 2,
      beforePage: (n, srv) => n === 2 && (srv.records = [record('A', T1), ...srv.records]),
    });
    const { keys, feed } = await pull(s.url, undefined, nextLink, true);
    expect(keys).toEqual(['B', 'C', 'C', 'D', 'E']);
    expect(feed.stats.keysSeenTwice).toEqual(['C']);
  });
});

describe('RESO reader: auth', () => {
  const oauth = { clientId: 'feedsync-client', clientSecret: 'oauth-secret-value', scope: 'api' };
  const auth = (s: ResoServer, extra: Record<string, unknown> = {}) => ({
    auth: { kind: 'oauth2', tokenUrl: s.tokenUrl, ...oauth, ...extra },
  });

  it('OAuth2 client credentials: one token, cached and shared by pulls until shortly before it expires', async () => {
    const s = await server({ records: [record('A', T1)], oauth: { ...oauth, ttlSeconds: 3600 } });
    await pull(s.url, undefined, auth(s));
    await pull(s.url, undefined, auth(s));
    await Promise.all([pull(s.url, undefined, auth(s)), pull(s.url, undefined, auth(s))]);
    expect(s.tokenRequests).toEqual([
      {
        grant_type: 'client_credentials',
        client_id: 'feedsync-client',
        client_secret: 'oauth-secret-value',
        scope: 'api',
      },
    ]);
    expect(s.requests.every((r) => r.status === 200)).toBe(true);
  });

  it('a token is reused for a minimum time whatever its expires_in; once the server refuses it, one fresh token', async () => {
    // expires_in: 1 would otherwise cost a token request a second (issue 23: 0.001 cost one a page)
    const s = await server({ records: [record('A', T1)], oauth: { ...oauth, ttlSeconds: 1 } });
    await pull(s.url, undefined, auth(s));
    await new Promise((r) => setTimeout(r, 1000));
    const { error } = await pull(s.url, undefined, auth(s));
    expect(error).toBeUndefined();
    expect(s.tokenRequests).toHaveLength(2);
    expect(s.requests.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([401]);
  });

  it('a 401 (a revoked token) gets one fresh token and the same page again', async () => {
    // revoked just before page 2 is answered: page 1 passed, page 2 gets a 401
    const s = await server({
      records: generateResoRecords(6, { seed: 1 }),
      maxPageSize: 3,
      oauth: { ...oauth, ttlSeconds: 3600 },
      beforePage: (n, srv) => n === 2 && srv.revokeTokens(),
    });
    const { keys, error } = await pull(s.url, undefined, auth(s), true);
    expect(error).toBeUndefined();
    expect(keys).toHaveLength(6);
    expect(s.requests.map((r) => r.status)).toEqual([200, 401, 200, 200]);
    expect(s.tokenRequests).toHaveLength(2);
  });

  it('a 401 that a fresh token does not cure fails the read, naming the credential and never the secret', async () => {
    const s = await server({
      records: [record('A', T1)],
      oauth: { ...oauth, ttlSeconds: 3600 },
      beforePage: (_n, srv) => srv.revokeTokens(),
    });
    const { error } = await pull(s.url, undefined, auth(s));
    expect(error).toBeInstanceOf(FeedReadError);
    expect((error as FeedReadError).retryable).toBe(false);
    expect(error!.message).toMatch(
      /refused OAuth2 client "feedsync-client" .*, even with a fresh token \(HTTP 401\); check feeds\[\]\.source\.auth \(clientId, clientSecret, scope\) and the client's rights$/,
    );
    expect(error!.message).not.toContain('oauth-secret-value');
    expect(s.requests).toHaveLength(2);
    expect(s.tokenRequests).toHaveLength(2);
  });

  it('a wrong client secret fails at the token endpoint, naming the client', async () => {
    const s = await server({ records: [record('A', T1)], oauth: { ...oauth, ttlSeconds: 3600 } });
    const { error } = await pull(s.url, undefined, auth(s, { clientSecret: 'wrong-secret-value' }));
    expect(error!.message).toMatch(
      /token endpoint refused OAuth2 client "feedsync-client".*HTTP 401.*; check feeds\[\]\.source\.auth \(clientId, clientSecret, scope\) and the client's rights$/,
    );
    expect(error!.message).toContain('it said: invalid_client'); // the endpoint's own words, decoded
    expect(error!.message).not.toContain('wrong-secret-value');
    expect(s.requests).toHaveLength(0);
  });

  it('a wrong static bearer token fails without retrying, naming source.bearerToken', async () => {
    const s = await server({ records: [record('A', T1)], token: 'right-token' });
    const { error } = await pull(s.url, undefined, { bearerToken: 'wrong-token' });
    expect(error).toBeInstanceOf(FeedReadError);
    expect((error as FeedReadError).retryable).toBe(false);
    expect(error!.message).toMatch(/refused the bearer token of source.bearerToken \(HTTP 401\)/);
    expect(error!.message).not.toContain('wrong-token');
    expect(s.requests).toHaveLength(1);
  });
});

describe('RESO reader: the rest', () => {
  it('pulls everything when asked for a full pull, whatever the mark', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2)] });
    const { keys, feed } = await pull(s.url, JSON.stringify({ ts: T3 }), {}, true);
    expect(keys).toEqual(['A', 'B']);
    expect(feed.mode).toBe('full');
    expect(dataRequests(s)[0]!.filter).toBeUndefined();
  });

  it('turns MlgCanView: false into a removed item', async () => {
    const s = await server({ records: [record('A', T1), record('B', T2, { MlgCanView: false })] });
    const { items } = await pull(s.url, undefined);
    expect(items.map((i) => [i.kind, i.position.id])).toEqual([
      ['record', 'A'],
      ['removed', 'B'],
    ]);
  });

  it('reads gzip-encoded pages', async () => {
    const s = await server({ records: generateResoRecords(7, { seed: 1 }), gzip: true, maxPageSize: 3 });
    const { items } = await pull(s.url, undefined);
    expect(items).toHaveLength(7);
    expect(s.requests[0]!.acceptEncoding).toMatch(/gzip/);
  });

  it('retries a 503 and then reads on', async () => {
    const s = await server({ records: [record('A', T1)], failFirst: [503] });
    const { keys } = await pull(s.url, undefined);
    expect(keys).toEqual(['A']);
    expect(s.requests.map((r) => r.status)).toEqual([503, 200, 200]); // the page again, then the empty page after it
  });

  it('replays the saved pages of the demo; an incremental replay from its mark yields only the records at the mark', async () => {
    const baseDir = fileURLToPath(new URL('../../fixtures', import.meta.url));
    const src = FeedSource.parse({ kind: 'reso', path: 'feeds/reso-pages.json', incremental: true });
    const first = openFeed('replay', src, { baseDir, logger: silentLogger });
    const items = await collect(first.items);
    expect(items).toHaveLength(240);
    expect(items.filter((i) => i.kind === 'removed')).toHaveLength(2);
    const latest = items
      .map((i) => (i.kind === 'error' ? '' : String(i.data?.ModificationTimestamp)))
      .sort()
      .at(-1)!;
    const again = openFeed('replay', src, { baseDir, logger: silentLogger, mark: first.mark! });
    const replayed = await collect(again.items);
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.every((i) => i.kind !== 'error' && i.data?.ModificationTimestamp === latest)).toBe(true);
  });
});
