// `feedsync sync` with media.mirror as a user runs it (a child process, the config's credentials from
// ${VAR}s): the bucket's keys and the photo header's token never appear in what it prints (--json,
// the table, logs, a storage failure's message), nor in the state file.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { fakeImage, startPhotoHost, type PhotoHost } from '../helpers/photo-host.js';
import { startS3Server, type TestS3 } from '../helpers/s3-server.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, row } from '../sync/helpers/feed.js';

const MEDIA_TOKEN = 'media-token-7c1f0e9d2b';
let te: TestEmulator;
let s3: TestS3;
let host: PhotoHost;
let dir: string;

beforeAll(async () => {
  [te, s3, host] = await Promise.all([
    startTestEmulator(),
    startS3Server({ accessKeyId: 'AKIACLISECRETID00042', secretAccessKey: 'cli-secret-access-key-f00d' }),
    startPhotoHost(),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'feedsync-media-cli-'));
  host.requireUserAgent = MEDIA_TOKEN;
  host.set('/c/1.jpg', { kind: 'image', body: fakeImage('jpeg', 'c1') });
  const cells = COLUMNS.map((c) => String(row(1)[c] ?? ''));
  await writeFile(join(dir, 'homes.csv'), `${[...COLUMNS, 'Images'].join(',')}\n${[...cells, host.url('/c/1.jpg')].join(',')}\n`);
});
afterAll(async () => {
  await Promise.all([te.close(), s3.close(), host.close()]);
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
      '    source: { kind: csv, path: homes.csv, mediaHeaders: { User-Agent: "${TEST_MEDIA_TOKEN}" } }',
      '    mapping:',
      '      fields:',
      ...[...COLUMNS, 'Images'].map((c) => `        ${c}: ${c}`),
    ].join('\n'),
  );
  return config;
}

const env = () => ({ TEST_S3_KEY_ID: s3.accessKeyId, TEST_S3_SECRET: s3.secretAccessKey, TEST_MEDIA_TOKEN: MEDIA_TOKEN, LOG_LEVEL: 'debug' });
const secrets = () => [s3.accessKeyId, s3.secretAccessKey, MEDIA_TOKEN];

describe('feedsync sync with media.mirror', () => {
  it('prints no credential, whether the storage works or not', async () => {
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
    expect(run.stderr).toContain('photos: 1 downloaded');
    for (const s of secrets()) expect(run.stdout + run.stderr).not.toContain(s);
    expect(await s3.keys()).toHaveLength(1);
    expect((await te.listings('SN-CLI-MEDIA'))[0]?.Images?.[0]).toMatch(/^https:\/\/cdn\.homes\.test\/homes\/[0-9a-f]{64}\.jpg$/);

    const check = await feedsync(['config', 'check', '--config', config], env());
    for (const s of secrets()) expect(check.stdout + check.stderr).not.toContain(s);
    const state = await feedsync(['state', 'export', '--config', config], env());
    expect(Object.keys(JSON.parse(state.stdout))).toContain('fp:homes');
    for (const s of secrets()) expect(state.stdout + state.stderr).not.toContain(s);
  });
});
