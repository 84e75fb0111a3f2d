// Nothing secret is printed or stored. Distinctive secrets are planted in every place config can
// hold one — a 3-character API key, the session key, a feed's bearer token, a header under an
// unusual name (X-Api-Auth), URL userinfo and an ?access_token= query value — then sync, dry run,
// failures (a 401 and a 503 whose bodies echo the request headers), config check, a worker with
// enqueue --wait and runs --json all run as a user runs them; every output, and every Redis key and
// value under the test's prefix, is searched for each secret.
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { echoHeaders, startHostile, type HostileServer } from '../helpers/hostile-server.js';
import { spawnWorker, type WorkerProcess } from '../queue/worker-process.js';
import { feedsync } from '../settings/run-cli.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const SECRETS = {
  apiKey: 'Q7z', // shorter than 4 characters: masked all the same
  session: 'sess-PLANT-7c1d2',
  bearer: 'brr-PLANT-5e9a1',
  header: 'hdr-PLANT-3b2f8',
  user: 'usr-PLANT-11',
  password: 'pwd-PLANT-4a6c',
  query: 'tok-PLANT-8d0e3',
};
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `test-secrets-${randomUUID()}`;

let te: TestEmulator;
let feeds: HostileServer;
let echo: HostileServer;
let dir: string;
const outputs: Array<{ what: string; text: string }> = [];

function config(apiUrl: string, feedBase: string): string {
  const fields = COLUMNS.map((c) => `        ${c}: ${c}`);
  const u = new URL(feedBase);
  return [
    'api:',
    `  baseUrl: ${apiUrl}`,
    `  secretKey: "${SECRETS.apiKey}"`,
    `  sessionKey: ${SECRETS.session}`,
    '  retries: 1',
    'redis:',
    `  url: ${REDIS_URL}`,
    `  prefix: ${prefix}`,
    'feeds:',
    '  - name: tokened',
    '    chatbot: SN-A',
    '    source:',
    '      kind: csv',
    `      url: "${feedBase}a.csv?access_token=${SECRETS.query}&page=1"`,
    `      bearerToken: ${SECRETS.bearer}`,
    `      headers: { X-Api-Auth: ${SECRETS.header} }`,
    '      retries: 0',
    '    mapping:',
    '      fields:',
    ...fields,
    '  - name: userinfo',
    '    chatbot: SN-B',
    '    source:',
    '      kind: csv',
    `      url: "http://${SECRETS.user}:${SECRETS.password}@${u.host}/b.csv"`,
    '      retries: 0',
    '    mapping:',
    '      fields:',
    ...fields,
  ].join('\n');
}

async function cli(what: string, args: string[]) {
  const r = await feedsync(args, { LOG_LEVEL: 'debug' });
  outputs.push({ what, text: r.stdout + r.stderr });
  return r;
}

beforeAll(async () => {
  te = await startTestEmulator({ secretKey: SECRETS.apiKey, sessionKey: SECRETS.session });
  const body = csv(rows(3));
  feeds = await startHostile((req, res) => {
    // the feed server answers only with the credentials; a 503 that echoes them otherwise
    if (req.url?.startsWith('/fail')) return echoHeaders(req, res, 503);
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end(body);
  });
  echo = await startHostile((req, res) => echoHeaders(req, res, req.url?.includes('RealEstateList') ? 401 : 503));
  dir = await mkdtemp(join(tmpdir(), 'feedsync-secrets-'));
  await writeFile(join(dir, 'ok.yaml'), config(te.url, feeds.url));
  await writeFile(join(dir, 'api-fails.yaml'), config(echo.url, feeds.url));
  await writeFile(join(dir, 'feed-fails.yaml'), config(te.url, `${feeds.url}fail/`));
}, 30_000);

