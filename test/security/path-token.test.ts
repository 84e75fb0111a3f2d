// A token in a feed URL's path (https://feeds.example.com/export/<token>/listings.csv), put there by a
// `${VAR}` of the config, is a secret: `feedsync sync` against a local feed that fails (404) and one
// that answers prints it nowhere — stdout (the --json report), stderr (the text report, debug logs,
// the error), the stored run history — and `feed preview` neither. The variable's name says nothing
// secret (FEED_EXPORT_ID): what makes it one is where it lands, after the URL's origin.
// Nor does Redis keep it: a RESO feed's `feed drift` and sync leave no key or hash field that holds
// it (the drift check's entry was keyed by the source's URL, readable by anyone who can list keys).
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { startHostile, type HostileServer } from '../helpers/hostile-server.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { keyedResoRecords, resoFeedYaml } from '../sync/helpers/reso-records.js';

const TOKEN = 'x7Kp2vQ9exportpath';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `test-path-token-${randomUUID()}`;

let te: TestEmulator;
let feeds: HostileServer;
let reso: ResoServer;
let dir: string;

function config(feedUrl: string, feed = csvFeed(feedUrl)): string {
  return [
    'api:',
    `  baseUrl: ${te.url}`,
    `  secretKey: ${TEST_SECRET_KEY}`,
    `  sessionKey: ${TEST_SESSION_KEY}`,
    '  retries: 1',
    'redis:',
    `  url: ${REDIS_URL}`,
    `  prefix: ${prefix}`,
    'feeds:',
    ...feed,
  ].join('\n');
}

const csvFeed = (feedUrl: string) => [
  '  - name: broker',
  '    chatbot: SN-A',
  '    source:',
  '      kind: csv',
  `      url: "${feedUrl}"`,
  '      retries: 0',
  '    mapping:',
  '      fields:',
  ...COLUMNS.map((c) => `        ${c}: ${c}`),
];

/** Every key under the test's prefix, with the fields of those that are hashes. */
async function keysAndFields(redis: Redis): Promise<string[]> {
  const out: string[] = [];
  for (const key of await redis.keys(`${prefix}:*`)) {
    out.push(key);
    if ((await redis.type(key)) === 'hash') out.push(...(await redis.hkeys(key)).map((f) => `${key} ${f}`));
  }
  return out;
}

beforeAll(async () => {
  te = await startTestEmulator();
  const body = csv(rows(3));
  feeds = await startHostile((req, res) => {
    if (req.url === `/export/${TOKEN}/listings.csv`) {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end(body);
      return;
    }
    // a 404 page that names the path it was asked for, as many servers' do
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end(`no export at ${req.url}`);
  });
  reso = await startResoServer({ records: keyedResoRecords(5, 27) });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-path-token-'));
  await writeFile(
    join(dir, 'reso.yaml'),
    config('', resoFeedYaml('SN-R', [`url: "${reso.origin}/export/\${FEED_EXPORT_ID}/odata"`])),
  );
  await writeFile(join(dir, 'ok.yaml'), config(`${feeds.url}export/\${FEED_EXPORT_ID}/listings.csv`));
  await writeFile(join(dir, 'missing.yaml'), config(`${feeds.url}export/\${FEED_EXPORT_ID}/gone.csv`));
}, 30_000);

afterAll(async () => {
  await te?.close();
  await feeds?.close();
  await reso?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const run = (args: string[]) => feedsync(args, { LOG_LEVEL: 'debug', FEED_EXPORT_ID: TOKEN });

describe('a token in a feed URL path from ${VAR}', () => {
  it('is sent to the feed and printed nowhere by sync (404 and 200), feed preview or runs', async () => {
    const outputs: Array<{ what: string; text: string }> = [];
    const keep = (what: string, r: { stdout: string; stderr: string }) =>
      outputs.push({ what, text: r.stdout + r.stderr });

    const ok = await run(['sync', '--config', join(dir, 'ok.yaml'), '--json']);
    keep('sync --json (200)', ok);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).reports[0].outcome).toBe('ok');
    keep('sync (200)', await run(['sync', '--config', join(dir, 'ok.yaml')]));

    const missing = await run(['sync', '--config', join(dir, 'missing.yaml'), '--json']);
    keep('sync --json (404)', missing);
    expect(missing.code).not.toBe(0);
    const missingText = await run(['sync', '--config', join(dir, 'missing.yaml')]);
    keep('sync (404)', missingText);
    // the error still names the place: the feed's host and the path around the token
    expect(missingText.stderr).toMatch(/HTTP 404/);
    expect(missingText.stderr).toContain(`${feeds.origin}/export/[REDACTED]/gone.csv`);

    keep(
      'feed preview',
      await run(['feed', 'preview', '--config', join(dir, 'ok.yaml'), '--feed', 'broker', '--json']),
    );
    keep('runs --json', await run(['runs', '--config', join(dir, 'ok.yaml'), '--json']));

    // the feed server did get the token: the test plants a real one
    expect(feeds.received.some((r) => r.url === `/export/${TOKEN}/listings.csv`)).toBe(true);
    for (const { what, text } of outputs)
      expect({ what, leaked: text.includes(TOKEN) }).toEqual({ what, leaked: false });

    const redis = new Redis(REDIS_URL);
    try {
      const reports = await redis.keys(`${prefix}:*run*`);
      for (const key of reports) {
        const type = await redis.type(key);
        const dump =
          type === 'string'
            ? ((await redis.get(key)) ?? '')
            : type === 'list'
              ? (await redis.lrange(key, 0, -1)).join('\n')
              : type === 'hash'
                ? JSON.stringify(await redis.hgetall(key))
                : '';
        expect({ key, leaked: dump.includes(TOKEN) }).toEqual({ key, leaked: false });
      }
    } finally {
      await redis.quit();
    }
  }, 120_000);
});

describe('a token in a RESO service root path from ${VAR}', () => {
  it('is in no Redis key or hash field after feed drift and sync, and feed drift prints it nowhere', async () => {
    const drift = await run(['feed', 'drift', '--config', join(dir, 'reso.yaml'), '--feed', 'mls']);
    expect(drift.code, drift.stderr).toBe(0);
    expect(drift.stdout + drift.stderr).not.toContain(TOKEN);
    const sync = await run(['sync', '--config', join(dir, 'reso.yaml')]);
    expect(sync.code, sync.stderr).toBe(0);
    // the server was read through the token
    expect(reso.metadataRequests).toBeGreaterThan(0);
    expect(reso.requests.some((r) => r.url.startsWith(`/export/${TOKEN}/odata/Property`))).toBe(true);

    const redis = new Redis(REDIS_URL);
    try {
      const names = await keysAndFields(redis);
      // the drift check kept its read (the state's drift hash has an entry)
      expect(names.some((n) => n.startsWith(`${prefix}:state:drift `))).toBe(true);
      expect(names.filter((n) => n.includes(TOKEN))).toEqual([]);
    } finally {
      await redis.quit();
    }
  }, 120_000);
});
