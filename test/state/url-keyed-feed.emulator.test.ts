// A feed keyed by URL (Urls of 55+ characters) whose state is kept in the state file: its photos,
// its grace marks and its sold windows kept across runs, its state exported and imported whole by
// `feedsync state export|import`. Slots of 64+ characters fell out of their namespace's walk under
// lmdb's default key encoding (long-keys.test.ts): the no-change rerun deleted the bucket's photos
// while the listings still showed them, a row that left twice was deleted at once past graceHours,
// a sold window never ended, and a feed of a 14+-character name downloaded every photo every run.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { createFileStore, type FileStore } from '../../src/state/file-store.js';
import { syncFeed, type SyncTestHooks } from '../../src/sync/index.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { flaggedRecord } from '../helpers/flagged-reso.js';
import { mirrorMediaConfig, useMirrorServers } from '../helpers/mirror-servers.js';
import { fakeImage, type PhotoHost } from '../helpers/photo-host.js';
import { startResoServer } from '../helpers/reso-server.js';
import type { TestS3 } from '../helpers/s3-server.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, csv, row, type Row } from '../sync/helpers/feed.js';

const SN = 'SN-URLS';
const PUBLIC = 'https://cdn.photos.test/media';
/** a listing's page: 76 characters */
const urlOf = (i: number) =>
  `https://homes.example.com/listings/texas/austin/78701/home-number-${String(i).padStart(4, '0')}`;

const servers = useMirrorServers();
let te: TestEmulator;
let s3: TestS3;
let host: PhotoHost;
let dir: string;
let store: FileStore;

beforeEach(async () => {
  ({ te, s3, host } = servers());
  await te.reset();
  await s3.clear();
  host.seen.length = 0;
  dir = await mkdtemp(join(tmpdir(), 'feedsync-url-keyed-'));
  store = await createFileStore(join(dir, '.feedsync', 'state.lmdb'));
  return async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
});

type Listing = Row & { Images?: string };
const listing = (i: number, photos: string[] = []): Listing => ({
  ...row(i, { Url: urlOf(i) }),
  Images: photos.map((p) => host.url(p)).join(','),
});

async function writeFeed(listings: Listing[]): Promise<void> {
  await writeFile(join(dir, 'feed.csv'), csv(listings, [...COLUMNS, 'Images']));
}

function csvFeed(patch: Record<string, unknown> = {}): FeedConfig {
  return FeedConfig.parse({
    name: 'austin-url-keyed-homes', // 22 characters: its media namespaces' slots are 64+ characters, photo sources too
    chatbot: SN,
    keyBy: 'URL',
    source: { kind: 'csv', path: 'feed.csv' },
    mapping: { fields: Object.fromEntries([...COLUMNS, 'Images'].map((c) => [c, c])) },
    deletes: { maxFraction: 1 },
    media: { allowInternal: ['127.0.0.1'] },
    ...patch,
  });
}

function sync(feed: FeedConfig, hooks: SyncTestHooks = {}) {
  const apiConfig = ApiConfig.parse({ baseUrl: te.url, secretKey: 'x', sessionKey: 'y', concurrency: 4, pageSize: 50 });
  return syncFeed(
    feed,
    {
      api: te.client(),
      store,
      configFeeds: [feed],
      logger: silentLogger,
      baseDir: dir,
      apiConfig,
      media: mirrorMediaConfig(s3, PUBLIC),
    },
    {},
    hooks,
  );
}

const imagesByUrl = async () => new Map((await te.listings(SN)).map((l) => [l.Url, l.Images]));