afterAll(async () => {
  await te?.close();
  await feeds?.close();
  await echo?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

function leaks(text: string): string[] {
  return Object.entries(SECRETS)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => k);
}

describe('secrets never leave in any output or in Redis', () => {
  it('the feed servers did receive the credentials (the test plants real ones)', async () => {
    const r = await cli('sync --json', ['sync', '--config', join(dir, 'ok.yaml'), '--json']);
    expect(r.code).toBe(0);
    const got = feeds.received.find((x) => x.url.startsWith('/a.csv'));
    expect(got?.headers.authorization).toBe(`Bearer ${SECRETS.bearer}`);
    expect(got?.headers['x-api-auth']).toBe(SECRETS.header);
    expect(got?.url).toContain(SECRETS.query);
    const b = feeds.received.find((x) => x.url === '/b.csv');
    expect(Buffer.from(String(b?.headers.authorization).replace('Basic ', ''), 'base64').toString()).toBe(
      `${SECRETS.user}:${SECRETS.password}`,
    );
  }, 60_000);

  it('runs dry run, failures, config check, worker + enqueue --wait + runs --json, then finds no secret anywhere', async () => {
    await cli('sync table', ['sync', '--config', join(dir, 'ok.yaml')]);
    await cli('dry run', ['sync', '--config', join(dir, 'ok.yaml'), '--dry-run']);
    await cli('dry run --json', ['sync', '--config', join(dir, 'ok.yaml'), '--dry-run', '--json']);
    const apiFail = await cli('api 401/503', ['sync', '--config', join(dir, 'api-fails.yaml'), '--json']);
    expect(apiFail.code).not.toBe(0);
    expect(apiFail.stdout + apiFail.stderr).toMatch(/HTTP 401|HTTP 503/);
    // the echoed credentials did reach the output, masked
    expect(apiFail.stdout + apiFail.stderr).toMatch(/\[REDACTED\]/);
    const feedFail = await cli('feed 503', ['sync', '--config', join(dir, 'feed-fails.yaml')]);
    expect(feedFail.code).not.toBe(0);
    expect(feedFail.stderr).toMatch(/HTTP 503[^\n]*Bearer \[REDACTED\]/);
    expect(echo.received.length).toBeGreaterThan(0);
    await cli('config check', ['config', 'check', '--config', join(dir, 'ok.yaml')]);
    await cli('feed preview', ['feed', 'preview', '--config', join(dir, 'ok.yaml'), '--feed', 'tokened', '--json']);

    let worker: WorkerProcess | undefined;
    try {
      worker = await spawnWorker(join(dir, 'ok.yaml'));
      const waited = await cli('enqueue --wait', [
        'enqueue',
        'sync',
        '--config',
        join(dir, 'ok.yaml'),
        '--wait',
        '--json',
      ]);
      expect(waited.code).toBe(0);
      await cli('enqueue --wait (fails)', [
        'enqueue',
        'sync',
        '--config',
        join(dir, 'feed-fails.yaml'),
        '--wait',
        '--json',
      ]);
      const runs = await cli('runs --json', ['runs', '--config', join(dir, 'ok.yaml'), '--json']);
      expect(JSON.parse(runs.stdout).runs.length).toBeGreaterThan(2);
      const ui = await freshFetch(
        `http://127.0.0.1:${worker.port}/ui/api/queues?activeQueue=listing-sync&status=completed&page=1`,
      );
      outputs.push({ what: 'queue UI api', text: await ui.text() });
    } finally {
      if (worker) {
        await worker.kill('SIGTERM');
        outputs.push({ what: 'worker logs', text: worker.logs() });
      }
    }

    for (const { what, text } of outputs) expect({ what, leaks: leaks(text) }).toEqual({ what, leaks: [] });
    expect(outputs.map((o) => o.text).join('\n')).toContain('[REDACTED]');

    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(5);
      for (const key of keys) {
        expect({ key, leaks: leaks(key) }).toEqual({ key, leaks: [] });
        const dump = await dumpKey(redis, key);
        expect({ key, leaks: leaks(dump) }).toEqual({ key, leaks: [] });
      }
    } finally {
      await redis.quit();
    }
  }, 180_000);
});

async function dumpKey(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'string') return (await redis.getBuffer(key))?.toString('latin1') ?? '';
  if (type === 'list') return (await redis.lrangeBuffer(key, 0, -1)).map((b) => b.toString('latin1')).join('\n');
  if (type === 'hash')
    return (await redis.hgetallBuffer(key))
      ? Object.entries(await redis.hgetallBuffer(key))
          .map(([k, v]) => `${k}=${v.toString('latin1')}`)
          .join('\n')
      : '';
  if (type === 'set') return (await redis.smembersBuffer(key)).map((b) => b.toString('latin1')).join('\n');
  if (type === 'zset') return (await redis.zrange(key, 0, -1)).join('\n');
  if (type === 'stream') return JSON.stringify(await redis.xrange(key, '-', '+'));
  return '';
}
