// The media mirror's pure parts: what a photo is by its first bytes, a photo's source identity, the
// headers of photo downloads (the mlsgrid profile's User-Agent), and where its figures show up
// (run history counts, metrics, the status page).
import { describe, expect, it } from 'vitest';
import { credentialsFor, mediaCredentials } from '../../src/feeds/media-headers.js';
import { FeedSource } from '../../src/feeds/config-schema.js';
import { imageTypeOf } from '../../src/media/image-type.js';
import { photoSources } from '../../src/media/photo-sources.js';
import { mediaCounts, type MediaReport } from '../../src/media/report.js';
import { createMetrics } from '../../src/server/metrics.js';
import type { Queues } from '../../src/queue/index.js';
import { renderStatus } from '../../src/server/status/status-page.js';
import { fakeImage } from '../helpers/photo-host.js';
import { maskSecrets, registerSecretsIn } from '../../src/secrets.js';
import { Config } from '../../src/config/schema.js';

describe('imageTypeOf', () => {
  it('knows JPEG, PNG, GIF, WebP and AVIF by their first bytes', () => {
    expect(imageTypeOf(fakeImage('jpeg', 'x'))?.contentType).toBe('image/jpeg');
    expect(imageTypeOf(fakeImage('png', 'x'))?.ext).toBe('png');
    expect(imageTypeOf(fakeImage('gif', 'x'))?.ext).toBe('gif');
    expect(imageTypeOf(fakeImage('webp', 'x'))?.ext).toBe('webp');
    expect(imageTypeOf(fakeImage('avif', 'x'))?.ext).toBe('avif');
    expect(imageTypeOf(Buffer.from('GIF87a....', 'latin1'))?.ext).toBe('gif');
  });

  it('refuses what only looks like one', () => {
    expect(imageTypeOf(Buffer.from('<!doctype html><html>sign in</html>'))).toBeUndefined();
    expect(imageTypeOf(Buffer.alloc(0))).toBeUndefined();
    expect(imageTypeOf(Buffer.from([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined(); // PNG cut short
    expect(imageTypeOf(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'))).toBeUndefined(); // a WAV
    const mp4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom\0\0\0\0isommp41', 'latin1')]);
    expect(imageTypeOf(mp4)).toBeUndefined();
    // an AVIF brand past the ftyp box's end does not count
    const short = Buffer.concat([Buffer.from([0, 0, 0, 0x10]), Buffer.from('ftypmif1\0\0\0\0avif', 'latin1')]);
    expect(imageTypeOf(short)).toBeUndefined();
  });
});

describe('photoSources', () => {
  const media = (url: string, key: string, modified: string) => ({
    MediaURL: url,
    MediaKey: key,
    MediaModificationTimestamp: modified,
    MediaCategory: 'Photo',
  });

  it('is the media record where the record names one: a re-signed URL is the same photo, a new timestamp a new one', () => {
    const a = photoSources(['https://m.test/1?sig=A'], {
      Media: [media('https://m.test/1?sig=A', 'K1', '2026-01-01T00:00:00Z')],
    });
    const resigned = photoSources(['https://m.test/1?sig=B'], {
      Media: [media('https://m.test/1?sig=B', 'K1', '2026-01-01T00:00:00Z')],
    });
    const replaced = photoSources(['https://m.test/1?sig=B'], {
      Media: [media('https://m.test/1?sig=B', 'K1', '2026-02-01T00:00:00Z')],
    });
    expect(resigned[0]!.id).toBe(a[0]!.id);
    expect(replaced[0]!.id).not.toBe(a[0]!.id);
    expect(resigned[0]!.url).toBe('https://m.test/1?sig=B');
  });

  it("is the URL otherwise, in the listing's order", () => {
    const s = photoSources(['https://p.test/b.jpg', 'https://p.test/a.jpg'], { Photos: 'x' });
    expect(s.map((p) => p.url)).toEqual(['https://p.test/b.jpg', 'https://p.test/a.jpg']);
    expect(photoSources(['https://p.test/a.jpg'], undefined)[0]!.id).toBe(s[1]!.id);
    expect(photoSources(undefined, undefined)).toEqual([]);
  });
});

describe('mediaCredentials', () => {
  const source = (extra: Record<string, unknown>) =>
    FeedSource.parse({ kind: 'reso', url: 'https://api.mlsgrid.test/v2', bearerToken: 'tok-123', ...extra });
  const sent = (url: string, extra: Record<string, unknown>) =>
    credentialsFor(new URL(url), mediaCredentials(source(extra)));
  const mlsgrid = { vendor: 'mlsgrid', originatingSystem: 'actris' };

  it("mlsgrid: the access token is the User-Agent, over https to the profile's media host only", () => {
    expect(sent('https://media.mlsgrid.com/token=abc/1.jpg', mlsgrid)).toEqual({ 'user-agent': 'tok-123' });
    expect(sent('https://MEDIA.MLSGRID.COM/1.jpg', mlsgrid)).toEqual({ 'user-agent': 'tok-123' });
    expect(sent('http://media.mlsgrid.com/1.jpg', mlsgrid)).toEqual({});
    expect(sent('https://media.mlsgrid.com.evil.test/1.jpg', mlsgrid)).toEqual({});
    expect(sent('https://photos.broker.test/1.jpg', mlsgrid)).toEqual({});
  });

  it('configured mediaHeaders win over the profile, whatever their case, and go to mediaHosts (https) besides the profile host', () => {
    const extra = {
      ...mlsgrid,
      mediaHeaders: { 'User-Agent': 'mine', 'X-Key': 'k' },
      mediaHosts: ['Photos.Broker.test'],
    };
    expect(sent('https://photos.broker.test/1.jpg', extra)).toEqual({ 'user-agent': 'mine', 'x-key': 'k' });
    expect(sent('https://media.mlsgrid.com/1.jpg', extra)).toEqual({ 'user-agent': 'mine', 'x-key': 'k' });
    expect(sent('http://photos.broker.test/1.jpg', extra)).toEqual({});
    expect(sent('https://other.test/1.jpg', extra)).toEqual({});
    expect(mediaCredentials(source({ vendor: 'bridge' })).headers).toEqual({});
    expect(mediaCredentials(source({})).hosts.size).toBe(0);
  });
});

describe('photo figures', () => {
  const media: MediaReport = {
    downloaded: 3,
    reused: 5,
    failed: 1,
    bytes: 1234,
    deleted: 2,
    waitingGrace: 0,
    failures: [],
    failuresOmitted: 0,
  };

  it('are counted per feed in the metrics', async () => {
    const metrics = createMetrics({} as Queues, { defaultMetrics: false });
    metrics.onRun({
      job: 'listing-sync',
      report: { outcome: 'ok', feed: 'f1', counts: { created: 1 }, media } as never,
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain('feedsync_photos_total{feed="f1",outcome="downloaded"} 3');
    expect(text).toContain('feedsync_photos_total{feed="f1",outcome="failed"} 1');
    expect(text).toContain('feedsync_photo_bytes_total{feed="f1"} 1234');
    expect(text).toContain('feedsync_photo_objects_deleted_total{feed="f1"} 2');
  });

  it("show on the status page beside the last run's counts", () => {
    const last = {
      runId: 'r1',
      feed: 'f1',
      chatbot: 'SN',
      dryRun: false,
      startedAt: '2026-11-25T08:00:00Z',
      finishedAt: '2026-11-25T08:01:00Z',
      durationMs: 60_000,
      outcome: 'ok',
      summary: 's',
      counts: { created: 1, ...mediaCounts(media) },
      recorded: 0,
      dropped: 0,
    };
    const html = renderStatus({
      at: '2026-11-25T09:00:00Z',
      staleHours: 36,
      feeds: [{ feed: 'f1', lane: 'f1', chatbot: 'SN', runs: [last], last, stale: false, state: 'idle', alerts: [] }],
    });
    expect(html).toContain('photos 3 downloaded / 5 reused / 1 failed');
  });
});

describe('media credentials', () => {
  it('are registered as secrets when the config is: both bucket keys and every mediaHeaders value', () => {
    const config = Config.parse({
      api: { baseUrl: 'embedded', secretKey: 'sk-1', sessionKey: 'ss-1' },
      media: {
        mirror: {
          region: 'auto',
          bucket: 'b',
          accessKeyId: 'AKIAMASKME0000000001',
          secretAccessKey: 'mask-me-secret-0001',
          publicBaseUrl: 'https://cdn.test',
        },
      },
      feeds: [
        {
          name: 'f',
          chatbot: 'SN',
          source: {
            kind: 'csv',
            path: 'f.csv',
            mediaHeaders: { 'X-Photo-Key': 'mask-me-header-0001' },
            mediaHosts: ['photos.test'],
          },
        },
      ],
    });
    registerSecretsIn(config);
    const text = maskSecrets('AKIAMASKME0000000001 mask-me-secret-0001 mask-me-header-0001');
    expect(text).toBe('[REDACTED] [REDACTED] [REDACTED]');
  });
});