describe('a URL-keyed feed with its state in the state file', () => {
  it.each([
    ['homes', "its listings' uses fell out of the walk: every photo deleted past media.graceHours"],
    [
      'austin-url-keyed-homes',
      'its photo sources fell out of the walk too: a changed listing downloaded its photos again',
    ],
  ])(
    'keeps its photos (feed %s; %s): reruns download nothing the bucket has and delete nothing a listing shows; its state export round-trips through import',
    async (name) => {
      const feed = csvFeed({ name });
      for (const p of ['a', 'b', 'c', 'd']) host.set(`/p/${p}`, { kind: 'image', body: fakeImage('jpeg', p) });
      const listings = [listing(1, ['/p/a', '/p/b']), listing(2, ['/p/c']), listing(3, ['/p/d', '/p/a'])];
      await writeFeed(listings);
      const t0 = Date.parse('2026-05-01T00:00:00Z');
      const at = (hours: number) => () => new Date(t0 + hours * 3_600_000);
      const first = await sync(feed, { now: at(0) });
      expect(first.outcome, first.message).toBe('ok');
      expect(first.media).toMatchObject({ downloaded: 4, failed: 0 });
      const shown = await imagesByUrl();
      const objects = [...(await s3.objects()).keys()].sort();
      expect(objects).toHaveLength(4);

      // no change, within and past media.graceHours (72), then a changed price
      for (const [hours, change] of [
        [1, false],
        [100, false],
        [101, true],
      ] as const) {
        if (change) await writeFeed(listings.map((l, i) => (i === 1 ? { ...l, SalePrice: 999_000 } : l)));
        const fetched = host.total();
        const rerun = await sync(feed, { now: at(hours) });
        expect(rerun.outcome, rerun.message).toBe('ok');
        expect(rerun.counts).toMatchObject({ created: 0, updated: change ? 1 : 0, deleted: 0 });
        expect(rerun.media).toMatchObject({ downloaded: 0, deleted: 0, failed: 0 });
        expect(host.total()).toBe(fetched);
        expect([...(await s3.objects()).keys()].sort()).toEqual(objects);
        expect(await imagesByUrl()).toEqual(shown);
      }

      // the state as a document, and that document into another state file: the same document again
      await store.close();
      const config = join(dir, 'feedsync.yaml');
      await writeFile(
        config,
        'api: { baseUrl: embedded, secretKey: dev-secret-key, sessionKey: dev-session-key }\nchatbots: [{ serialNumber: SN-F }]\n',
      );
      const exported = await feedsync(['state', 'export', join(dir, 'state.json'), '--config', config]);
      expect(exported.code, exported.stderr).toBe(0);
      const doc = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as Record<string, Record<string, string>>;
      expect(Object.keys(doc[`fp:${name}`] ?? {}).sort()).toEqual([urlOf(1), urlOf(2), urlOf(3)]);
      const uses = Object.entries(doc).find(([ns]) => ns.startsWith(`media-use:${name}:`))?.[1];
      expect(Object.keys(uses ?? {}).sort()).toEqual([urlOf(1), urlOf(2), urlOf(3)]);
      const other = join(dir, 'other');
      await mkdir(other);
      await writeFile(join(other, 'feedsync.yaml'), await readFile(config, 'utf8'));
      const imported = await feedsync([
        'state',
        'import',
        join(dir, 'state.json'),
        '--config',
        join(other, 'feedsync.yaml'),
      ]);
      expect(imported.code, imported.stderr).toBe(0);
      const again = await feedsync(['state', 'export', '--config', join(other, 'feedsync.yaml')]);
      expect(JSON.parse(again.stdout)).toEqual(doc);
      store = await createFileStore(join(dir, '.feedsync', 'state.lmdb'));
    },
    120_000,
  );

  it('keeps its grace marks: a row that leaves, comes back and leaves again waits out graceHours from its second leaving', async () => {
    const feed = csvFeed({ deletes: { graceHours: 12, maxFraction: 0.5 } });
    const t0 = Date.parse('2026-05-01T00:00:00Z');
    const at = (hours: number) => () => new Date(t0 + hours * 3_600_000);
    const four = [1, 2, 3, 4].map((i) => listing(i));
    await writeFeed(four);
    await sync(feed, { now: at(0) });
    await writeFeed(four.slice(0, 3));
    expect((await sync(feed, { now: at(0) })).counts).toMatchObject({ deleted: 0, waitingGrace: 1 });
    expect([...(await store.getAll('missing:austin-url-keyed-homes')).keys()]).toEqual([urlOf(4)]);
    await writeFeed(four);
    await sync(feed, { now: at(1) });
    expect((await store.getAll('missing:austin-url-keyed-homes')).size).toBe(0);
    await writeFeed(four.slice(0, 3));
    const left = await sync(feed, { now: at(13) });
    expect(left.counts).toMatchObject({ deleted: 0, waitingGrace: 1 });
    expect((await te.listings(SN)).map((l) => l.Url).sort()).toEqual([1, 2, 3, 4].map(urlOf));
    const due = await sync(feed, { now: at(26) });
    expect(due.counts).toMatchObject({ deleted: 1, waitingGrace: 0 });
  });

  it('keeps its sold windows: a Closed listing is shown until CloseDate + soldDays, then removed', async () => {
    const records = [flaggedRecord(1), flaggedRecord(2, { StandardStatus: 'Closed', CloseDate: '2025-03-01' })];
    const reso = await startResoServer({ records });
    try {
      const feed = FeedConfig.parse({
        name: 'mls',
        chatbot: SN,
        keyBy: 'URL',
        source: { kind: 'reso', url: reso.url, incremental: true, maxPageSize: 50, retries: 0 },
        mapping: {
          preset: 'reso',
          fields: { Url: { template: 'https://broker.example.com/listings/central-texas/austin/{ListingId}' } },
        },
        deletes: { maxFraction: 0.25 },
        display: { soldDays: 30 },
      });
      const at = (iso: string) => () => new Date(iso);
      expect((await sync(feed, { now: at('2025-03-10T12:00:00Z') })).counts.created).toBe(2);
      expect((await sync(feed, { now: at('2025-03-30T12:00:00Z') })).counts.deleted).toBe(0);
      const past = await sync(feed, { now: at('2025-04-01T00:00:00Z') });
      expect(past.outcome, past.message).toBe('ok');
      expect(past.deletedByReason).toEqual({ 'rule:sold-window': 1 });
      expect((await te.listings(SN)).map((l) => l.MLSNumber)).toEqual(['FL-01']);
    } finally {
      await reso.close();
    }
  });
});
