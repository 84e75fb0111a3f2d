// The media mirror end to end: a CSV feed whose listings name photos on a photo host (test/helpers),
// synced to the emulator with media.mirror pointed at a local S3 server (s3rver). Outcomes are read
// where they land: the bucket's objects and their bytes, the listings' Images on the emulator, the
// photo host's request counts.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { MediaConfig } from '../../src/media/index.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { syncFeed, type SyncOptions, type SyncTestHooks } from '../../src/sync/index.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { mirrorMediaConfig, useMirrorServers } from '../helpers/mirror-servers.js';
import { fakeImage, startPhotoHost, type PhotoHost } from '../helpers/photo-host.js';
import type { TestS3 } from '../helpers/s3-server.js';
import { startResoServer } from '../helpers/reso-server.js';
import { startVendorServer } from '../helpers/vendor-server.js';
import { COLUMNS, row, type Row } from '../sync/helpers/feed.js';

const SN = 'SN-PHOTOS';
const PUBLIC = 'https://cdn.photos.test/media';

const servers = useMirrorServers();
let te: TestEmulator;
let s3: TestS3;
let host: PhotoHost;
let dir: string;
let store: KvStore;

beforeEach(async () => {
  ({ te, s3, host } = servers());
  await te.reset();
  await s3.clear();
  host.seen.length = 0;
  host.requireUserAgent = undefined;
  dir = await mkdtemp(join(tmpdir(), 'feedsync-media-'));
  store = createMemoryStore(`memory (${dir})`);
  return () => rm(dir, { recursive: true, force: true });
});

type Listing = Row & { Images?: string[] };
const listing = (i: number, photos: string[]): Listing => ({ ...row(i), Images: photos.map((p) => host.url(p)) });

async function writeFeed(listings: Listing[]): Promise<void> {
  const columns = [...COLUMNS, 'Images', 'ListDate'] as const;
  const cell = (v: unknown) =>
    v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v);
  const value = (l: Listing, c: (typeof columns)[number]) =>
    c === 'Images' ? l.Images?.join(',') : c === 'ListDate' ? '2026-01-15' : l[c];
  const lines = listings.map((l) => columns.map((c) => cell(value(l, c))).join(','));
  await writeFile(join(dir, 'feed.csv'), [columns.join(','), ...lines].join('\n') + '\n');
}

function feedConfig(patch: Record<string, unknown> = {}): FeedConfig {
  return FeedConfig.parse({
    name: 'photo-feed',
    chatbot: SN,
    source: { kind: 'csv', path: 'feed.csv' },
    mapping: { fields: Object.fromEntries([...COLUMNS, 'Images'].map((c) => [c, c])) },
    deletes: { maxFraction: 1 },
    // the photo host of these tests listens on 127.0.0.1, an internal address: allowed here by name
    media: { allowInternal: ['127.0.0.1'] },
    ...patch,
  });
}

function mediaConfig(patch: Record<string, unknown> = {}): MediaConfig {
  return mirrorMediaConfig(s3, PUBLIC, patch);
}

