// `feedsync sync` with media.mirror as a user runs it (a child process, the config's credentials from
// ${VAR}s): the bucket's keys and the photo header's token never appear in what it prints (--json,
// the table, logs, a storage failure's message), nor in the state file; the photo header goes over
// https to the host source.mediaHosts names (a photo host with a test certificate the child trusts
// through NODE_EXTRA_CA_CERTS) and to no other URL of the feed: not that host over plain http, not
// the same server named by another name, not a host a redirect leads to.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { fakeImage, startPhotoHost, TEST_CA, type PhotoHost } from '../helpers/photo-host.js';
import { startS3Server, type TestS3 } from '../helpers/s3-server.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, row } from '../sync/helpers/feed.js';

const MEDIA_TOKEN = 'media-token-7c1f0e9d2b';
let te: TestEmulator;
let s3: TestS3;
let host: PhotoHost;
/** plain http, allowed as an internal host: the header must never reach it */
let bare: PhotoHost;
let dir: string;

beforeAll(async () => {
  [te, s3, host] = await Promise.all([
    startTestEmulator(),
    startS3Server({ accessKeyId: 'AKIACLISECRETID00042', secretAccessKey: 'cli-secret-access-key-f00d' }),
    startPhotoHost({ tls: true, name: 'localhost' }),
  ]);
  bare = await startPhotoHost({ address: '127.0.0.2' });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-media-cli-'));
  host.set('/c/1.jpg', { kind: 'image', body: fakeImage('jpeg', 'c1') });
  host.set('/c/2.jpg', { kind: 'image', body: fakeImage('png', 'c2') });
  host.set('/c/away', { kind: 'redirect', location: bare.url('/b/3.jpg') });
  bare.set('/b/3.jpg', { kind: 'image', body: fakeImage('gif', 'b3') });
  bare.set('/b/4.jpg', { kind: 'image', body: fakeImage('webp', 'b4') });
  const port = new URL(host.origin).port;
  const photos = [host.url('/c/1.jpg'), `https://127.0.0.1:${port}/c/2.jpg`, host.url('/c/away'), bare.url('/b/4.jpg')];
  const cells = COLUMNS.map((c) => String(row(1)[c] ?? ''));
  await writeFile(
    join(dir, 'homes.csv'),
    `${[...COLUMNS, 'Images'].join(',')}\n${[...cells, `"${photos.join(',')}"`].join(',')}\n`,
  );
});
afterAll(async () => {
  await Promise.all([te.close(), s3.close(), host.close(), bare.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(endpoint: string): Promise<string> {
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      'api:',
      `  baseUrl: ${te.url}`,
      `  secretKey: ${TEST_SECRET_KEY}`,
      `  sessionKey: ${TEST_SESSION_KEY}`,
      'media:',
      '  mirror:',
      `    endpoint: ${endpoint}`,
      '    region: us-east-1',
      `    bucket: ${s3.bucket}`,
      '    accessKeyId: ${TEST_S3_KEY_ID}',
      '    secretAccessKey: ${TEST_S3_SECRET}',
      '    forcePathStyle: true',
      '    publicBaseUrl: https://cdn.homes.test',
      'feeds:',
      '  - name: homes',
      '    chatbot: SN-CLI-MEDIA',
      '    source: { kind: csv, path: homes.csv, mediaHeaders: { User-Agent: "${TEST_MEDIA_TOKEN}" }, mediaHosts: [localhost] }',
      // the test's photo hosts are on loopback addresses: allowed by name and by address
      '    media: { allowInternal: [localhost, 127.0.0.1, 127.0.0.2] }',
      '    mapping:',
      '      fields:',
      ...[...COLUMNS, 'Images'].map((c) => `        ${c}: ${c}`),
    ].join('\n'),
  );
  return config;
}

const env = () => ({
  TEST_S3_KEY_ID: s3.accessKeyId,
  TEST_S3_SECRET: s3.secretAccessKey,
  TEST_MEDIA_TOKEN: MEDIA_TOKEN,
  LOG_LEVEL: 'debug',
  NODE_EXTRA_CA_CERTS: TEST_CA,
});
const secrets = () => [s3.accessKeyId, s3.secretAccessKey, MEDIA_TOKEN];

describe('feedsync sync with media.mirror', () => {
  // three child processes (two runs and a config check) on a shared machine
  it('prints no credential, whether the storage works or not', { timeout: 90_000 }, async () => {
    // storage that cannot be reached first: its failure is reported, masked
    let config = await writeConfig('http://127.0.0.1:9');
    const down = await feedsync(['sync', '--config', config, '--json'], env());
    expect(down.code).toBe(0);
    const downReport = JSON.parse(down.stdout).reports[0];
    expect(downReport.media.storageError).toContain('127.0.0.1:9');
    for (const s of secrets()) expect(down.stdout + down.stderr).not.toContain(s);

    config = await writeConfig(s3.endpoint);
    const run = await feedsync(['sync', '--config', config], env());
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('photos: 4 downloaded');
    for (const s of secrets()) expect(run.stdout + run.stderr).not.toContain(s);
    expect(await s3.keys()).toHaveLength(4);
    const agents = (h: PhotoHost) =>
      [...new Set(h.seen.map((r) => `${r.path} ${r.headers['user-agent'] === MEDIA_TOKEN ? 'token' : 'bare'}`))].sort();
    // the named host over https: the header; the same server as https://127.0.0.1, the redirect's target and the http host: none
    expect(agents(host)).toEqual(['/c/1.jpg token', '/c/2.jpg bare', '/c/away token']);
    expect(agents(bare)).toEqual(['/b/3.jpg bare', '/b/4.jpg bare']);
    expect(JSON.stringify(bare.seen)).not.toContain(MEDIA_TOKEN);
    expect((await te.listings('SN-CLI-MEDIA'))[0]?.Images?.[0]).toMatch(
      /^https:\/\/cdn\.homes\.test\/homes\/[0-9a-f]{64}\.jpg$/,
    );

    const check = await feedsync(['config', 'check', '--config', config], env());
    for (const s of secrets()) expect(check.stdout + check.stderr).not.toContain(s);
    const state = await feedsync(['state', 'export', '--config', config], env());
    expect(Object.keys(JSON.parse(state.stdout))).toContain('fp:homes');
    for (const s of secrets()) expect(state.stdout + state.stderr).not.toContain(s);
  });
});