function sync(opts: SyncOptions & Pick<SyncTestHooks, 'now'> & { feed?: FeedConfig; media?: MediaConfig } = {}) {
  const { feed = feedConfig(), media = mediaConfig(), now, ...syncOpts } = opts;
  const apiConfig = ApiConfig.parse({ baseUrl: te.url, secretKey: 'x', sessionKey: 'y', concurrency: 4, pageSize: 50 });
  return syncFeed(
    feed,
    { api: te.client(), store, configFeeds: [feed], logger: silentLogger, baseDir: dir, apiConfig, media },
    syncOpts,
    // (the run's clock: a test hook, passed apart from the options)
    now ? { now } : {},
  );
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const imagesOf = async (mls: string) => (await te.listings(SN)).find((l) => l.MLSNumber === mls)?.Images;

describe('media mirror', () => {
  it('stores each distinct photo once under its content hash and gives the chatbot only the bucket URLs, in order', async () => {
    const photos = {
      a: fakeImage('jpeg', 'a'),
      b: fakeImage('png', 'b'),
      c: fakeImage('webp', 'c'),
      shared: fakeImage('avif', 'shared'),
    };
    for (const [name, body] of Object.entries(photos))
      host.set(`/p/${name}`, { kind: 'image', body, contentType: 'application/octet-stream' });
    await writeFeed([listing(1, ['/p/b', '/p/a', '/p/shared']), listing(2, ['/p/c', '/p/shared'])]);

    const report = await sync();
    expect(report.outcome).toBe('ok');
    expect(report.counts.created).toBe(2);
    expect(report.media).toMatchObject({
      downloaded: 4,
      failed: 0,
      reused: 0,
      bytes: Object.values(photos).reduce((n, b) => n + b.length, 0),
    });
    for (const name of Object.keys(photos)) expect(host.count(`/p/${name}`)).toBe(1);

    const key = (b: Buffer, ext: string) => `listings/photo-feed/${sha256(b)}.${ext}`;
    expect(await imagesOf('MLS0001')).toEqual(
      [key(photos.b, 'png'), key(photos.a, 'jpg'), key(photos.shared, 'avif')].map((k) => `${PUBLIC}/${k}`),
    );
    expect(await imagesOf('MLS0002')).toEqual(
      [key(photos.c, 'webp'), key(photos.shared, 'avif')].map((k) => `${PUBLIC}/${k}`),
    );

    const objects = await s3.objects();
    expect([...objects.keys()].sort()).toEqual(
      [key(photos.a, 'jpg'), key(photos.b, 'png'), key(photos.c, 'webp'), key(photos.shared, 'avif')].sort(),
    );
    expect(objects.get(key(photos.a, 'jpg'))).toEqual({
      body: photos.a,
      contentType: 'image/jpeg',
      cacheControl: 'public, max-age=31536000, immutable',
    });
    expect(objects.get(key(photos.b, 'png'))?.body.equals(photos.b)).toBe(true);
    expect(objects.get(key(photos.shared, 'avif'))?.contentType).toBe('image/avif');

    // a rerun downloads nothing and writes nothing
    const before = host.total();
    const rerun = await sync();
    expect(host.total()).toBe(before);
    expect(rerun.counts).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    expect(rerun.media).toMatchObject({ downloaded: 0, failed: 0 });
    expect(rerun.summary).toContain('photos: 0 downloaded');
  });

  it('stores a photo larger than one part (8 MiB) as a multipart upload, byte for byte', async () => {
    const big = fakeImage('jpeg', 'big', 9 * 1024 * 1024 + 17);
    host.set('/big/1', { kind: 'image', body: big });
    await writeFeed([listing(1, ['/big/1'])]);
    const report = await sync({ media: mediaConfig({ maxBytes: 10 * 1024 * 1024, timeoutMs: 20_000 }) });
    expect(report.media).toMatchObject({ downloaded: 1, bytes: big.length, failed: 0 });
    const objects = await s3.objects();
    expect(objects.get(`listings/photo-feed/${sha256(big)}.jpg`)?.body.equals(big)).toBe(true);
  });

  it('a rerun that maps every record again (no stamps: a field reads the clock) downloads nothing and writes no state', async () => {
    host.set('/k/1', { kind: 'image', body: fakeImage('jpeg', 'k1') });
    host.set('/k/2', { kind: 'image', body: fakeImage('jpeg', 'k2') });
    await writeFeed([listing(1, ['/k/1', '/k/2']), listing(2, ['/k/2'])]);
    const base = feedConfig();
    const feed = feedConfig({
      mapping: { fields: { ...base.mapping.fields, DaysOnMarket: { from: 'ListDate', transform: 'days-since' } } },
    });
    const now = () => new Date('2026-02-01T12:00:00Z');
    await sync({ feed, now });
    const applies: unknown[] = [];
    const inner = store;
    store = {
      location: inner.location,
      getAll: (ns) => inner.getAll(ns),
      get: (ns, k) => inner.get(ns, k),
      set: (ns, e) => inner.set(ns, e),
      delete: (ns, k) => inner.delete(ns, k),
      swap: (ns, k, a, b) => inner.swap(ns, k, a, b),
      close: () => inner.close(),
      apply: (c) => (applies.push(c), inner.apply(c)),
      applyInBackground: (c) => (applies.push(c), inner.applyInBackground(c)),
    };
    const before = host.total();
    const rerun = await sync({ feed, now });
    expect(rerun.counts).toMatchObject({ unchanged: 2, unchangedByStamp: 0, updated: 0 });
    expect(rerun.media).toMatchObject({ downloaded: 0, reused: 3, failed: 0 });
    expect(host.total()).toBe(before);
    expect(applies).toEqual([]);
  });

  it("downloads a changed photo once and leaves the listing's other photos alone", async () => {
    host.set('/q/1', { kind: 'image', body: fakeImage('jpeg', 'q1') });
    host.set('/q/2', { kind: 'image', body: fakeImage('jpeg', 'q2') });
    host.set('/q/3', { kind: 'image', body: fakeImage('gif', 'q3') });
    await writeFeed([listing(1, ['/q/1', '/q/2'])]);
    await sync();
    await writeFeed([listing(1, ['/q/1', '/q/3'])]);
    const report = await sync();
    expect(report.counts.updated).toBe(1);
    expect(report.media).toMatchObject({ downloaded: 1, reused: 1, failed: 0 });
    expect([host.count('/q/1'), host.count('/q/2'), host.count('/q/3')]).toEqual([1, 1, 1]);
    expect((await imagesOf('MLS0001'))?.[1]).toBe(
      `${PUBLIC}/listings/photo-feed/${sha256(fakeImage('gif', 'q3'))}.gif`,
    );
  });

  it('leaves a dead photo out, names it with its listing and reason, still syncs the listing, and retries it next run', async () => {
    host.set('/d/ok', { kind: 'image', body: fakeImage('jpeg', 'ok') });
    host.set('/d/html', { kind: 'status', status: 200, body: '<html>sign in</html>' });
    host.set('/d/huge', { kind: 'huge', bytes: 3 * 1024 * 1024 });
    host.set('/d/slow', { kind: 'slow' });
    host.set('/d/gone', { kind: 'status', status: 404 });
    await writeFeed([listing(1, ['/d/gone', '/d/ok', '/d/html', '/d/huge', '/d/slow'])]);
    const media = mediaConfig({ timeoutMs: 700 });

    const report = await sync({ media });
    expect(report.outcome).toBe('ok');
    expect(report.counts.created).toBe(1);
    expect(await imagesOf('MLS0001')).toEqual([`${PUBLIC}/listings/photo-feed/${sha256(fakeImage('jpeg', 'ok'))}.jpg`]);
    expect(report.media).toMatchObject({ downloaded: 1, failed: 4 });
    const why = Object.fromEntries(report.media!.failures.map((f) => [new URL(f.url).pathname, f.reason]));
    expect(report.media!.failures.every((f) => f.listing === 'MLS0001')).toBe(true);
    expect(why['/d/gone']).toBe('HTTP 404 Not Found');
    expect(why['/d/html']).toMatch(/^not an image/);
    expect(why['/d/huge']).toBe('larger than media.maxBytes (1048576 bytes)');
    expect(why['/d/slow']).toBe('not complete within media.timeoutMs (700 ms)');
    expect(formatSyncReport(report)).toContain('photo of MLS0001 left out: http://127.0.0.1');
    expect(await s3.keys()).toHaveLength(1);

    // next run: the dead ones are asked again, the stored one is not; a photo that came back is added
    host.set('/d/gone', { kind: 'image', body: fakeImage('png', 'back') });
    host.set('/d/slow', { kind: 'status', status: 410 });
    const next = await sync({ media });
    expect([host.count('/d/gone'), host.count('/d/ok'), host.count('/d/html')]).toEqual([2, 1, 2]);
    expect(next.media).toMatchObject({ downloaded: 1, reused: 1, failed: 3 });
    expect((await imagesOf('MLS0001'))?.length).toBe(2);
  });

  it('deletes the objects of a deleted listing after media.graceHours, keeping those another listing uses', async () => {
    host.set('/g/own', { kind: 'image', body: fakeImage('jpeg', 'own') });
    host.set('/g/shared', { kind: 'image', body: fakeImage('jpeg', 'shared') });
    host.set('/g/other', { kind: 'image', body: fakeImage('jpeg', 'other') });
    await writeFeed([listing(1, ['/g/own', '/g/shared']), listing(2, ['/g/other', '/g/shared'])]);
    const t0 = Date.parse('2026-11-20T00:00:00Z');
    const at = (hours: number) => () => new Date(t0 + hours * 3_600_000);
    const media = mediaConfig({ graceHours: 10 });
    await sync({ media, now: at(0) });
    expect(await s3.keys()).toHaveLength(3);

    await writeFeed([listing(2, ['/g/other', '/g/shared'])]);
    const deleted = await sync({ media, now: at(1) });
    expect(deleted.counts.deleted).toBe(1);
    expect(deleted.media).toMatchObject({ deleted: 0, waitingGrace: 1 });
    expect(await s3.keys()).toHaveLength(3);

    const early = await sync({ media, now: at(10.5) });
    expect(early.media).toMatchObject({ deleted: 0, waitingGrace: 1 });
    const dry = await sync({ media, now: at(11.5), dryRun: true });
    expect(dry.media?.dry).toEqual({
      download: 0,
      delete: 1,
      downloads: [],
      deletes: [`listings/photo-feed/${sha256(fakeImage('jpeg', 'own'))}.jpg`],
    });
    expect(await s3.keys()).toHaveLength(3);

    const late = await sync({ media, now: at(11.5) });
    expect(late.media).toMatchObject({ deleted: 1, waitingGrace: 0 });
    expect(await s3.keys()).toEqual(
      [sha256(fakeImage('jpeg', 'other')), sha256(fakeImage('jpeg', 'shared'))]
        .map((h) => `listings/photo-feed/${h}.jpg`)
        .sort(),
    );
    expect(host.count('/g/own')).toBe(1);
  });

  it('a dry run says what it would download and downloads nothing', async () => {
    host.set('/y/1', { kind: 'image', body: fakeImage('jpeg', 'y1') });
    await writeFeed([listing(1, ['/y/1'])]);
    const before = host.total();
    const dry = await sync({ dryRun: true });
    expect(dry.media?.dry).toMatchObject({ download: 1, delete: 0, downloads: [host.url('/y/1')] });
    expect(dry.summary).toContain('photos: would download 1');
    expect(host.total()).toBe(before);
    expect(await s3.keys()).toEqual([]);
  });

  it('storage that cannot be reached fails the photos, not the listings, and says so once', async () => {
    host.set('/s/1', { kind: 'image', body: fakeImage('jpeg', 's1') });
    host.set('/s/2', { kind: 'image', body: fakeImage('jpeg', 's2') });
    await writeFeed([listing(1, ['/s/1']), listing(2, ['/s/2'])]);
    const media = mediaConfig();
    const down = MediaConfig.parse({ ...media, mirror: { ...media.mirror!, endpoint: 'http://127.0.0.1:9' } });
    const report = await sync({ media: down });
    expect(report.outcome).toBe('ok');
    expect(report.counts.created).toBe(2);
    expect(report.media?.storageError).toMatch(
      /^storage http:\/\/127\.0\.0\.1:9 bucket photos: PUT listings\/photo-feed\/.* failed/,
    );
    expect(report.media?.failed).toBe(2);
    const text = formatSyncReport(report);
    expect(text.match(/photo storage could not be used/g)).toHaveLength(1);
    expect(text).not.toContain(s3.secretAccessKey);
    expect(JSON.stringify(report)).not.toContain(s3.secretAccessKey);
    // fixed storage: the photos come next run
    const next = await sync();
    expect(next.media).toMatchObject({ downloaded: 2, failed: 0 });
    expect(await s3.keys()).toHaveLength(2);
  });

  it("photo downloads spend the source's budget (source.limits): past it, the photo waits for the next run", async () => {
    await writeFeed([listing(1, ['/b/1', '/b/2'])]);
    for (const p of ['/b/1', '/b/2']) host.set(p, { kind: 'image', body: fakeImage('jpeg', p) });
    const served = await startFeedServer({ status: 200, body: await readFile(join(dir, 'feed.csv')) });
    try {
      // a day's budget of two requests: the feed's GET and one photo
      const feed = feedConfig({ source: { kind: 'csv', url: served.url, limits: { perDay: 2 } } });
      const report = await sync({ feed });
      expect(report.counts.created).toBe(1);
      expect(report.media).toMatchObject({ downloaded: 1, failed: 1 });
      expect(report.media?.failures[0]?.reason).toMatch(/perDay|per day|budget/i);
      expect(host.count('/b/1') + host.count('/b/2')).toBe(1);
    } finally {
      await served.close();
    }
  });

  it('follows a redirect to another allowed host, each hop checked, and sends credentials over plain http to nobody', async () => {
    const other = await startPhotoHost();
    try {
      other.set('/x', { kind: 'image', body: fakeImage('jpeg', 'x') });
      host.set('/r/same', { kind: 'redirect', location: '/r/target' });
      host.set('/r/target', { kind: 'image', body: fakeImage('jpeg', 'target') });
      host.set('/r/away', { kind: 'redirect', location: other.url('/x') });
      await writeFeed([listing(1, ['/r/same', '/r/away'])]);
      const feed = feedConfig();
      const source = {
        ...feed.source,
        mediaHeaders: { 'X-Media-Token': 'media-header-secret-55' },
        mediaHosts: ['127.0.0.1'],
      };
      const report = await sync({ feed: { ...feed, source } });
      expect(report.media).toMatchObject({ downloaded: 2, failed: 0 });
      expect(other.count('/x')).toBe(1);
      // the host is named, but over http: the header goes nowhere
      expect([...host.seen, ...other.seen].map((s) => s.headers['x-media-token'])).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    } finally {
      await other.close();
    }
  });

  it('mlsgrid: the access token goes to no host but its media host (http://127.0.0.1 is fetched bare); a re-signed MediaURL of the same MediaKey is not fetched again, a new MediaModificationTimestamp is', async () => {
    const TOKEN = 'mlsgrid-token-abc123';
    for (const p of ['/m/1', '/m/2']) host.set(p, { kind: 'image', body: fakeImage('jpeg', p) });
    const photo = (n: number, sig: string, modified: string) => ({
      MediaKey: `MK-${n}`,
      MediaURL: `${host.url(`/m/${n}`)}?sig=${sig}`,
      MediaModificationTimestamp: modified,
      Order: n,
      MediaCategory: 'Photo',
    });
    const records = generateResoRecords(1, { seed: 29 }).map((r) => ({
      ...r,
      OriginatingSystemName: 'actris',
      MlgCanView: true,
      Media: [photo(2, 'a', '2026-01-01T00:00:00Z'), photo(1, 'a', '2026-01-01T00:00:00Z')],
    }));
    const mls = await startVendorServer({ vendor: 'mlsgrid', records, token: TOKEN, originatingSystem: 'actris' });
    try {
      const feed = FeedConfig.parse({
        name: 'mls-photos',
        chatbot: SN,
        source: { kind: 'reso', vendor: 'mlsgrid', url: mls.url, bearerToken: TOKEN, originatingSystem: 'actris' },
        mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
        media: { allowInternal: ['127.0.0.1'] },
      });
      const key = String(mls.records[0]!.ListingKey);
      const first = await sync({ feed });
      expect(first.outcome, first.message).toBe('ok');
      expect(first.media).toMatchObject({ downloaded: 2, failed: 0 });
      expect(host.seen.filter((r) => r.path.startsWith('/m/')).map((r) => r.headers['user-agent'])).toEqual([
        undefined,
        undefined,
      ]);
      expect(JSON.stringify(host.seen)).not.toContain(TOKEN);
      const [held] = await te.listings(SN);
      expect(held?.Images).toEqual(
        [1, 2].map((n) => `${PUBLIC}/listings/mls-photos/${sha256(fakeImage('jpeg', `/m/${n}`))}.jpg`),
      );

      // the media host signs its URLs anew: the same photos, nothing downloaded
      mls.touch(key, { Media: [photo(1, 'b', '2026-01-01T00:00:00Z'), photo(2, 'b', '2026-01-01T00:00:00Z')] });
      const resigned = await sync({ feed });
      expect(resigned.media).toMatchObject({ downloaded: 0, reused: 2 });
      // photo 2 replaced at its URL (a new MediaModificationTimestamp): downloaded again, photo 1 not
      host.set('/m/2', { kind: 'image', body: fakeImage('png', 'new 2') });
      mls.touch(key, { Media: [photo(1, 'c', '2026-01-01T00:00:00Z'), photo(2, 'c', '2026-03-01T00:00:00Z')] });
      const replaced = await sync({ feed });
      expect(replaced.media).toMatchObject({ downloaded: 1, reused: 1 });
      expect([host.count('/m/1'), host.count('/m/2')]).toEqual([1, 2]);
      expect((await te.listings(SN))[0]?.Images?.[1]).toBe(
        `${PUBLIC}/listings/mls-photos/${sha256(fakeImage('png', 'new 2'))}.png`,
      );
    } finally {
      await mls.close();
    }
  });

  it('without the mlsgrid profile no User-Agent token is sent, and that media host refuses the photos', async () => {
    host.requireUserAgent = 'mlsgrid-token-abc123';
    host.set('/m/9', { kind: 'image', body: fakeImage('jpeg', 'm9') });
    await writeFeed([listing(1, ['/m/9'])]);
    const report = await sync();
    expect(report.media).toMatchObject({ downloaded: 0, failed: 1 });
    expect(report.media?.failures[0]?.reason).toBe('HTTP 403 Forbidden');
    expect(report.counts.created).toBe(1);
  });

  it("feeds[].media.mirror: false leaves a feed's photos as they are", async () => {
    await writeFeed([listing(1, ['/n/1'])]);
    const before = host.total();
    const report = await sync({ feed: feedConfig({ media: { mirror: false } }) });
    expect(report.media).toBeUndefined();
    expect(await imagesOf('MLS0001')).toEqual([host.url('/n/1')]);
    expect(host.total()).toBe(before);
  });

  it("a record a RESO server's paging missed (asked for by key before a delete) keeps its mirrored photos", async () => {
    host.set('/r/1', { kind: 'image', body: fakeImage('jpeg', 'r1') });
    const records = ['K-1', 'K-2', 'K-3', 'K-4'].map((k, i) => ({
      ListingKey: k,
      ListingId: `L-${i + 1}`,
      ModificationTimestamp: `2025-01-01T00:0${i}:00Z`,
      StandardStatus: 'Active',
      ListOfficeName: 'Hill Country Realty',
      PropertyType: 'Residential',
      ListPrice: 300_000 + i,
      City: 'Austin',
      BedroomsTotal: 3,
      BathroomsTotalDecimal: 2,
      LivingArea: 1500,
      YearBuilt: 2000,
      Media: [{ MediaKey: `m-${k}`, MediaURL: host.url('/r/1'), MediaCategory: 'Photo', Order: 1 }],
    }));
    // storage order with the highest key last on the first page: a pull by key misses K-3
    const reso = await startResoServer({
      records: [records[0]!, records[1]!, records[3]!, records[2]!],
      order: 'storage',
      maxPageSize: 3,
    });
    reso.order = 'honour';
    try {
      const feed = feedConfig({
        source: { kind: 'reso', url: reso.url, maxPageSize: 3, retries: 0 },
        mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      });
      const first = await sync({ feed, full: true });
      expect(first.counts.created).toBe(4);
      const mirrored = await imagesOf('L-3');
      expect(mirrored?.[0]).toMatch(new RegExp(`^${PUBLIC}/`));
      reso.order = 'storage';
      const report = await sync({ feed, full: true });
      expect(report.message).toMatch(/missed 1 record that it still has \(L-3\)/);
      expect(report.counts.deleted).toBe(0);
      expect(await imagesOf('L-3')).toEqual(mirrored);
    } finally {
      await reso.close();
    }
  });
});

describe('photo URLs that name an internal address', () => {
  it('are refused in every spelling and through every redirect: the internal hosts receive no request, the bucket gets nothing', async () => {
    const inner = await startPhotoHost({ address: '127.0.0.2' });
    // a photo host the feed allows (media.allowInternal) that redirects to the others
    const relay = await startPhotoHost({ address: '127.0.0.3' });
    try {
      const secret = fakeImage('png', 'internal only');
      for (const h of [inner, host]) h.set('/secret', { kind: 'image', body: secret });
      const innerPort = new URL(inner.origin).port;
      const hostPort = new URL(host.origin).port;
      const direct = [
        ...[
          '127.0.0.2',
          '2130706434',
          '0177.0.0.2',
          '0x7f.0.0.2',
          '0x7f000002',
          '127.2',
          '[::ffff:127.0.0.2]',
          '[::ffff:7f00:2]',
          '[::127.0.0.2]',
        ].map((h) => `http://${h}:${innerPort}/secret`),
        ...['127.0.0.1', 'localhost', '2130706433', '127.1', '0', '[::ffff:127.0.0.1]'].map(
          (h) => `http://${h}:${hostPort}/secret`,
        ),
      ];
      direct.forEach((url, i) => relay.set(`/hop/${i}`, { kind: 'redirect', location: url }));
      relay.set('/hop/twice', { kind: 'redirect', location: relay.url('/hop/0') });
      const viaRelay = [...direct.map((_, i) => relay.url(`/hop/${i}`)), relay.url('/hop/twice')];
      await writeFile(
        join(dir, 'feed.csv'),
        [
          [...COLUMNS, 'Images'].join(','),
          ...[direct, viaRelay].map((urls, i) =>
            [...COLUMNS.map((c) => String(row(i + 1)[c] ?? '')), `"${urls.join(',')}"`].join(','),
          ),
        ].join('\n') + '\n',
      );
      const hostBefore = host.total();
      const report = await sync({ feed: feedConfig({ media: { allowInternal: ['127.0.0.3'] } }) });

      expect(report.outcome).toBe('ok');
      expect(report.counts.created).toBe(2);
      expect([inner.total(), host.total() - hostBefore]).toEqual([0, 0]);
      expect(relay.total()).toBe(viaRelay.length + 1);
      expect(await s3.keys()).toEqual([]);
      expect(report.media).toMatchObject({ downloaded: 0, failed: direct.length + viaRelay.length });
      for (const f of report.media!.failures)
        expect(f.reason, f.url).toMatch(/^refused: .* is an? \S+ address, not a public one/);
      expect(JSON.stringify(report)).not.toContain('internal only');
      expect(await imagesOf('MLS0001')).toBeUndefined();
    } finally {
      await Promise.all([inner.close(), relay.close()]);
    }
  });
});
